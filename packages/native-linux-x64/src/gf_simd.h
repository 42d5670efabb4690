/* Kernel bodies compiled three times, for AVX-512F, AVX2+FMA and baseline x86-64; the dynamic loader picks one per
 * function from the CPU's flags when the library loads (GCC's target_clones: an ifunc over __builtin_cpu_supports). */
#ifndef GF_SIMD_H
#define GF_SIMD_H
#if defined(__x86_64__) && !defined(GF_NO_CLONES)
#define GF_CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define GF_CLONES
#endif

/* e^x in float32 for |x| ≤ 87 (relative error ≈ 2e-7): x = k·ln2 + r, |r| ≤ ln2/2, e^r by its degree-6 Taylor
 * polynomial, 2^k from the exponent bits. Branch-free, so that loops calling it vectorise. */
static inline float gf_exp(float x) {
  x = x < -87.0f ? -87.0f : (x > 87.0f ? 87.0f : x);
  const float shift = 12582912.0f; /* 1.5·2^23: adding it rounds to an integer */
  float k = (x * 1.44269504f + shift) - shift;
  float r = x - k * 0.693145752f - k * 1.42860677e-6f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666667e-1f + r * (4.16666667e-2f + r * (8.33333333e-3f +
                                                                                         r * 1.38888889e-3f)))));
  union { float f; int i; } s = { .i = ((int)k + 127) << 23 };
  return p * s.f;
}
#endif

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* σ(x) = 1/(1 + e^−x) (gf_exp clamps its argument, so σ saturates to 0 or 1 without overflow). */
static inline float gf_sigmoid(float x) { return 1.0f / (1.0f + gf_exp(-x)); }

GF_CLONES static void gate_rows(const float *h, const float *g, const float *z, const float *b, float *m,
                                float *alpha, long r0, long r1, int d) {
  for (long row = r0; row < r1; row++) {
    const long o = row * d;
#pragma omp simd
    for (int k = 0; k < d; k++) {
      const float a = gf_sigmoid(z[o + k] + b[k]);
      alpha[o + k] = a;
      m[o + k] = g[o + k] + a * (h[o + k] - g[o + k]);
    }
  }
}

GF_CLONES static void gate_grad_range(const float *dm, const float *h, const float *g, const float *alpha, float *dh,
                                      float *dg, float *dz, long i0, long i1) {
#pragma omp simd
  for (long i = i0; i < i1; i++) {
    const float a = alpha[i];
    dh[i] = dm[i] * a;
    dg[i] = dm[i] * (1.0f - a);
    dz[i] = dm[i] * (h[i] - g[i]) * a * (1.0f - a);
  }
}

struct gate_ctx {
  const float *dm, *h, *g, *z, *b, *alpha_in;
  float *m, *alpha, *dh, *dg, *dz;
  long n;
  int d;
};

static void gate_part(void *p, int part, int parts) {
  const struct gate_ctx *c = p;
  gate_rows(c->h, c->g, c->z, c->b, c->m, c->alpha, c->n * part / parts, c->n * (part + 1) / parts, c->d);
}

static void gate_grad_part(void *p, int part, int parts) {
  const struct gate_ctx *c = p;
  gate_grad_range(c->dm, c->h, c->g, c->alpha_in, c->dh, c->dg, c->dz, c->n * part / parts,
                  c->n * (part + 1) / parts);
}

void gf_blend_gate(const float *h, const float *g, const float *z, const float *b, float *m, float *alpha, int n,
                   int d) {
  struct gate_ctx c = { 0, h, g, z, b, 0, m, alpha, 0, 0, 0, n, d };
  gf_parallel(gate_part, &c, gf_parts((long)n * d, 8192));
}

void gf_blend_gate_grad(const float *dm, const float *h, const float *g, const float *alpha, float *dh, float *dg,
                        float *dz, long n) {
  struct gate_ctx c = { dm, h, g, 0, 0, alpha, 0, 0, dh, dg, dz, n, 0 };
  gf_parallel(gate_grad_part, &c, gf_parts(n, 8192));
}

#include <stdint.h>

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* lowbias32 (Wellons): a 32-bit integer hash with full avalanche: consecutive counters give independent bits. */
static inline uint32_t gf_hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

GF_CLONES static void mask_range(float *out, long i0, long i1, uint32_t seed, uint32_t threshold, float scale) {
#pragma omp simd
  for (long i = i0; i < i1; i++) {
    const uint32_t h = gf_hash32((uint32_t)i * 0x9e3779b9U + seed);
    out[i] = (h >> 8) < threshold ? scale : 0.0f;
  }
}

struct mask_ctx { float *out; long n; uint32_t seed, threshold; float scale; };

static void mask_part(void *p, int part, int parts) {
  const struct mask_ctx *c = p;
  mask_range(c->out, c->n * part / parts, c->n * (part + 1) / parts, c->seed, c->threshold, c->scale);
}

void gf_dropout_mask(float *out, long n, unsigned seed, unsigned threshold, float scale) {
  struct mask_ctx c = { out, n, seed, threshold, scale };
  gf_parallel(mask_part, &c, gf_parts(n, 32768));
}

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* erf(x), Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7): 1 − t·P(t)·exp(−x²), t = 1/(1 + 0.3275911·|x|). */
static inline float gf_erf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f +
                                                                                      t * 1.061405429f))));
  const float v = 1.0f - poly * gf_exp(-a * a);
  return x < 0.0f ? -v : v;
}

GF_CLONES static void gelu_range(const float *x, float *y, float *cdf, long i0, long i1) {
#pragma omp simd
  for (long i = i0; i < i1; i++) {
    const float c = 0.5f * (1.0f + gf_erf(x[i] * 0.70710678f));
    cdf[i] = c;
    y[i] = x[i] * c;
  }
}

GF_CLONES static void gelu_grad_range(const float *dy, const float *x, const float *cdf, float *dx, long i0, long i1) {
#pragma omp simd
  for (long i = i0; i < i1; i++) dx[i] = dy[i] * (cdf[i] + x[i] * 0.39894228f * gf_exp(-0.5f * x[i] * x[i]));
}

struct gelu_ctx { const float *dy, *x, *cdf_in; float *y, *cdf, *dx; long n; };

static void gelu_part(void *p, int part, int parts) {
  struct gelu_ctx *c = p;
  gelu_range(c->x, c->y, c->cdf, c->n * part / parts, c->n * (part + 1) / parts);
}

static void gelu_grad_part(void *p, int part, int parts) {
  struct gelu_ctx *c = p;
  gelu_grad_range(c->dy, c->x, c->cdf_in, c->dx, c->n * part / parts, c->n * (part + 1) / parts);
}

void gf_gelu(const float *x, float *y, float *cdf, long n) {
  struct gelu_ctx c = { 0, x, 0, y, cdf, 0, n };
  gf_parallel(gelu_part, &c, gf_parts(n, 8192));
}

void gf_gelu_grad(const float *dy, const float *x, const float *cdf, float *dx, long n) {
  struct gelu_ctx c = { dy, x, cdf, 0, 0, dx, n };
  gf_parallel(gelu_grad_part, &c, gf_parts(n, 8192));
}

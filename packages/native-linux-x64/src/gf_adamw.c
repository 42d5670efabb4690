#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

#define GF_MAX_PARTS 64

struct adamw_ctx {
  const float *theta, *g;
  float *m, *v, *out;
  long n;
  double b1, b2, step_size, inv_bc2, eps, keep, scale;
};

/* The update of elements [j0, j1) in float64, each store rounded to float32 (as the JS loop it replaces). */
GF_CLONES static void adamw_range(const struct adamw_ctx *c, long j0, long j1) {
  const double b1 = c->b1, b2 = c->b2, a1 = 1.0 - c->b1, a2 = 1.0 - c->b2;
  const double step = c->step_size, inv = c->inv_bc2, eps = c->eps, keep = c->keep, scale = c->scale;
  const float *theta = c->theta, *g = c->g;
  float *m = c->m, *v = c->v, *out = c->out;
#pragma omp simd
  for (long j = j0; j < j1; j++) {
    const double gj = (double)g[j] * scale;
    const double mj = b1 * m[j] + a1 * gj;
    const double vj = b2 * v[j] + a2 * gj * gj;
    m[j] = (float)mj;
    v[j] = (float)vj;
    out[j] = (float)(theta[j] * keep - step * mj / (__builtin_sqrt(vj * inv) + eps));
  }
}

static void adamw_part(void *p, int part, int parts) {
  const struct adamw_ctx *c = p;
  adamw_range(c, c->n * part / parts, c->n * (part + 1) / parts);
}

void gf_adamw(const float *theta, float *m, float *v, const float *g, float *out, long n, double b1, double b2,
              double step_size, double inv_bc2, double eps, double keep, double scale) {
  struct adamw_ctx c = { theta, g, m, v, out, n, b1, b2, step_size, inv_bc2, eps, keep, scale };
  gf_parallel(adamw_part, &c, gf_parts(n, 65536));
}

struct squares_ctx {
  const float *x;
  long n;
  double sums[GF_MAX_PARTS];
};

GF_CLONES static double squares_range(const float *x, long j0, long j1) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (long j = j0; j < j1; j++) s += (double)x[j] * x[j];
  return s;
}

static void squares_part(void *p, int part, int parts) {
  struct squares_ctx *c = p;
  c->sums[part] = squares_range(c->x, c->n * part / parts, c->n * (part + 1) / parts);
}

double gf_sum_squares(const float *x, long n) {
  struct squares_ctx c = { .x = x, .n = n };
  int parts = gf_parts(n, 65536);
  if (parts > GF_MAX_PARTS) parts = GF_MAX_PARTS;
  gf_parallel(squares_part, &c, parts);
  double s = 0.0;
  for (int k = 0; k < parts; k++) s += c.sums[k];
  return s;
}

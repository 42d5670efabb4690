#include <string.h>

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* Keys 0 … last − 1 of row `row` are allowed: j ≤ t0 + (row mod L) when causal, all n otherwise. */
static inline int allowed(int row, int l, int n, int causal, int t0) {
  if (!causal) return n;
  const int last = t0 + row % l + 1;
  return last < n ? (last < 0 ? 0 : last) : n;
}

GF_CLONES static void weights_rows(const float *s, float *a, int r0, int r1, int l, int n, float eps, int causal,
                                   int t0) {
  for (int row = r0; row < r1; row++) {
    const float *sr = s + (long)row * n;
    float *ar = a + (long)row * n;
    const int last = allowed(row, l, n, causal, t0);
    float total = eps;
#pragma omp simd reduction(+ : total)
    for (int j = 0; j < last; j++) {
      const float s2 = sr[j] * sr[j];
      const float e = s2 / (s2 + 1.0f);
      ar[j] = e;
      total += e;
    }
    const float inv = 1.0f / total;
#pragma omp simd
    for (int j = 0; j < last; j++) ar[j] *= inv;
    if (last < n) memset(ar + last, 0, sizeof(float) * (size_t)(n - last));
  }
}

GF_CLONES static void weights_grad_rows(const float *dy, const float *s, const float *a, float *ds, int r0, int r1,
                                        int l, int n, float eps, int causal, int t0) {
  for (int row = r0; row < r1; row++) {
    const long o = (long)row * n;
    const int last = allowed(row, l, n, causal, t0);
    float c = 0.0f, total = eps;
#pragma omp simd reduction(+ : c, total)
    for (int j = 0; j < last; j++) {
      const float s2 = s[o + j] * s[o + j];
      c += dy[o + j] * a[o + j];
      total += s2 / (s2 + 1.0f);
    }
    const float inv = 1.0f / total;
#pragma omp simd
    for (int j = 0; j < last; j++) {
      const float q = 1.0f + s[o + j] * s[o + j];
      ds[o + j] = (2.0f * s[o + j] / (q * q)) * (dy[o + j] - c) * inv;
    }
    if (last < n) memset(ds + o + last, 0, sizeof(float) * (size_t)(n - last));
  }
}

struct ea_ctx { const float *dy, *s, *a; float *out; int rows, l, n; float eps; int causal, t0; };

static void weights_part(void *p, int part, int parts) {
  struct ea_ctx *c = p;
  weights_rows(c->s, c->out, (int)((long)c->rows * part / parts), (int)((long)c->rows * (part + 1) / parts), c->l,
               c->n, c->eps, c->causal, c->t0);
}

static void weights_grad_part(void *p, int part, int parts) {
  struct ea_ctx *c = p;
  weights_grad_rows(c->dy, c->s, c->a, c->out, (int)((long)c->rows * part / parts),
                    (int)((long)c->rows * (part + 1) / parts), c->l, c->n, c->eps, c->causal, c->t0);
}

void gf_expressive_weights(const float *s, float *a, int rows, int l, int n, float eps, int causal, int t0) {
  struct ea_ctx c = { 0, s, 0, a, rows, l, n, eps, causal, t0 };
  gf_parallel(weights_part, &c, gf_parts((long)rows * n, 16384));
}

void gf_expressive_weights_grad(const float *dy, const float *s, const float *a, float *ds, int rows, int l, int n,
                                float eps, int causal, int t0) {
  struct ea_ctx c = { dy, s, a, ds, rows, l, n, eps, causal, t0 };
  gf_parallel(weights_grad_part, &c, gf_parts((long)rows * n, 16384));
}

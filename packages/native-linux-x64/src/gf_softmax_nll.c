#include <math.h>

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

struct nll_ctx {
  const float *x, *dy;
  const int *t;
  float *p, *nll, *dx;
  int n, v;
};

/* Rows [r0, r1): m = max x, e = exp(x − m), s = Σ e, p = e/s, nll = m + log s − x[t]. */
GF_CLONES static void nll_rows(const struct nll_ctx *c, int r0, int r1) {
  const int V = c->v;
  for (int n = r0; n < r1; n++) {
    const float *x = c->x + (long)n * V;
    float *p = c->p + (long)n * V;
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int k = 0; k < V; k++) m = x[k] > m ? x[k] : m;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int k = 0; k < V; k++) {
      const float e = gf_exp(x[k] - m);
      p[k] = e;
      s += e;
    }
    const float inv = 1.0f / s;
#pragma omp simd
    for (int k = 0; k < V; k++) p[k] *= inv;
    const int t = c->t[n];
    c->nll[n] = t >= 0 && t < V ? m + logf(s) - x[t] : NAN;
  }
}

static void nll_part(void *p, int part, int parts) {
  const struct nll_ctx *c = p;
  nll_rows(c, (int)((long)c->n * part / parts), (int)((long)c->n * (part + 1) / parts));
}

void gf_softmax_nll(const float *x, const int *targets, float *p, float *nll, int n, int v) {
  struct nll_ctx c = { .x = x, .t = targets, .p = p, .nll = nll, .n = n, .v = v };
  gf_parallel(nll_part, &c, gf_parts((long)n * v, 32768));
}

/* dx = (p − onehot(t))·dy/N for rows [r0, r1). */
GF_CLONES static void nll_grad_rows(const struct nll_ctx *c, int r0, int r1) {
  const int V = c->v;
  const float scale = c->dy[0] / (float)c->n;
  for (int n = r0; n < r1; n++) {
    const float *p = c->p + (long)n * V;
    float *dx = c->dx + (long)n * V;
#pragma omp simd
    for (int k = 0; k < V; k++) dx[k] = p[k] * scale;
    const int t = c->t[n];
    if (t >= 0 && t < V) dx[t] = (p[t] - 1.0f) * scale;
  }
}

static void nll_grad_part(void *p, int part, int parts) {
  const struct nll_ctx *c = p;
  nll_grad_rows(c, (int)((long)c->n * part / parts), (int)((long)c->n * (part + 1) / parts));
}

void gf_softmax_nll_grad(const float *p, const int *targets, const float *dy, float *dx, int n, int v) {
  struct nll_ctx c = { .p = (float *)p, .t = targets, .dy = dy, .dx = dx, .n = n, .v = v };
  gf_parallel(nll_grad_part, &c, gf_parts((long)n * v, 32768));
}

#include <stdlib.h>
#include <string.h>

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* μ, rstd, x̂ = (x − μ)·rstd, y = x̂·γ + β for rows [r0, r1). */
GF_CLONES static void forward_rows(const float *x, const float *gamma, const float *beta, float *y, float *xhat,
                                   float *rstd, int r0, int r1, int d, float eps) {
  for (int n = r0; n < r1; n++) {
    const float *xs = x + (long)n * d;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int k = 0; k < d; k++) sum += xs[k];
    const float mean = sum / d;
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (int k = 0; k < d; k++) sq += (xs[k] - mean) * (xs[k] - mean);
    const float r = 1.0f / __builtin_sqrtf(sq / d + eps);
    rstd[n] = r;
    float *ys = y + (long)n * d, *hs = xhat + (long)n * d;
#pragma omp simd
    for (int k = 0; k < d; k++) {
      const float h = (xs[k] - mean) * r;
      hs[k] = h;
      ys[k] = h * gamma[k] + beta[k];
    }
  }
}

struct forward_ctx { const float *x, *gamma, *beta; float *y, *xhat, *rstd; int n, d; float eps; };

static void forward_part(void *p, int part, int parts) {
  struct forward_ctx *c = p;
  forward_rows(c->x, c->gamma, c->beta, c->y, c->xhat, c->rstd, (int)((long)c->n * part / parts),
               (int)((long)c->n * (part + 1) / parts), c->d, c->eps);
}

void gf_layer_norm(const float *x, const float *gamma, const float *beta, float *y, float *xhat, float *rstd, int n,
                   int d, float eps) {
  struct forward_ctx c = { x, gamma, beta, y, xhat, rstd, n, d, eps };
  gf_parallel(forward_part, &c, gf_parts((long)n * d, 16384));
}

/* dx for rows [r0, r1), and this part's Σ dy⊙x̂ and Σ dy (float64, d each) into accG, accB. */
GF_CLONES static void backward_rows(const float *dy, const float *xhat, const float *rstd, const float *gamma,
                                    float *dx, double *accG, double *accB, int r0, int r1, int d) {
  for (int n = r0; n < r1; n++) {
    const float *e = dy + (long)n * d, *h = xhat + (long)n * d;
    float sg = 0.0f, sgx = 0.0f;
#pragma omp simd reduction(+ : sg, sgx)
    for (int k = 0; k < d; k++) {
      const float g = e[k] * gamma[k];
      sg += g;
      sgx += g * h[k];
    }
#pragma omp simd
    for (int k = 0; k < d; k++) {
      accG[k] += (double)e[k] * h[k];
      accB[k] += e[k];
    }
    const float meanG = sg / d, meanGx = sgx / d, r = rstd[n];
    float *o = dx + (long)n * d;
#pragma omp simd
    for (int k = 0; k < d; k++) o[k] = r * (e[k] * gamma[k] - meanG - h[k] * meanGx);
  }
}

struct backward_ctx { const float *dy, *xhat, *rstd, *gamma; float *dx; double *acc; int n, d; };

static void backward_part(void *p, int part, int parts) {
  struct backward_ctx *c = p;
  double *accG = c->acc + (long)2 * part * c->d;
  backward_rows(c->dy, c->xhat, c->rstd, c->gamma, c->dx, accG, accG + c->d, (int)((long)c->n * part / parts),
                (int)((long)c->n * (part + 1) / parts), c->d);
}

void gf_layer_norm_grad(const float *dy, const float *xhat, const float *rstd, const float *gamma, float *dx,
                        float *dgamma, float *dbeta, int n, int d) {
  int parts = gf_parts((long)n * d, 16384);
  double *acc = calloc((size_t)2 * parts * d, sizeof(double));
  if (acc == NULL) parts = 1, acc = calloc((size_t)2 * d, sizeof(double));
  if (acc == NULL) abort();
  struct backward_ctx c = { dy, xhat, rstd, gamma, dx, acc, n, d };
  gf_parallel(backward_part, &c, parts);
  for (int k = 0; k < d; k++) {
    double g = 0.0, b = 0.0;
    for (int p = 0; p < parts; p++) g += acc[(long)2 * p * d + k], b += acc[(long)(2 * p + 1) * d + k];
    dgamma[k] = (float)g;
    dbeta[k] = (float)b;
  }
  free(acc);
}

#include <stdlib.h>
#include <string.h>

#include "gf_pool.h"
#include "gf_simd.h"
#include "grassflow_native.h"

/* p_c = a_i b_j − a_j b_i over the pairs c = (i, j), i < j, in lexicographic order; returns ‖p‖². */
GF_CLONES static float plucker_row(const float *a, const float *b, float *p, int r) {
  float sq = 0.0f;
  int c = 0;
  for (int i = 0; i < r - 1; i++) {
    const float ai = a[i], bi = b[i];
    const int n = r - 1 - i;
    float *pc = p + c;
    const float *aj = a + i + 1, *bj = b + i + 1;
#pragma omp simd reduction(+ : sq)
    for (int k = 0; k < n; k++) {
      const float v = ai * bj[k] - aj[k] * bi;
      pc[k] = v;
      sq += v * v;
    }
    c += n;
  }
  return sq;
}

struct pair_ctx {
  const float *z, *dy;
  float *value, *phat, *nrm, *dp, *dz;
  int b, l, r, o;
  const int *offsets;
  float eps;
  int bidirectional;
};

/* A pass over rows r0 … r1 − 1 of the b·l rows (b, t). */
typedef void pair_rows_fn(const struct pair_ctx *x, long r0, long r1);

struct pair_job {
  const struct pair_ctx *x;
  pair_rows_fn *rows;
};

/* Part `part` of `parts` of a pass for gf_parallel: rows n·part/parts … n·(part + 1)/parts − 1 of the n = b·l. */
static void pair_part(void *p, int part, int parts) {
  const struct pair_job *j = p;
  const long n = (long)j->x->b * j->x->l;
  j->rows(j->x, n * part / parts, n * (part + 1) / parts);
}

/* `rows` over every row, on as many cores as `work` (multiply-adds) pays for. */
static void pair_pass(const struct pair_ctx *x, pair_rows_fn *rows, long work) {
  struct pair_job j = { .x = x, .rows = rows };
  gf_parallel(pair_part, &j, gf_parts(work, 16384));
}

/* Rows (b, t) of part: p̂ and nrm of every offset's pair (z_{t−Δ}, z_t) (0 and ε where t < Δ), and value[t] = Σ_o p̂. */
GF_CLONES static void pair_forward_rows(const struct pair_ctx *x, long r0, long r1) {
  const int L = x->l, r = x->r, O = x->o;
  const long C = (long)r * (r - 1) / 2;
  for (long row = r0; row < r1; row++) {
    const long bb = row / L;
    const int t = (int)(row % L);
    float *v = x->value + row * C;
    memset(v, 0, sizeof(float) * C);
    for (int o = 0; o < O; o++) {
      const int delta = x->offsets[o];
      const long at = (bb * O + o) * L + t; /* [B, O, L] index */
      float *ph = x->phat + at * C;
      if (t < delta) {
        memset(ph, 0, sizeof(float) * C);
        x->nrm[at] = __builtin_sqrtf(x->eps * x->eps);
        continue;
      }
      const float sq = plucker_row(x->z + (row - delta) * r, x->z + row * r, ph, r);
      const float nrm = __builtin_sqrtf(sq + x->eps * x->eps);
      x->nrm[at] = nrm;
      const float inv = 1.0f / nrm;
#pragma omp simd
      for (long c = 0; c < C; c++) {
        ph[c] *= inv;
        v[c] += ph[c];
      }
    }
  }
}

/* Bidirectional: value[t] += p̂_o[t + Δ_o] for t + Δ_o < L (after every p̂ exists). */
GF_CLONES static void pair_future_rows(const struct pair_ctx *x, long r0, long r1) {
  const int L = x->l, r = x->r, O = x->o;
  const long C = (long)r * (r - 1) / 2;
  for (long row = r0; row < r1; row++) {
    const long bb = row / L;
    const int t = (int)(row % L);
    float *v = x->value + row * C;
    for (int o = 0; o < O; o++) {
      const int delta = x->offsets[o];
      if (t + delta >= L) continue;
      const float *ph = x->phat + ((bb * O + o) * L + t + delta) * C;
#pragma omp simd
      for (long c = 0; c < C; c++) v[c] += ph[c];
    }
  }
}

void gf_pair_sum(const float *z, float *value, float *phat, float *nrm, int b, int l, int r, const int *offsets, int o,
                 float eps, int bidirectional) {
  struct pair_ctx x = { .z = z, .value = value, .phat = phat, .nrm = nrm, .b = b, .l = l, .r = r, .o = o,
                        .offsets = offsets, .eps = eps, .bidirectional = bidirectional };
  const long work = (long)b * l * o * r * (r - 1) / 2;
  pair_pass(&x, pair_forward_rows, work);
  if (bidirectional) pair_pass(&x, pair_future_rows, work);
}

/* dp = (g − p̂ (p̂·g)) / nrm for each stacked pair (b, o, t), g = dy[t] (+ dy[t − Δ] if bidirectional); 0 where t < Δ. */
GF_CLONES static void pair_dp_rows(const struct pair_ctx *x, long r0, long r1) {
  const int L = x->l, r = x->r, O = x->o;
  const long C = (long)r * (r - 1) / 2;
  for (long row = r0; row < r1; row++) {
    const long bb = row / L;
    const int t = (int)(row % L);
    const float *g = x->dy + row * C;
    for (int o = 0; o < O; o++) {
      const int delta = x->offsets[o];
      const long at = (bb * O + o) * L + t;
      float *d = x->dp + at * C;
      if (t < delta) {
        memset(d, 0, sizeof(float) * C);
        continue;
      }
      const float *ph = x->phat + at * C;
      const float *g2 = x->bidirectional ? x->dy + (row - delta) * C : NULL;
      float dot = 0.0f;
      if (g2 != NULL) {
#pragma omp simd reduction(+ : dot)
        for (long c = 0; c < C; c++) dot += ph[c] * (g[c] + g2[c]);
      } else {
#pragma omp simd reduction(+ : dot)
        for (long c = 0; c < C; c++) dot += ph[c] * g[c];
      }
      const float inv = 1.0f / x->nrm[at];
      if (g2 != NULL) {
#pragma omp simd
        for (long c = 0; c < C; c++) d[c] = (g[c] + g2[c] - ph[c] * dot) * inv;
      } else {
#pragma omp simd
        for (long c = 0; c < C; c++) d[c] = (g[c] - ph[c] * dot) * inv;
      }
    }
  }
}

/* dz[t] += Σ_c dp_c ∂p_c/∂b for the pair (a, b = z[t]) and ∂p_c/∂a for the pair (a = z[t], b): with p_c = a_i b_j −
 * a_j b_i, ∂/∂b_j = a_i, ∂/∂b_i = −a_j, ∂/∂a_i = b_j, ∂/∂a_j = −b_i. `sign` +1: dz is the b side (other = a), −1:
 * the a side (other = b; the same sums with the roles swapped and the sign flipped). */
GF_CLONES static void pair_dz_add(const float *dp, const float *other, float *dz, int r, float sign) {
  int c = 0;
  for (int i = 0; i < r - 1; i++) {
    const int n = r - 1 - i;
    const float oi = other[i] * sign;
    const float *dpc = dp + c;
    const float *oj = other + i + 1;
    float *dzj = dz + i + 1;
    float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
    for (int k = 0; k < n; k++) {
      dzj[k] += dpc[k] * oi;
      acc += dpc[k] * oj[k];
    }
    dz[i] -= acc * sign;
    c += n;
  }
}

GF_CLONES static void pair_dz_rows(const struct pair_ctx *x, long r0, long r1) {
  const int L = x->l, r = x->r, O = x->o;
  const long C = (long)r * (r - 1) / 2;
  for (long row = r0; row < r1; row++) {
    const long bb = row / L;
    const int t = (int)(row % L);
    float *dz = x->dz + row * r;
    memset(dz, 0, sizeof(float) * r);
    for (int o = 0; o < O; o++) {
      const int delta = x->offsets[o];
      if (t >= delta) /* z[t] is b of the pair at t: a = z[t − Δ] */
        pair_dz_add(x->dp + ((bb * O + o) * L + t) * C, x->z + (row - delta) * r, dz, r, 1.0f);
      if (t + delta < L) /* z[t] is a of the pair at t + Δ: b = z[t + Δ] */
        pair_dz_add(x->dp + ((bb * O + o) * L + t + delta) * C, x->z + (row + delta) * r, dz, r, -1.0f);
    }
  }
}

int gf_pair_sum_grad(const float *dy, const float *z, const float *phat, const float *nrm, float *dz, int b, int l,
                     int r, const int *offsets, int o, float eps, int bidirectional) {
  const long C = (long)r * (r - 1) / 2;
  float *dp = malloc(sizeof(float) * (size_t)b * o * l * C);
  if (dp == NULL) return -1;
  struct pair_ctx x = { .z = z, .dy = dy, .phat = (float *)phat, .nrm = (float *)nrm, .dp = dp, .dz = dz, .b = b,
                        .l = l, .r = r, .o = o, .offsets = offsets, .eps = eps, .bidirectional = bidirectional };
  const long work = (long)b * l * o * C;
  pair_pass(&x, pair_dp_rows, work);
  pair_pass(&x, pair_dz_rows, work);
  free(dp);
  return 0;
}

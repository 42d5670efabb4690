/* grassflow's native element-wise kernels: the fused kernels of @grassflow/gpu-layers' wasm backend, called through
 * koffi on float32 views of the wasm heap. Each runs on a small pthread pool (gf_pool.c) and is compiled for AVX-512F,
 * AVX2 and plain x86-64, chosen when the library loads (GCC's target_clones). Row-major, float32 in and out. */
#ifndef GRASSFLOW_NATIVE_H
#define GRASSFLOW_NATIVE_H

/* ABI version: the loader refuses a library whose version differs from the one it was written for. */
int gf_version(void);
/* The widest vector extension this CPU runs the kernels with: "avx512f", "avx2" or "scalar". */
const char *gf_isa(void);
/* Threads of the pool (the calling thread included); n < 1 means one per online core. Returns the count set. */
int gf_set_threads(int n);
int gf_get_threads(void);

/* LayerNorm over rows of x [N, d]: μ = mean(x), rstd = 1/sqrt(mean((x − μ)²) + ε), x̂ = (x − μ)·rstd,
 * y = x̂·γ + β. Writes y, x̂ [N, d] and rstd [N]. */
void gf_layer_norm(const float *x, const float *gamma, const float *beta, float *y, float *xhat, float *rstd, int n,
                   int d, float eps);
/* Its gradient: g = dy⊙γ, dx = rstd·(g − mean(g) − x̂·mean(g⊙x̂)) [N, d], dγ = Σ_n dy⊙x̂, dβ = Σ_n dy [d]. */
void gf_layer_norm_grad(const float *dy, const float *xhat, const float *rstd, const float *gamma, float *dx,
                        float *dgamma, float *dbeta, int n, int d);

/* Exact GELU: Φ(x) = (1 + erf(x/√2))/2, y = x·Φ(x) (erf by Abramowitz & Stegun 7.1.26, as tfjs's Erf). */
void gf_gelu(const float *x, float *y, float *cdf, long n);
/* dx = dy·(Φ(x) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π). */
void gf_gelu_grad(const float *dy, const float *x, const float *cdf, float *dx, long n);

/* Expressive attention's weights over scores s [rows, n] (rows = BH·L, query i = row mod L): e = s²/(1 + s²),
 * a = e/(Σ_j e + ε); with causal ≠ 0 keys j > t0 + i get 0. */
void gf_expressive_weights(const float *s, float *a, int rows, int l, int n, float eps, int causal, int t0);
/* Its gradient: ds = 2s/(1 + s²)² ⊙ (dy − Σ_j dy_j·a_j)/(Σ_j e + ε), 0 past the causal limit. */
void gf_expressive_weights_grad(const float *dy, const float *s, const float *a, float *ds, int rows, int l, int n,
                                float eps, int causal, int t0);

#endif

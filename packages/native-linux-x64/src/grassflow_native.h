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

/* The Grassmann mixer's Plücker sum over z [B, L, r] (C = r(r − 1)/2 pairs (i, j), i < j, lexicographic) for the O
 * offsets Δ_o: for each o and t ≥ Δ_o, p = z_{t−Δ,i} z_{t,j} − z_{t−Δ,j} z_{t,i}, nrm = sqrt(‖p‖² + ε²), p̂ = p/nrm
 * (p̂ = 0, nrm = ε where t < Δ_o); value[t] = Σ_o p̂_o[t] (bidirectional ≠ 0: + Σ_o p̂_o[t + Δ_o], t + Δ_o < L).
 * Writes value [B, L, C], p̂ [B, O, L, C] and nrm [B, O, L]. */
void gf_pair_sum(const float *z, float *value, float *phat, float *nrm, int b, int l, int r, const int *offsets, int o,
                 float eps, int bidirectional);
/* Its gradient dz [B, L, r] from dy = ∂/∂value [B, L, C]: per pair g = dy[t] (+ dy[t − Δ] if bidirectional),
 * dp = (g − p̂ (p̂·g))/nrm, then ∂p/∂z of both ends. Returns 0, or −1 when its scratch [B, O, L, C] is not allocated. */
int gf_pair_sum_grad(const float *dy, const float *z, const float *phat, const float *nrm, float *dz, int b, int l,
                     int r, const int *offsets, int o, float eps, int bidirectional);

/* AdamW over one parameter of n elements, in float64 with float32 stores: g' = g·scale, m ← β₁m + (1 − β₁)g',
 * v ← β₂v + (1 − β₂)g'², out = θ·keep − step_size·m/(sqrt(v·inv_bc2) + ε) (keep = 1 − ηλ where it decays, else 1;
 * step_size = η/(1 − β₁ᵗ), inv_bc2 = 1/(1 − β₂ᵗ)). m and v are updated in place; θ is only read. */
void gf_adamw(const float *theta, float *m, float *v, const float *g, float *out, long n, double b1, double b2,
              double step_size, double inv_bc2, double eps, double keep, double scale);
/* Σ x² over n elements, summed in float64 (the global gradient norm's square, a parameter at a time). */
double gf_sum_squares(const float *x, long n);

/* Softmax and NLL of rows x [N, V] with int32 targets t [N]: p = softmax(x) [N, V], nll_n = log Σ_v exp(x_nv) −
 * x_{n,t_n} [N] (NaN for a target outside [0, V)). */
void gf_softmax_nll(const float *x, const int *targets, float *p, float *nll, int n, int v);
/* The mean NLL's gradient: dx = (p − onehot(t))·dy[0]/N [N, V]. */
void gf_softmax_nll_grad(const float *p, const int *targets, const float *dy, float *dx, int n, int v);

/* An inverted-dropout mask of n entries: h_i = lowbias32(i·0x9e3779b9 + seed) (32-bit arithmetic), out[i] = scale where
 * h_i >> 8 < threshold (keep probability threshold/2^24), else 0. The same bits as gpu-layers' JS `dropoutMask`. */
void gf_dropout_mask(float *out, long n, unsigned seed, unsigned threshold, float scale);

/* The Grassmann mixer's blend gate on rows [N, d]: α = σ(z + b) (z = [h; g]·W_gate, b [d]), m = g + α⊙(h − g).
 * Writes m and α [N, d]. */
void gf_blend_gate(const float *h, const float *g, const float *z, const float *b, float *m, float *alpha, int n,
                   int d);
/* Its gradient from dm over n entries: dh = dm⊙α, dg = dm⊙(1 − α), dz = dm⊙(h − g)⊙α⊙(1 − α) (z's; summed over
 * rows, b's). */
void gf_blend_gate_grad(const float *dm, const float *h, const float *g, const float *alpha, float *dh, float *dg,
                        float *dz, long n);

#endif

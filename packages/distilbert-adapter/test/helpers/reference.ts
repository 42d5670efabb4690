// An independent DistilBERT forward in float64 JS loops (no tfjs), written from HF modeling_distilbert.py.
import type { RefWeight } from './tiny-model.js';

/** erf(x): Taylor series for |x| < 3, the continued fraction of erfc beyond (both accurate to ~1e-14). */
export function erf(x: number): number {
  const a = Math.abs(x);
  if (a < 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 80; n++) {
      term *= (-a * a) / n;
      sum += term / (2 * n + 1);
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  let k = a;
  for (let n = 80; n >= 1; n--) k = a + n / 2 / k;
  return Math.sign(x) * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / k);
}

const FLOAT32_MIN = -3.4028234663852886e38;

export interface RefConfig {
  dim: number;
  n_layers: number;
  n_heads: number;
  activation?: string;
}

/** y[n][o] = b[o] + Σ_i x[n][i]·W[o][i] with W in the nn.Linear layout [out, in]. */
function linear(x: Float64Array, rows: number, w: RefWeight, b: RefWeight): Float64Array {
  const [out, inp] = w.shape as [number, number];
  const y = new Float64Array(rows * out);
  for (let n = 0; n < rows; n++) {
    for (let o = 0; o < out; o++) {
      let s = b.data[o] as number;
      for (let i = 0; i < inp; i++) s += (x[n * inp + i] as number) * (w.data[o * inp + i] as number);
      y[n * out + o] = s;
    }
  }
  return y;
}

/** (x − mean)/sqrt(var + 1e-12)·γ + β per row, biased variance as torch.nn.LayerNorm. */
function layerNorm(x: Float64Array, rows: number, g: RefWeight, b: RefWeight): Float64Array {
  const d = g.shape[0] as number;
  const y = new Float64Array(x.length);
  for (let n = 0; n < rows; n++) {
    let mean = 0;
    for (let i = 0; i < d; i++) mean += x[n * d + i] as number;
    mean /= d;
    let v = 0;
    for (let i = 0; i < d; i++) v += ((x[n * d + i] as number) - mean) ** 2;
    v /= d;
    const r = 1 / Math.sqrt(v + 1e-12);
    for (let i = 0; i < d; i++)
      y[n * d + i] = ((x[n * d + i] as number) - mean) * r * (g.data[i] as number) + (b.data[i] as number);
  }
  return y;
}

/**
 * last_hidden_state [B, T, d] of one sequence batch: ids[b][t], mask[b][t] ∈ {0, 1}.
 * `positions` replaces the position table (for sinusoidal tests).
 */
export function referenceForward(
  weights: Map<string, RefWeight>,
  cfg: RefConfig,
  ids: number[][],
  mask: number[][],
  positions?: RefWeight,
): Float64Array {
  const W = (name: string): RefWeight => {
    const w = weights.get(name);
    if (w === undefined) throw new Error(`reference: no weight ${name}`);
    return w;
  };
  const B = ids.length;
  const T = (ids[0] as number[]).length;
  const d = cfg.dim;
  const H = cfg.n_heads;
  const dh = d / H;
  const out = new Float64Array(B * T * d);
  for (let b = 0; b < B; b++) {
    // embeddings
    let x: Float64Array = new Float64Array(T * d);
    const word = W('embeddings.word_embeddings.weight');
    const pos = positions ?? W('embeddings.position_embeddings.weight');
    for (let t = 0; t < T; t++) {
      const id = (ids[b] as number[])[t] as number;
      for (let i = 0; i < d; i++) x[t * d + i] = (word.data[id * d + i] as number) + (pos.data[t * d + i] as number);
    }
    x = layerNorm(x, T, W('embeddings.LayerNorm.weight'), W('embeddings.LayerNorm.bias'));
    for (let l = 0; l < cfg.n_layers; l++) {
      const p = `transformer.layer.${l}`;
      const q = linear(x, T, W(`${p}.attention.q_lin.weight`), W(`${p}.attention.q_lin.bias`));
      const k = linear(x, T, W(`${p}.attention.k_lin.weight`), W(`${p}.attention.k_lin.bias`));
      const v = linear(x, T, W(`${p}.attention.v_lin.weight`), W(`${p}.attention.v_lin.bias`));
      const ctx = new Float64Array(T * d);
      for (let h = 0; h < H; h++) {
        for (let i = 0; i < T; i++) {
          const scores = new Float64Array(T);
          for (let j = 0; j < T; j++) {
            let s = 0;
            for (let c = 0; c < dh; c++)
              s += ((q[i * d + h * dh + c] as number) / Math.sqrt(dh)) * (k[j * d + h * dh + c] as number);
            scores[j] = (mask[b] as number[])[j] === 0 ? FLOAT32_MIN : s; // masked_fill with finfo(float32).min
          }
          const max = Math.max(...scores);
          let z = 0;
          for (let j = 0; j < T; j++) z += Math.exp((scores[j] as number) - max);
          for (let j = 0; j < T; j++) {
            const a = Math.exp((scores[j] as number) - max) / z;
            for (let c = 0; c < dh; c++)
              ctx[i * d + h * dh + c] = (ctx[i * d + h * dh + c] as number) + a * (v[j * d + h * dh + c] as number);
          }
        }
      }
      const sa = linear(ctx, T, W(`${p}.attention.out_lin.weight`), W(`${p}.attention.out_lin.bias`));
      for (let i = 0; i < sa.length; i++) sa[i] = (sa[i] as number) + (x[i] as number);
      const h1 = layerNorm(sa, T, W(`${p}.sa_layer_norm.weight`), W(`${p}.sa_layer_norm.bias`));
      const f = linear(h1, T, W(`${p}.ffn.lin1.weight`), W(`${p}.ffn.lin1.bias`));
      for (let i = 0; i < f.length; i++) {
        const u = f[i] as number;
        f[i] = cfg.activation === 'relu' ? Math.max(0, u) : 0.5 * u * (1 + erf(u / Math.SQRT2));
      }
      const f2 = linear(f, T, W(`${p}.ffn.lin2.weight`), W(`${p}.ffn.lin2.bias`));
      for (let i = 0; i < f2.length; i++) f2[i] = (f2[i] as number) + (h1[i] as number);
      x = layerNorm(f2, T, W(`${p}.output_layer_norm.weight`), W(`${p}.output_layer_norm.bias`));
    }
    out.set(x, b * T * d);
  }
  return out;
}

/** max |a − b|. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

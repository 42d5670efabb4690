// Float64 views of a model's activations and weights for `inspect`, and the summary statistics it reports.
import * as tf from '@tensorflow/tfjs-core';
import { TiedEmbeddingLM, type LanguageModel, type ParamLayer } from '@grassflow/gpu-layers';

/** A row-major float64 matrix: entry (i, j) is data[i * cols + j]. Rows are positions t, columns features. */
export interface Mat {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** LayerNorm ε of every block (paper-notes §1, step 8). */
export const LN_EPS = 1e-5;

/** The model as inspect needs it: embeddings, blocks and weights in the open. */
export function inspectableModel(model: LanguageModel): TiedEmbeddingLM {
  if (!(model instanceof TiedEmbeddingLM)) {
    throw new TypeError(
      'inspect needs a GrassmannLM or TransformerLM from @grassflow/gpu-layers (embed, blocks, namedParams)',
    );
  }
  return model;
}

/** A [1, L, d] or [L, d] tensor as an L × d float64 matrix (read with `await data()`: dataSync throws on webgpu). */
export async function matOf(t: tf.Tensor): Promise<Mat> {
  const shape = t.shape;
  const cols = shape[shape.length - 1] as number;
  const data = Float64Array.from(await t.data());
  return { rows: data.length / cols, cols, data };
}

/** Row i of a matrix (a copy). */
export function row(m: Mat, i: number): Float64Array {
  return m.data.slice(i * m.cols, (i + 1) * m.cols);
}

/**
 * The input of every block for one sequence of ids (no dropout): x_0 = tok_emb[ids] + pos_emb[t],
 * x_{i+1} = Block_i(x_i), each L × d. Runs the model's own tfjs layers; only the results are float64.
 */
export async function blockInputs(model: TiedEmbeddingLM, ids: Int32Array): Promise<Mat[]> {
  const out: Mat[] = [];
  let x = tf.tidy(() => model.embed(tf.tensor2d(ids, [1, ids.length], 'int32'))); // [1, L, d]
  try {
    for (const block of model.blocks) {
      out.push(await matOf(x));
      const next = tf.tidy(() => block.apply(x, { training: false }) as tf.Tensor3D); // [1, L, d]
      x.dispose();
      x = next;
    }
  } finally {
    x.dispose();
  }
  return out;
}

/** A block's parameters by PyTorch name (relative to the block), in the internal layout (linear weights [in, out]). */
export async function blockWeights(block: ParamLayer): Promise<Map<string, Mat>> {
  const out = new Map<string, Mat>();
  for (const p of block.namedParams()) {
    const s = p.variable.shape;
    const data = Float64Array.from(await p.variable.data());
    out.set(p.name, s.length === 2 ? { rows: s[0], cols: s[1], data } : { rows: 1, cols: data.length, data });
  }
  return out;
}

/** A named weight of a block, or an error naming it. */
export function weight(weights: Map<string, Mat>, name: string): Mat {
  const w = weights.get(name);
  if (w === undefined)
    throw new Error(`inspect: the block has no parameter '${name}' (a checkpoint from another version of gpu-layers?)`);
  return w;
}

/** y = x · W + b for x [n, in], W [in, out] (internal layout), b [out]: [n, out]. */
export function affine(x: Mat, w: Mat, b: Mat): Mat {
  if (x.cols !== w.rows || b.cols !== w.cols)
    throw new RangeError(`affine: [${x.rows}, ${x.cols}] · [${w.rows}, ${w.cols}] + [${b.cols}]`);
  const out = new Float64Array(x.rows * w.cols);
  for (let i = 0; i < x.rows; i++) {
    const o = i * w.cols;
    for (let j = 0; j < w.cols; j++) out[o + j] = b.data[j] as number;
    for (let k = 0; k < x.cols; k++) {
      const xik = x.data[i * x.cols + k] as number;
      if (xik === 0) continue;
      const wk = k * w.cols;
      for (let j = 0; j < w.cols; j++) out[o + j] = (out[o + j] as number) + xik * (w.data[wk + j] as number);
    }
  }
  return { rows: x.rows, cols: w.cols, data: out };
}

/** LayerNorm of each row: γ ⊙ (x − mean) / sqrt(var + ε) + β, biased variance, ε = 1e-5. */
export function layerNormRows(x: Mat, gamma: Mat, beta: Mat, eps = LN_EPS): Mat {
  const d = x.cols;
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < x.rows; i++) {
    let mean = 0;
    for (let k = 0; k < d; k++) mean += x.data[i * d + k] as number;
    mean /= d;
    let v = 0;
    for (let k = 0; k < d; k++) v += ((x.data[i * d + k] as number) - mean) ** 2;
    const inv = 1 / Math.sqrt(v / d + eps);
    for (let k = 0; k < d; k++)
      out[i * d + k] =
        ((x.data[i * d + k] as number) - mean) * inv * (gamma.data[k] as number) + (beta.data[k] as number);
  }
  return { rows: x.rows, cols: d, data: out };
}

/** The mixer's input: h itself for post-LN blocks, LN1(h) for pre-LN blocks. */
export function mixerInput(h: Mat, weights: Map<string, Mat>, norm: 'post' | 'pre'): Mat {
  return norm === 'post' ? h : layerNormRows(h, weight(weights, 'ln1.weight'), weight(weights, 'ln1.bias'));
}

/** Largest |a_i − b_i| between a float64 matrix and a tensor of the same size. */
export async function maxAbsDiff(a: Mat, b: tf.Tensor): Promise<number> {
  const v = await b.data();
  if (v.length !== a.data.length) throw new RangeError(`maxAbsDiff: ${a.data.length} vs ${v.length} values`);
  let m = 0;
  for (let i = 0; i < v.length; i++) m = Math.max(m, Math.abs((a.data[i] as number) - (v[i] as number)));
  return m;
}

/** Distribution summary of a sample: count, mean, standard deviation (population), min, quantiles, max. */
export interface Summary {
  count: number;
  mean: number | null;
  std: number | null;
  min: number | null;
  p05: number | null;
  p25: number | null;
  p50: number | null;
  p75: number | null;
  p95: number | null;
  max: number | null;
}

/** Quantile q of sorted values by linear interpolation between order statistics (numpy's default). */
function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return (sorted[lo] as number) + (pos - lo) * ((sorted[hi] as number) - (sorted[lo] as number));
}

/** Summary of the finite values (nulls and non-finite values are left out); all fields null for none. */
export function summarize(values: Iterable<number | null>): Summary {
  const xs: number[] = [];
  for (const v of values) if (v !== null && Number.isFinite(v)) xs.push(v);
  if (xs.length === 0)
    return {
      count: 0,
      mean: null,
      std: null,
      min: null,
      p05: null,
      p25: null,
      p50: null,
      p75: null,
      p95: null,
      max: null,
    };
  const sorted = Float64Array.from(xs).sort();
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= xs.length;
  let v = 0;
  for (const x of xs) v += (x - mean) ** 2;
  return {
    count: xs.length,
    mean,
    std: Math.sqrt(v / xs.length),
    min: sorted[0] as number,
    p05: quantile(sorted, 0.05),
    p25: quantile(sorted, 0.25),
    p50: quantile(sorted, 0.5),
    p75: quantile(sorted, 0.75),
    p95: quantile(sorted, 0.95),
    max: sorted[sorted.length - 1] as number,
  };
}

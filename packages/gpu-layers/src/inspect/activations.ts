// Float64 views of a model's activations and weights, for inspecting what its blocks compute (grassflow-lm inspect,
// the playground): every block's input along one sequence, the block's parameters, the mixer's input.
import * as tf from '@tensorflow/tfjs-core';
import { LanguageModelBase, type LanguageModel } from '../language-model/language-model.js';
import type { ParamLayer } from '../layers/param-layer.js';

/** A row-major float64 matrix: entry (i, j) is data[i * cols + j]. Rows are positions t, columns features. */
export interface Mat {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** LayerNorm ε of every block (paper-notes §1, step 8). */
export const LN_EPS = 1e-5;

/** The model as inspect needs it: embeddings, blocks and weights in the open. */
export function inspectableModel(model: LanguageModel): LanguageModelBase {
  if (!(model instanceof LanguageModelBase)) {
    throw new TypeError(
      'inspecting needs a GrassmannLM or TransformerLM from @grassflow/gpu-layers (embed, blocks, namedParams)',
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
export async function blockInputs(model: LanguageModelBase, ids: Int32Array): Promise<Mat[]> {
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

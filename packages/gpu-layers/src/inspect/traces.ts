// What a block's mixer computes along one sequence, by the model's own code (grassmannMixingTrace, attentionTrace),
// read into float64: the Grassmann mixing's z, p̂, g, α and h_mix, or each attention head's scores and weights.
import * as tf from '@tensorflow/tfjs-core';
import type { GrassmannBlock } from '../grassmann/block.js';
import { grassmannMixingTrace } from '../grassmann/mixing.js';
import type { TransformerBlock } from '../transformer/block.js';
import { attentionTrace } from '../transformer/attention.js';
import { matOf, type Mat } from './activations.js';

/** Everything the mixing layer computes for one sequence (the model's float32 values, as float64 matrices). */
export interface MixingTrace {
  /** z = u W_red + b_red, L × r. */
  z: Mat;
  /** p̂ = p / sqrt(‖p‖² + ε²) per offset (block.offsets order), each L × C(r, 2) (0 where t < Δ). */
  pHat: Mat[];
  /** g_t = W_plu mean_Δ p̂ + b_plu (0 where no pair exists), L × d. */
  g: Mat;
  /** α = σ(W_gate [u; g] + b_gate), L × d. */
  alpha: Mat;
  /** h_mix = α ⊙ u + (1 − α) ⊙ g, L × d. */
  hMix: Mat;
  /**
   * ‖(1 − α_t) ⊙ g_t‖ / (‖α_t ⊙ u_t‖ + ‖(1 − α_t) ⊙ g_t‖): how much of h_mix comes from the geometric path (0
   * where both are 0).
   */
  geometricShare: number[];
}

/**
 * Causal Grassmann mixing (paper-notes §1) of the mixer input u (L × d, see mixerInput) by the block's own
 * grassmannMixing (grassmannMixingTrace), read with `await data()` (dataSync throws on webgpu under Node).
 */
export async function traceMixing(block: GrassmannBlock, u: Mat): Promise<MixingTrace> {
  const L = u.rows;
  const d = u.cols;
  const { offsets, eps } = block;
  const input = tf.tensor3d(Float32Array.from(u.data), [1, L, d]); // [1, L, d]
  const t = grassmannMixingTrace(input, block.mixerWeights(), { offsets, eps, direction: 'causal' });
  let tr: { z: Mat; g: Mat; alpha: Mat; hMix: Mat; pHat: Mat[] };
  try {
    const [z, g, alpha, hMix, ...pHat] = await Promise.all([t.z, t.g, t.alpha, t.output, ...t.pHat].map(matOf));
    tr = { z: z as Mat, g: g as Mat, alpha: alpha as Mat, hMix: hMix as Mat, pHat };
  } finally {
    tf.dispose([input, t.output, t.z, t.g, t.alpha, ...t.pHat]);
  }
  const { g, alpha } = tr;
  const geometricShare = Array.from({ length: L }, (_, pos) => {
    let keep = 0;
    let geo = 0;
    for (let k = pos * d; k < (pos + 1) * d; k++) {
      const a = alpha.data[k] as number;
      keep += (a * (u.data[k] as number)) ** 2;
      geo += ((1 - a) * (g.data[k] as number)) ** 2;
    }
    const sum = Math.sqrt(keep) + Math.sqrt(geo);
    return sum === 0 ? 0 : Math.sqrt(geo) / sum;
  });
  return { ...tr, geometricShare };
}

/** Mean of the gate α_t over the d channels at each position t: the α heatmap's row of one layer. */
export function gatePerPosition(trace: Pick<MixingTrace, 'alpha'>): number[] {
  const { alpha } = trace;
  return Array.from({ length: alpha.rows }, (_, t) => {
    let s = 0;
    for (let k = 0; k < alpha.cols; k++) s += alpha.data[t * alpha.cols + k] as number;
    return s / alpha.cols;
  });
}

/** Attention weights of one head along one sequence (the model's float32 values as float64). */
export interface HeadTrace {
  /** a[i * L + j], 0 for j > i. */
  a: Float64Array;
  /** Scaled scores s[i * L + j] = q_i · k_j / sqrt(d_head). */
  s: Float64Array;
}

/**
 * The scores and weights of each head of the block's causal attention of u (L × d), by the model's own code
 * (attentionTrace: DPA a_i = softmax_{j ≤ i}(s_ij); EA e_ij = s_ij²/(1 + s_ij²) (j ≤ i), a_ij = e_ij/(Σ_j e_ij + ε)),
 * and `leak`: the largest weight on a future key (j > i), which causality makes 0.
 */
export async function traceAttention(block: TransformerBlock, u: Mat): Promise<{ heads: HeadTrace[]; leak: number }> {
  const L = u.rows;
  const H = block.nHeads;
  const input = tf.tensor3d(Float32Array.from(u.data), [1, L, u.cols]); // [1, L, d]
  const t = attentionTrace(input, block.mixerWeights(), { nHeads: H, kind: block.attention, eps: block.eps });
  let a: Float64Array;
  let s: Float64Array;
  try {
    a = Float64Array.from(await t.weights.data()); // [H, L, L]
    s = Float64Array.from(await t.scores.data()); // [H, L, L]
  } finally {
    tf.dispose([input, t.output, t.scores, t.weights]);
  }
  let leak = 0;
  const heads = Array.from({ length: H }, (_, h) => {
    const ah = a.slice(h * L * L, (h + 1) * L * L);
    for (let i = 0; i < L; i++)
      for (let j = i + 1; j < L; j++) leak = Math.max(leak, Math.abs(ah[i * L + j] as number));
    return { a: ah, s: s.slice(h * L * L, (h + 1) * L * L) };
  });
  return { heads, leak };
}

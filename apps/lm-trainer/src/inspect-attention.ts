// Attention inside a Transformer block, in float64 from its weights: entropy per head and the weight on antiparallel pairs.
import * as tf from '@tensorflow/tfjs-core';
import { causalAttention, type AttentionWeights, type TransformerBlock } from '@grassflow/gpu-layers';
import { affine, blockWeights, maxAbsDiff, mixerInput, summarize, weight, type Mat, type Summary } from './inspect-tensors.js';

/** Attention weights of one head along one sequence (float64). */
export interface HeadTrace {
  /** a[i * L + j], 0 for j > i. */
  a: Float64Array;
  /** Scaled scores s[i * L + j] = q_i · k_j / sqrt(d_head) (j ≤ i). */
  s: Float64Array;
}

/**
 * Causal attention weights from scaled scores s_ij = q_i·k_j / sqrt(d_head) (paper-notes §4):
 * DPA a_i = softmax_{j ≤ i}(s_ij); EA e_ij = s_ij²/(1 + s_ij²) (j ≤ i), a_ij = e_ij / (Σ_j e_ij + ε).
 */
export function attentionRows(s: Float64Array, L: number, kind: 'dpa' | 'ea', eps: number): Float64Array {
  const a = new Float64Array(L * L);
  for (let i = 0; i < L; i++) {
    let total = 0;
    if (kind === 'dpa') {
      let m = -Infinity;
      for (let j = 0; j <= i; j++) m = Math.max(m, s[i * L + j] as number);
      for (let j = 0; j <= i; j++) total += a[i * L + j] = Math.exp((s[i * L + j] as number) - m);
    } else {
      for (let j = 0; j <= i; j++) {
        const x2 = (s[i * L + j] as number) ** 2;
        total += a[i * L + j] = x2 / (1 + x2);
      }
      total += eps;
    }
    for (let j = 0; j <= i; j++) a[i * L + j] = (a[i * L + j] as number) / total;
  }
  return a;
}

/** The weights and output of multi-head causal attention of u (L × d), recomputed in float64. */
export function traceAttention(u: Mat, w: { wQkv: Mat; bQkv: Mat; wProj: Mat; bProj: Mat }, nHeads: number, kind: 'dpa' | 'ea', eps: number): { heads: HeadTrace[]; out: Mat } {
  const L = u.rows;
  const d = u.cols;
  const dh = d / nHeads;
  const qkv = affine(u, w.wQkv, w.bQkv); // [L, 3d]: q | k | v, head h at columns h·d_head …
  const at = (t: number, col: number) => qkv.data[t * 3 * d + col] as number;
  const merged: Mat = { rows: L, cols: d, data: new Float64Array(L * d) };
  const heads: HeadTrace[] = [];
  for (let h = 0; h < nHeads; h++) {
    const s = new Float64Array(L * L);
    for (let i = 0; i < L; i++) {
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let c = 0; c < dh; c++) dot += at(i, h * dh + c) * at(j, d + h * dh + c);
        s[i * L + j] = dot / Math.sqrt(dh);
      }
    }
    const a = attentionRows(s, L, kind, eps);
    for (let i = 0; i < L; i++) {
      for (let c = 0; c < dh; c++) {
        let y = 0;
        for (let j = 0; j <= i; j++) y += (a[i * L + j] as number) * at(j, 2 * d + h * dh + c);
        merged.data[i * d + h * dh + c] = y;
      }
    }
    heads.push({ a, s });
  }
  return { heads, out: affine(merged, w.wProj, w.bProj) };
}

/** What inspect reports for one attention head over all samples. */
export interface HeadReport {
  head: number;
  /** Entropy H_i = −Σ_j a_ij ln a_ij of each query row (nats). */
  entropy: Summary;
  /** H_i / ln(i + 1) for i ≥ 1: 1 = uniform over the causal window, 0 = one key. */
  normalizedEntropy: Summary;
  /** Σ a_ij over pairs with q_i·k_j < 0, divided by Σ a_ij over all causal pairs. */
  antiparallelWeight: number;
  /** Fraction of causal pairs (j ≤ i) with q_i·k_j < 0, for comparison. */
  antiparallelPairs: number;
}

/** What inspect reports for one Transformer block. */
export interface AttentionLayerReport {
  layer: number;
  kind: 'dpa' | 'ea';
  mixerInput: 'h' | 'LN1(h)';
  heads: HeadReport[];
  /** [sample][i]: row entropy (nats) averaged over the heads. */
  perPositionEntropy: number[][];
  /** [sample][i]: H_i / ln(i + 1) averaged over the heads (null at i = 0, where the window is one key). */
  perPositionNormalizedEntropy: Array<Array<number | null>>;
  /** Largest |attention output (float64, here) − causalAttention (float32, the model's own code)|. */
  check: { maxAbsDiff: number };
}

function rowEntropy(a: Float64Array, i: number, L: number): number {
  let hsum = 0;
  for (let j = 0; j <= i; j++) {
    const p = a[i * L + j] as number;
    if (p > 0) hsum -= p * Math.log(p);
  }
  return hsum;
}

/** Inspect Transformer block `layer` on the samples: `inputs[s]` is the block's input h (L × d) for sample s. */
export function inspectAttentionLayer(block: TransformerBlock, layer: number, inputs: readonly Mat[]): AttentionLayerReport {
  const weights = blockWeights(block);
  const w = { wQkv: weight(weights, 'mixer.qkv.weight'), bQkv: weight(weights, 'mixer.qkv.bias'), wProj: weight(weights, 'mixer.proj.weight'), bProj: weight(weights, 'mixer.proj.bias') };
  const p = new Map(block.namedParams().map((q) => [q.name, q.variable]));
  const wTf = { wQkv: p.get('mixer.qkv.weight'), bQkv: p.get('mixer.qkv.bias'), wProj: p.get('mixer.proj.weight'), bProj: p.get('mixer.proj.bias') } as unknown as AttentionWeights;
  const H = block.nHeads;
  const acc = Array.from({ length: H }, () => ({ entropy: [] as number[], norm: [] as number[], anti: 0, total: 0, antiPairs: 0, pairs: 0 }));
  const perPositionEntropy: number[][] = [];
  const perPositionNormalizedEntropy: Array<Array<number | null>> = [];
  let maxDiff = 0;
  for (const h of inputs) {
    const u = mixerInput(h, weights, block.norm);
    const L = u.rows;
    const tr = traceAttention(u, w, H, block.attention, block.eps);
    const ref = tf.tidy(() => causalAttention(tf.tensor3d(Float32Array.from(u.data), [1, L, u.cols]), wTf, { nHeads: H, kind: block.attention, eps: block.eps }));
    maxDiff = Math.max(maxDiff, maxAbsDiff(tr.out, ref));
    ref.dispose();
    const pos = new Array<number>(L).fill(0);
    tr.heads.forEach(({ a, s }, hd) => {
      const c = acc[hd] as (typeof acc)[number];
      for (let i = 0; i < L; i++) {
        const e = rowEntropy(a, i, L);
        c.entropy.push(e);
        if (i >= 1) c.norm.push(e / Math.log(i + 1));
        pos[i] = (pos[i] as number) + e / H;
        for (let j = 0; j <= i; j++) {
          const aij = a[i * L + j] as number;
          c.total += aij;
          c.pairs += 1;
          if ((s[i * L + j] as number) < 0) {
            c.anti += aij;
            c.antiPairs += 1;
          }
        }
      }
    });
    perPositionEntropy.push(pos);
    perPositionNormalizedEntropy.push(pos.map((e, i) => (i === 0 ? null : e / Math.log(i + 1))));
  }
  return {
    layer,
    kind: block.attention,
    mixerInput: block.norm === 'post' ? 'h' : 'LN1(h)',
    heads: acc.map((c, head) => ({
      head,
      entropy: summarize(c.entropy),
      normalizedEntropy: summarize(c.norm),
      antiparallelWeight: c.total === 0 ? 0 : c.anti / c.total,
      antiparallelPairs: c.pairs === 0 ? 0 : c.antiPairs / c.pairs,
    })),
    perPositionEntropy,
    perPositionNormalizedEntropy,
    check: { maxAbsDiff: maxDiff },
  };
}

// Attention inside a Transformer block, from the model's own attention: entropy per head and the weight on
// antiparallel pairs.
import type { TransformerBlock } from '@grassflow/gpu-layers';
import { traceAttention } from '@grassflow/gpu-layers/internals';
import { blockWeights, mixerInput, summarize, type Mat, type Summary } from './tensors.js';

export { traceAttention };

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
  /** Largest attention weight of the model's causalAttention on a future key (j > i): 0 when causal. */
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
export async function inspectAttentionLayer(
  block: TransformerBlock,
  layer: number,
  inputs: readonly Mat[],
): Promise<AttentionLayerReport> {
  const weights = await blockWeights(block);
  const H = block.nHeads;
  const acc = Array.from({ length: H }, () => ({
    entropy: [] as number[],
    norm: [] as number[],
    anti: 0,
    total: 0,
    antiPairs: 0,
    pairs: 0,
  }));
  const perPositionEntropy: number[][] = [];
  const perPositionNormalizedEntropy: Array<Array<number | null>> = [];
  let maxDiff = 0;
  for (const h of inputs) {
    const u = mixerInput(h, weights, block.norm);
    const L = u.rows;
    const tr = await traceAttention(block, u);
    maxDiff = Math.max(maxDiff, tr.leak);
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

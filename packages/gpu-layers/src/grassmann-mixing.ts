// Causal Grassmann mixing as a pure function of hidden states and weights (paper-notes §1).
import * as tf from '@tensorflow/tfjs-core';
import { pluckerDim } from './config.js';
import { matmul, matmulConst } from './ops.js';

/** Weights of one mixing layer, in the internal [in, out] layout. */
export interface GrassmannMixingWeights {
  /** W_redᵀ [d, r] */ wRed: tf.Tensor2D;
  /** b_red [r] */ bRed: tf.Tensor1D;
  /** W_pluᵀ [C(r,2), d] */ wPlu: tf.Tensor2D;
  /** b_plu [d] */ bPlu: tf.Tensor1D;
  /** W_gateᵀ [2d, d], input rows h then g */ wGate: tf.Tensor2D;
  /** b_gate [d] */ bGate: tf.Tensor1D;
}

export interface GrassmannMixingOptions {
  /** Offsets Δ ≥ 1 of this layer. */
  offsets: readonly number[];
  /** ε of p̂ = p / sqrt(‖p‖² + ε²). */
  eps: number;
  /** 'causal' pairs (z_{t−Δ}, z_t); 'bidirectional' also (z_t, z_{t+Δ}) — encoders only. */
  direction: 'causal' | 'bidirectional';
}

/**
 * Pairs (i, j), 0 ≤ i < j < r, in lexicographic order (0,1), (0,2), …, (r−2, r−1): the order of
 * the Plücker coordinates p_ij.
 */
export function pluckerPairs(r: number): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < r; i++) for (let j = i + 1; j < r; j++) pairs.push([i, j]);
  return pairs;
}

/** Selection matrix S = [S_i | S_j] ∈ {0,1}^{r × 2C}: (z·S)[c] = z_i and (z·S)[C + c] = z_j for pair c = (i, j). */
export function pluckerSelection(r: number): tf.Tensor2D {
  const C = pluckerDim(r);
  const s = new Float32Array(r * 2 * C);
  pluckerPairs(r).forEach(([i, j], c) => {
    s[i * 2 * C + c] = 1;
    s[j * 2 * C + C + c] = 1;
  });
  return tf.tensor2d(s, [r, 2 * C]);
}

/** Number of existing pairs at each position t < L: offsets with t − Δ ≥ 0 (and t + Δ < L if bidirectional). */
export function pairCounts(L: number, offsets: readonly number[], direction: 'causal' | 'bidirectional'): number[] {
  return Array.from({ length: L }, (_, t) =>
    offsets.reduce((n, delta) => n + (t - delta >= 0 ? 1 : 0) + (direction === 'bidirectional' && t + delta < L ? 1 : 0), 0),
  );
}

/** x[:, t − Δ] along axis 1 with zeros where t − Δ < 0: x [B, L, K] → [B, L, K]. */
function shiftFromPast(x: tf.Tensor3D, delta: number): tf.Tensor3D {
  const [B, L, K] = x.shape;
  const kept = tf.slice(x, [0, 0, 0], [B, L - delta, K]); // [B, L−Δ, K]
  return tf.pad(kept, [[0, 0], [delta, 0], [0, 0]]); // [B, L, K]
}

/** x[:, t + Δ] along axis 1 with zeros where t + Δ ≥ L: x [B, L, K] → [B, L, K]. */
function shiftFromFuture(x: tf.Tensor3D, delta: number): tf.Tensor3D {
  const [B, L, K] = x.shape;
  const kept = tf.slice(x, [0, delta, 0], [B, L - delta, K]); // [B, L−Δ, K]
  return tf.pad(kept, [[0, 0], [0, delta], [0, 0]]); // [B, L, K]
}

/** p̂ = p / sqrt(‖p‖² + ε²) over the last axis: finite, with p̂ = 0 exactly where p = 0. */
function normalisePlucker(p: tf.Tensor3D, eps: number): tf.Tensor3D {
  return tf.div(p, tf.sqrt(tf.add(tf.sum(tf.square(p), -1, true), eps * eps)));
}

/**
 * Causal Grassmann mixing of hidden states h [B, L, d] (paper-notes §1):
 *   z_t = W_red h_t + b_red;  p_ij = z_{t−Δ,i} z_{t,j} − z_{t−Δ,j} z_{t,i} (i < j, lexicographic);
 *   p̂ = p/sqrt(‖p‖² + ε²);  g_t = mean_{Δ: t−Δ ≥ 0} (W_plu p̂ + b_plu), 0 where no pair exists;
 *   α = σ(W_gate [h; g] + b_gate);  h_mix = α ⊙ h + (1 − α) ⊙ g.
 * Since W_plu is shared by the offsets, mean_Δ(W_plu p̂_Δ + b_plu) = W_plu mean_Δ(p̂_Δ) + b_plu:
 * one projection per layer whatever the number of offsets. The pair coordinates come from one
 * product z·S with a 0/1 selection matrix, and shifting commutes with it, so z_{t−Δ}·S is a shift of z·S.
 */
export function grassmannMixing(h: tf.Tensor3D, w: GrassmannMixingWeights, options: GrassmannMixingOptions): tf.Tensor3D {
  const [B, L, d] = h.shape;
  const r = w.wRed.shape[1];
  const C = pluckerDim(r);
  return tf.tidy(() => {
    const h2 = tf.reshape(h, [B * L, d]); // [B·L, d]
    const z = tf.add(matmul(h2, w.wRed), w.bRed); // [B·L, r]
    const zs = tf.reshape(matmulConst(z, pluckerSelection(r)), [B, L, 2 * C]) as tf.Tensor3D; // [B, L, 2C] = [z_i | z_j] per pair
    const zi = tf.slice(zs, [0, 0, 0], [B, L, C]); // [B, L, C]
    const zj = tf.slice(zs, [0, 0, C], [B, L, C]); // [B, L, C]

    const terms: tf.Tensor3D[] = [];
    for (const delta of options.offsets) {
      if (delta >= L) continue; // no position has a pair at this offset
      const past = shiftFromPast(zs, delta); // [B, L, 2C], zeros where t − Δ < 0
      const pi = tf.slice(past, [0, 0, 0], [B, L, C]); // z_{t−Δ,i}
      const pj = tf.slice(past, [0, 0, C], [B, L, C]); // z_{t−Δ,j}
      terms.push(normalisePlucker(tf.sub(tf.mul(pi, zj), tf.mul(pj, zi)) as tf.Tensor3D, options.eps)); // [B, L, C]
      if (options.direction === 'bidirectional') {
        const future = shiftFromFuture(zs, delta); // [B, L, 2C], zeros where t + Δ ≥ L
        const fi = tf.slice(future, [0, 0, 0], [B, L, C]); // z_{t+Δ,i}
        const fj = tf.slice(future, [0, 0, C], [B, L, C]); // z_{t+Δ,j}
        terms.push(normalisePlucker(tf.sub(tf.mul(zi, fj), tf.mul(zj, fi)) as tf.Tensor3D, options.eps)); // pair (z_t, z_{t+Δ})
      }
    }
    // Non-existent pairs contribute p = 0 → p̂ = 0, so a plain sum is the sum over existing pairs.
    const counts = pairCounts(L, options.offsets, options.direction);
    const invCount = tf.tensor3d(counts.map((n) => (n > 0 ? 1 / n : 0)), [1, L, 1]); // [1, L, 1]
    const hasPair = tf.tensor3d(counts.map((n) => (n > 0 ? 1 : 0)), [1, L, 1]); // [1, L, 1]
    let g: tf.Tensor3D;
    if (terms.length === 0) {
      g = tf.zeros([B, L, d]);
    } else {
      const pMean = tf.mul(terms.length === 1 ? (terms[0] as tf.Tensor3D) : tf.addN(terms), invCount); // [B, L, C]
      const proj = tf.reshape(matmul(tf.reshape(pMean, [B * L, C]), w.wPlu), [B, L, d]); // [B, L, d]
      g = tf.add(proj, tf.mul(tf.reshape(w.bPlu, [1, 1, d]), hasPair)); // [B, L, d], 0 where no pair
    }
    const hg = tf.concat([h2, tf.reshape(g, [B * L, d])], 1); // [B·L, 2d], order [h; g]
    const alpha = tf.reshape(tf.sigmoid(tf.add(matmul(hg, w.wGate), w.bGate)), [B, L, d]); // [B, L, d]
    return tf.add(g, tf.mul(alpha, tf.sub(h, g))); // α⊙h + (1−α)⊙g
  });
}

// Causal Grassmann mixing (paper-notes §1), for hidden states h [B, L, d]:
//
//   z_t  = W_red h_t + b_red                                  reduce       [B, L, r]
//   p_ij = z_{t−Δ,i} z_{t,j} − z_{t−Δ,j} z_{t,i},  i < j       Plücker      [B, L, C(r,2)] for each offset Δ
//   p̂    = p / sqrt(‖p‖² + ε²)                                normalise
//   g_t  = mean over Δ with t − Δ ≥ 0 of (W_plu p̂ + b_plu)     project      [B, L, d]; 0 where no pair exists
//   α    = σ(W_gate [h; g] + b_gate)                          gate
//   m    = α ⊙ h + (1 − α) ⊙ g                                fuse         (gate 'additive': α ⊙ g); LN_mix(m)
//
// A bidirectional layer (an encoder's) also pairs (z_t, z_{t+Δ}). grassmannMixingReference is that formula line by
// line; grassmannMixing computes the same values faster for training (pair-sum.ts) and, given a past, through the
// decoding step (decode-step.ts).
import * as tf from '@tensorflow/tfjs-core';
import { linear } from '../ops/ops.js';
import { grassmannMixingStep } from './decode-step.js';
import { gateOutput, pairCounts, projectAndGate } from './gate.js';
import { fusedPairSum, rows } from './pair-sum.js';
import { normalizedPlucker, pluckerDim } from './plucker.js';
import type { GrassmannMixingOptions, GrassmannMixingTrace, GrassmannMixingWeights } from './types.js';

export type {
  GrassmannGate,
  GrassmannMixingOptions,
  GrassmannMixingPast,
  GrassmannMixingTrace,
  GrassmannMixingWeights,
} from './types.js';

/** x [B, n, K] with `before` zero rows in front and `after` behind. */
function padRows(x: tf.Tensor3D, before: number, after: number): tf.Tensor3D {
  return tf.pad(x, [
    [0, 0],
    [before, after],
    [0, 0],
  ]);
}

/**
 * The formula above, op for op (no past): the reference that the fast paths are tested against, and the source of
 * {@link grassmannMixingTrace}. Returns its intermediates; the caller disposes every tensor.
 */
export function grassmannMixingTrace(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): GrassmannMixingTrace {
  const { offsets, eps, direction } = options;
  return tf.tidy(() => {
    const [B, L, d] = h.shape;
    const C = pluckerDim(w.wRed.shape[1]);
    const z = linear(h, w.wRed, w.bRed) as tf.Tensor3D; // [B, L, r]
    const pHat = offsets.map((delta) =>
      delta >= L
        ? tf.zeros<tf.Rank.R3>([B, L, C])
        : padRows(normalizedPlucker(rows(z, 0, L - delta), rows(z, delta, L - delta), eps) as tf.Tensor3D, delta, 0),
    ); // p̂ of (z_{t−Δ}, z_t) at every t, 0 where t − Δ < 0: [B, L, C] each
    let sum: tf.Tensor3D = tf.zeros([B, L, d]); // Σ over existing pairs of W_plu p̂ + b_plu
    let count: tf.Tensor3D = tf.zeros([1, L, 1]); // how many pairs position t has
    offsets.forEach((delta, k) => {
      if (delta >= L) return;
      const exists = padRows(tf.ones([1, L - delta, 1]), delta, 0); // 1 at t ≥ Δ
      const term = tf.mul<tf.Tensor3D>(linear(pHat[k] as tf.Tensor3D, w.wPlu, w.bPlu), exists); // [B, L, d]
      sum = tf.add(sum, term);
      count = tf.add(count, exists);
      if (direction === 'bidirectional') {
        sum = tf.add(sum, padRows(rows(term, delta, L - delta), 0, delta)); // (z_t, z_{t+Δ}) is the pair at t + Δ
        count = tf.add(count, padRows(tf.ones([1, L - delta, 1]), 0, delta));
      }
    });
    const g = tf.div<tf.Tensor3D>(sum, tf.maximum(count, 1)); // the mean; 0 where there is no pair
    const alpha = tf.sigmoid(linear(tf.concat([h, g], 2), w.wGate, w.bGate)) as tf.Tensor3D; // [B, L, d]
    return { output: gateOutput(h, g, alpha, w, options), z, pHat, g, alpha };
  });
}

/** {@link grassmannMixingTrace}'s output alone. */
export function grassmannMixingReference(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): tf.Tensor3D {
  const { output, ...rest } = grassmannMixingTrace(h, w, options);
  tf.dispose([rest.z, rest.g, rest.alpha, ...rest.pHat]);
  return output;
}

/**
 * Grassmann mixing of h [B, L, d] → [B, L, d], the formula above. Training path: every offset's pairs stacked into
 * one [B, O, L, C] tensor and differentiated analytically (fusedPairSum); since W_plu is shared by the offsets,
 * mean_Δ(W_plu p̂_Δ + b_plu) = W_plu mean_Δ(p̂_Δ) + b_plu, one projection per layer. With options.past, h holds
 * positions t0 … t0 + L − 1 and the result equals rows t0 … of the call on the whole sequence (the decoding step).
 * options.fused false: the reference forward.
 */
export function grassmannMixing(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): tf.Tensor3D {
  const { past } = options;
  if (past !== undefined) {
    const { output, next } = grassmannMixingStep(h, w, { ...options, past });
    next.z?.dispose();
    return output;
  }
  if (options.fused === false) return grassmannMixingReference(h, w, options);
  const { offsets, eps, direction } = options;
  return tf.tidy(() => {
    const L = h.shape[1];
    const z = linear(h, w.wRed, w.bRed) as tf.Tensor3D; // [B, L, r]
    const live = offsets.filter((delta) => delta < L); // offsets with at least one pair
    const pSum = live.length === 0 ? null : fusedPairSum(z, live, eps, direction); // Σ p̂ [B, L, C]
    return projectAndGate(h, pSum, pairCounts(L, offsets, direction), w, options).output;
  });
}

export { grassmannMixingStep } from './decode-step.js';
export { pairCounts } from './gate.js';
export { pluckerColumns, pluckerDim, pluckerPairs, pluckerSelection } from './plucker.js';

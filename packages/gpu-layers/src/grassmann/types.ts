// The mixer's weights, options and trace: what grassmannMixing, its decoding step and its callers share.
import type * as tf from '@tensorflow/tfjs-core';
import type { ModelOptionValue } from '../config/model-options.js';

/** Weights of one mixing layer, in the internal [in, out] layout. */
export interface GrassmannMixingWeights {
  /** W_redᵀ [d, r] */ wRed: tf.Tensor2D;
  /** b_red [r] */ bRed: tf.Tensor1D;
  /** W_pluᵀ [C(r,2), d] */ wPlu: tf.Tensor2D;
  /** b_plu [d] */ bPlu: tf.Tensor1D;
  /** W_gateᵀ [2d, d], input rows h then g */ wGate: tf.Tensor2D;
  /** b_gate [d] */ bGate: tf.Tensor1D;
  /** LN_mix γ, β [d] each: a LayerNorm (ε = 1e-5) on the mixer's output (mixerNorm; absent: none). */
  ln?: { weight: tf.Tensor1D; bias: tf.Tensor1D };
}

/** The gate's form: 'blend' m = α⊙h + (1−α)⊙g (the paper's, the skip path) or 'additive' m = α⊙g (a residual). */
export type GrassmannGate = ModelOptionValue<'gate'>;

/** Positions an incremental caller (a decoder) has already fed: their reduced states z and where h starts. */
export interface GrassmannMixingPast {
  /**
   * z_t of positions t0 − m … t0 − 1, [B, m, r], oldest first; m ≥ min(t0, max Δ) so that every pair of the new
   * positions exists (null or m = 0 at t0 = 0). Positions older than t0 − max(Δ) are never read.
   */
  z: tf.Tensor3D | null;
  /** Absolute position of the first row of h. */
  t0: number;
}

export interface GrassmannMixingOptions {
  /** Offsets Δ ≥ 1 of this layer. */
  offsets: readonly number[];
  /** ε of p̂ = p / sqrt(‖p‖² + ε²). */
  eps: number;
  /** 'causal' pairs (z_{t−Δ}, z_t); 'bidirectional' also (z_t, z_{t+Δ}) — encoders only. */
  direction: 'causal' | 'bidirectional';
  /** Earlier positions (causal only): h then holds positions t0 … t0 + L − 1. Default: none, t0 = 0. */
  past?: GrassmannMixingPast;
  /**
   * Without a past: true (default) differentiates the Plücker part (pairs, p̂, their sum) with its hand-written
   * analytic gradient (fusedPairSum), keeping only z·S, p̂ and the norms for the backward pass; false runs the
   * reference forward (grassmannMixingReference), whose every op the tape records. Same values either way.
   */
  fused?: boolean;
  /**
   * Gate form (default 'blend'): 'blend' h_mix = α⊙h + (1−α)⊙g; 'additive' returns α⊙g only, which the caller
   * adds to h as a residual (kanenorman's reproduction). α = σ(W_gate [h; g] + b_gate) either way.
   */
  gate?: GrassmannGate;
  /**
   * Blend only, training: the rate of a dropout on the mixing branch before the skip path is added,
   * h_mix = α⊙h + Dropout((1−α)⊙g) (post-LN dropoutAt 'branch'). Default 0: none. The additive gate's output is
   * all branch: its caller drops it.
   */
  branchDropout?: number;
}

/** The intermediates of the mixer on one sequence, for inspection (see grassmannMixingTrace). */
export interface GrassmannMixingTrace {
  /** The value grassmannMixing returns [B, L, d]: h_mix (or α⊙g), then LN_mix of it where w.ln is given. */
  output: tf.Tensor3D;
  /** z_t = W_red h_t + b_red of the new positions [B, L, r]. */
  z: tf.Tensor3D;
  /**
   * p̂ per entry of options.offsets [B, L, C(r,2)], 0 where t − Δ < 0 (causal direction only: the pair
   * (z_{t−Δ}, z_t); a bidirectional call also has the (z_t, z_{t+Δ}) terms, which are not listed).
   */
  pHat: tf.Tensor3D[];
  /** g_t = W_plu mean_Δ p̂ + b_plu [B, L, d], 0 where no pair exists. */
  g: tf.Tensor3D;
  /** α = σ(W_gate [h; g] + b_gate) [B, L, d]. */
  alpha: tf.Tensor3D;
}

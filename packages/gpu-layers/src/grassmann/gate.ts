// The mixer's last stage, shared by the training forward and the decoding step: from Σ p̂ to the gated output.
import * as tf from '@tensorflow/tfjs-core';
import { FUSED, hasFusedKernel } from '../backend/wasm-fused.js';
import { LN_EPS } from '../layers/block-parts.js';
import { dropout, layerNorm, matMulT, matmul } from '../ops/ops.js';
import type { GrassmannMixingOptions, GrassmannMixingWeights } from './types.js';

/**
 * Number of existing pairs at positions t0 … t0 + L − 1 of a sequence of length t0 + L (t0 = 0: the whole
 * sequence): offsets with t − Δ ≥ 0 (and t + Δ < L if bidirectional).
 */
export function pairCounts(
  L: number,
  offsets: readonly number[],
  direction: 'causal' | 'bidirectional',
  t0 = 0,
): number[] {
  return Array.from({ length: L }, (_, k) => {
    const t = t0 + k;
    const future = (delta: number) => (direction === 'bidirectional' && t + delta < t0 + L ? 1 : 0);
    return offsets.reduce((n, delta) => n + (t - delta >= 0 ? 1 : 0) + future(delta), 0);
  });
}

/** A per-position factor [1, L, 1] of the values v_t. */
function perPosition(v: number[]): tf.Tensor3D {
  return tf.tensor3d(v, [1, v.length, 1]);
}

/**
 * g_t = W_plu (Σ p̂)_t / n_t + b_plu (0 where n_t = 0: no pair), α = σ(W_gate [h; g] + b_gate), then the gate
 * ({@link gateOutput}); h [B, L, d], pSum [B, L, C] (null: no pair anywhere), n = counts. `inference`: fused
 * products with their bias and sigmoid (one kernel each; tfjs has no gradient for a fused sigmoid); in training, the
 * blend without branch dropout is one kernel each way where the native ones run ({@link blendGate}).
 */
export function projectAndGate(
  h: tf.Tensor3D,
  pSum: tf.Tensor3D | null,
  counts: readonly number[],
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
  inference = false,
): { output: tf.Tensor3D; g: tf.Tensor3D } {
  const [B, L, d] = h.shape;
  const h2 = tf.reshape<tf.Rank.R2>(h, [B * L, d]); // [B·L, d]
  let g2: tf.Tensor2D; // [B·L, d]
  // every position with the same count (e.g. all past max(Δ), as when decoding): 1/n is a number
  const uniform = counts.every((c) => c === counts[0]) && (counts[0] as number) > 0;
  if (pSum === null) {
    g2 = tf.zeros([B * L, d]);
  } else if (uniform) {
    const pMean = tf.reshape<tf.Rank.R2>(tf.mul(pSum, 1 / (counts[0] as number)), [B * L, pSum.shape[2]]); // [B·L, C]
    g2 = inference
      ? (tf.fused.matMul({ a: pMean, b: w.wPlu, bias: w.bPlu }) as tf.Tensor2D)
      : tf.add<tf.Tensor2D>(matmul(pMean, w.wPlu), w.bPlu);
  } else {
    const pMean = tf.mul(pSum, perPosition(counts.map((c) => (c > 0 ? 1 / c : 0)))); // [B, L, C]
    const proj = tf.reshape(matmul(tf.reshape(pMean, [B * L, pSum.shape[2]]), w.wPlu), [B, L, d]);
    // b_plu on the rows that have a pair, as the outer product [L, 1]·[1, d]: its gradient is a product too, where a
    // broadcast multiply's is two slow broadcast passes on wasm
    const has = tf.tensor2d(
      counts.map((c) => (c > 0 ? 1 : 0)),
      [L, 1],
    );
    const bias = tf.reshape(matmul(has, tf.reshape(w.bPlu, [1, d])), [1, L, d]); // [1, L, d], 0: no pair
    g2 = tf.reshape(tf.add(proj, bias), [B * L, d]);
  }
  const g = tf.reshape<tf.Rank.R3>(g2, [B, L, d]);
  if (inference) {
    const hg = tf.concat([h2, g2], 1); // [B·L, 2d], order [h; g]
    const a2 = tf.fused.matMul({ a: hg, b: w.wGate, bias: w.bGate, activation: 'sigmoid' }) as tf.Tensor2D;
    return { output: gateOutput(h, g, tf.reshape<tf.Rank.R3>(a2, [B, L, d]), w, options), g };
  }
  const z = gateLogits(h2, g2, w.wGate); // [B·L, d], [h; g]·W_gate
  const { gate = 'blend', branchDropout = 0 } = options;
  if (gate === 'blend' && branchDropout === 0 && hasFusedKernel(FUSED.blendGate)) {
    const m = tf.reshape<tf.Rank.R3>(blendGate(h2, g2, z, w.bGate), [B, L, d]); // α⊙h + (1−α)⊙g
    return { output: w.ln === undefined ? m : (layerNorm(m, w.ln.weight, w.ln.bias, LN_EPS) as tf.Tensor3D), g };
  }
  const alpha = tf.reshape<tf.Rank.R3>(tf.sigmoid(tf.add(z, w.bGate)), [B, L, d]); // [B, L, d]
  return { output: gateOutput(h, g, alpha, w, options), g };
}

/**
 * z = [h; g]·W_gate = h·W_gate[:d] + g·W_gate[d:] on rows [N, d], without the [N, 2d] copy forward:
 * dh = dz·W_gate[:d]ᵀ, dg = dz·W_gate[d:]ᵀ, dW_gate = [hᵀ·dz; gᵀ·dz] (one concat, not each half's gradient padded to
 * [2d, d] and the two summed).
 */
const gateLogits = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [h, g, w] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
  const save = args[3] as tf.GradSaveFunc;
  const d = h.shape[1];
  const [z, wH, wG] = tf.tidy(() => {
    const top = tf.slice(w, [0, 0], [d, -1]); // [d, d]
    const bottom = tf.slice(w, [d, 0], [d, -1]);
    return [tf.add<tf.Tensor2D>(tf.matMul(h, top), tf.matMul(g, bottom)), top, bottom];
  });
  save([h, g, wH, wG]);
  return {
    value: z,
    gradFunc: (dz: tf.Tensor, saved: tf.Tensor[]) => {
      const [sh, sg, sH, sG] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
      const dW = tf.concat([matMulT(sh, dz, true, false), matMulT(sg, dz, true, false)], 0); // [2d, d]
      return [matMulT(dz, sH, false, true), matMulT(dz, sG, false, true), dW];
    },
  };
});

/**
 * m = g + α⊙(h − g) with α = σ(z + b) on rows [N, d] (b [d]), in one fused kernel each way:
 * dh = dm⊙α, dg = dm⊙(1 − α), dz = dm⊙(h − g)⊙α⊙(1 − α), db = Σ_n dz. Only where FUSED.blendGate is registered.
 */
function blendGate(h: tf.Tensor2D, g: tf.Tensor2D, z: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [x, y, u, c] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
    const save = args[4] as tf.GradSaveFunc;
    const [m, alpha] = tf.engine().runKernel<[tf.Tensor2D, tf.Tensor2D]>(FUSED.blendGate, { h: x, g: y, z: u, b: c });
    save([x, y, alpha]);
    return {
      value: m,
      gradFunc: (dm: tf.Tensor, saved: tf.Tensor[]) => {
        const [sh, sg, sa] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
        const inputs = { dm, h: sh, g: sg, alpha: sa };
        const [dh, dg, dz] = tf
          .engine()
          .runKernel<[tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]>(FUSED.blendGateGrad, inputs);
        return [dh, dg, dz, tf.sum(dz, 0)];
      },
    };
  });
  return op(h, g, z, b);
}

/**
 * The mixer's output from h, g and α [B, L, d]: m = α⊙h + (1−α)⊙g (blend; α⊙h + Dropout((1−α)⊙g) with
 * options.branchDropout) or m = α⊙g (additive), then LN_mix(m) where w.ln is given.
 */
export function gateOutput(
  h: tf.Tensor3D,
  g: tf.Tensor3D,
  alpha: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): tf.Tensor3D {
  // the gate form is checked once, where a config or a layer is made (validateModelConfig, layerOptions)
  const { gate = 'blend', branchDropout = 0 } = options;
  if (!(branchDropout >= 0 && branchDropout < 1)) {
    throw new RangeError(`grassmannMixing: branchDropout must be in [0, 1), got ${String(branchDropout)}`);
  }
  if (gate === 'additive' && branchDropout > 0) {
    throw new RangeError("grassmannMixing: branchDropout is the blend's; an additive gate's caller drops its output");
  }
  let m: tf.Tensor3D;
  if (gate === 'additive') {
    m = tf.mul(alpha, g); // α⊙g
  } else if (branchDropout > 0) {
    m = tf.add(tf.mul(alpha, h), dropout(tf.mul(tf.sub(1, alpha), g), branchDropout, true)); // α⊙h + Drop((1−α)⊙g)
  } else {
    m = tf.add(g, tf.mul(alpha, tf.sub(h, g))); // α⊙h + (1−α)⊙g
  }
  return w.ln === undefined ? m : (layerNorm(m, w.ln.weight, w.ln.bias, LN_EPS) as tf.Tensor3D);
}

// Gradient clipping by global norm (PyTorch's clip_grad_norm_).
import * as tf from '@tensorflow/tfjs-core';
import { nativeVectorKernels, sumTensors } from '@grassflow/gpu-layers';
import { float32Views } from './storage.js';

/** The ε of clip_grad_norm_: the factor is maxNorm / (‖g‖ + ε). */
const CLIP_EPS = 1e-6;

/** Σ_k ‖g_k‖² as a tf scalar (every backend). */
function squaredNorm(grads: readonly tf.Tensor[]): tf.Scalar {
  return tf.tidy(() => {
    const squares = grads.map((g) => tf.sum(tf.square(g)));
    return (squares.length === 0 ? tf.scalar(0) : sumTensors(squares)) as tf.Scalar; // addN, ≤ 7 inputs a call (webgpu)
  });
}

/**
 * ‖g‖ = sqrt(Σ_k ‖g_k‖²) over all gradients, as a number. On cpu and wasm it is summed in float64 in one read of
 * the gradients' storage; elsewhere by tf ops, read with `await data()` (no blocking read on a GPU backend).
 */
export async function globalNorm(grads: tf.NamedTensorMap): Promise<number> {
  const gs = Object.values(grads);
  const views = float32Views(gs);
  if (views !== null) {
    let sum = 0;
    const native = nativeVectorKernels(); // the same float64 sum in native code, on every core, where it is loaded
    if (native !== undefined) for (const v of views) sum += native.sumSquares(v);
    else for (const v of views) for (let j = 0; j < v.length; j++) sum += (v[j] as number) * (v[j] as number);
    return Math.sqrt(sum);
  }
  const sq = squaredNorm(gs);
  try {
    return Math.sqrt((await sq.data())[0] as number);
  } finally {
    sq.dispose();
  }
}

/** The clipping factor min(1, maxNorm / (‖g‖ + 1e-6)); maxNorm = Infinity gives 1 (no clipping). */
export function clipFactor(norm: number, maxNorm: number): number {
  if (!(maxNorm > 0)) throw new RangeError(`maxNorm must be > 0 (Infinity disables clipping), got ${maxNorm}`);
  return Number.isFinite(maxNorm) ? Math.min(1, maxNorm / (norm + CLIP_EPS)) : 1;
}

/**
 * Global L2 norm of all gradients, ‖g‖ = sqrt(Σ_k ‖g_k‖²), and the gradients scaled by
 * min(1, maxNorm / (‖g‖ + 1e-6)) (PyTorch's clip_grad_norm_), as tf ops without a read. Returns new tensors (the
 * caller disposes `grads` and `norm`); `maxNorm = Infinity` only measures. trainStep instead reads the norm
 * ({@link globalNorm}) and passes {@link clipFactor} to AdamW, which scales the gradients in its own pass.
 */
export function clipByGlobalNorm(
  grads: tf.NamedTensorMap,
  maxNorm: number,
): { grads: tf.NamedTensorMap; norm: tf.Scalar } {
  if (!(maxNorm > 0)) throw new RangeError(`maxNorm must be > 0 (Infinity disables clipping), got ${maxNorm}`);
  return tf.tidy(() => {
    const names = Object.keys(grads);
    const norm = tf.sqrt<tf.Scalar>(squaredNorm(names.map((n) => grads[n] as tf.Tensor)));
    if (!Number.isFinite(maxNorm))
      return { grads: Object.fromEntries(names.map((n) => [n, tf.clone(grads[n] as tf.Tensor)])), norm };
    const scale = tf.minimum(1, tf.div(maxNorm, tf.add(norm, CLIP_EPS)));
    return { grads: Object.fromEntries(names.map((n) => [n, tf.mul(grads[n] as tf.Tensor, scale)])), norm };
  });
}

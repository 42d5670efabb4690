// Gradient clipping by global norm.
import * as tf from '@tensorflow/tfjs-core';
import { sumTensors } from '@grassflow/gpu-layers';

/**
 * Global L2 norm of all gradients, ‖g‖ = sqrt(Σ_k ‖g_k‖²), and the gradients scaled by
 * min(1, maxNorm / (‖g‖ + 1e-6)) (PyTorch's clip_grad_norm_). Returns new tensors (the caller disposes
 * `grads` and `norm`); `maxNorm = Infinity` only measures.
 */
export function clipByGlobalNorm(
  grads: tf.NamedTensorMap,
  maxNorm: number,
): { grads: tf.NamedTensorMap; norm: tf.Scalar } {
  if (!(maxNorm > 0)) throw new RangeError(`maxNorm must be > 0 (Infinity disables clipping), got ${maxNorm}`);
  return tf.tidy(() => {
    const names = Object.keys(grads);
    const squares = names.map((n) => tf.sum(tf.square(grads[n] as tf.Tensor)));
    const norm = tf.sqrt(squares.length === 0 ? tf.scalar(0) : sumTensors(squares)) as tf.Scalar; // addN, ≤ 7 inputs a call (webgpu)
    if (!Number.isFinite(maxNorm))
      return { grads: Object.fromEntries(names.map((n) => [n, tf.clone(grads[n] as tf.Tensor)])), norm };
    const scale = tf.minimum(1, tf.div(maxNorm, tf.add(norm, 1e-6)));
    return { grads: Object.fromEntries(names.map((n) => [n, tf.mul(grads[n] as tf.Tensor, scale)])), norm };
  });
}

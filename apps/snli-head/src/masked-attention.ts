// Non-causal multi-head self-attention with a key padding mask (gpu-layers' attention is causal only).
import * as tf from '@tensorflow/tfjs-core';
import { linear, matmul } from '@grassflow/gpu-layers';

/** Weights of one attention layer, internal [in, out] layout (columns q | k | v, head j at columns j·d_head …). */
export interface MaskedAttentionWeights {
  wQkv: tf.Tensor2D; // [d, 3d]
  bQkv: tf.Tensor1D; // [3d]
  wProj: tf.Tensor2D; // [d, d]
  bProj: tf.Tensor1D; // [d]
}

/**
 * Bidirectional multi-head self-attention of h [B, T, d] over the real tokens only:
 *   a = softmax(q·kᵀ/sqrt(d_head) + (m_key − 1)·1e9),  out = proj(concat_heads a·v).
 * Every query attends to every real key of its own sentence (the mask is added after the scale; a
 * padding query's output is computed but never pooled).
 */
export function maskedSelfAttention(h: tf.Tensor3D, mask: tf.Tensor2D, w: MaskedAttentionWeights, nHeads: number): tf.Tensor3D {
  const [B, T, d] = h.shape;
  const H = nHeads;
  const dh = d / H;
  return tf.tidy(() => {
    const qkv = tf.reshape(linear(h, w.wQkv, w.bQkv), [B * T, 3 * d]); // [B·T, 3d]
    const [q2, k2, v2] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]; // [B·T, d] each
    const heads = (x: tf.Tensor2D, perm: number[], shape: number[]) => tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, dh]), perm), shape);
    const q = heads(q2, [0, 2, 1, 3], [B * H, T, dh]); // [B, T, H, dh] → [B, H, T, dh] → [B·H, T, dh]
    const kT = heads(k2, [0, 2, 3, 1], [B * H, dh, T]); // [B·H, dh, T]
    const v = heads(v2, [0, 2, 1, 3], [B * H, T, dh]); // [B·H, T, dh]
    const scores = tf.mul(matmul(q, kT), 1 / Math.sqrt(dh)); // [B·H, T, T]
    const keyBias = tf.reshape(tf.tile(tf.reshape(tf.mul(tf.sub(mask, 1), 1e9), [B, 1, 1, T]), [1, H, 1, 1]), [B * H, 1, T]); // [B·H, 1, T]
    const a = tf.softmax(tf.add(scores, keyBias)); // [B·H, T, T]
    const y = matmul(a, v); // [B·H, T, dh]
    const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, T, dh]), [0, 2, 1, 3]), [B, T, d]); // [B, T, d]
    return linear(merged, w.wProj, w.bProj) as tf.Tensor3D;
  });
}

// Bidirectional multi-head self-attention with a key padding mask: gpu-layers' one attention, causal: false.
import type * as tf from '@tensorflow/tfjs-core';
import { causalAttention, type AttentionWeights } from '@grassflow/gpu-layers';

/** Weights of one attention layer, internal [in, out] layout (columns q | k | v, head j at columns j·d_head …). */
export type MaskedAttentionWeights = AttentionWeights;

/**
 * Bidirectional multi-head self-attention of h [B, T, d] over the real tokens only (mask [B, T], 1 real, 0 pad):
 *   a = softmax(q·kᵀ/sqrt(d_head) + (m_key − 1)·1e9),  out = proj(concat_heads a·v).
 * Every query attends to every real key of its own sentence (the mask is added after the scale; a
 * padding query's output is computed but never pooled). It is gpu-layers' causalAttention with
 * `causal: false` and `keyMask`.
 */
export function maskedSelfAttention(
  h: tf.Tensor3D,
  mask: tf.Tensor2D,
  w: MaskedAttentionWeights,
  nHeads: number,
): tf.Tensor3D {
  return causalAttention(h, w, { nHeads, kind: 'dpa', eps: 1e-6, causal: false, keyMask: mask });
}

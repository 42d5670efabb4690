// Causal multi-head attention: dot-product softmax (DPA) and expressive attention (EA, paper-notes §4).
import * as tf from '@tensorflow/tfjs-core';
import { linear, matmul } from './ops.js';

/** Weights of one attention layer, in the internal [in, out] layout. */
export interface AttentionWeights {
  /** [d, 3d]: columns q then k then v, head h at columns h·d_head … */ wQkv: tf.Tensor2D;
  /** [3d] */ bQkv: tf.Tensor1D;
  /** [d, d] */ wProj: tf.Tensor2D;
  /** [d] */ bProj: tf.Tensor1D;
}

export interface AttentionOptions {
  nHeads: number;
  kind: 'dpa' | 'ea';
  /** ε of EA's denominator Σ_j e_ij + ε. */
  eps: number;
}

/** Lower-triangular causal mask m_ij = 1 if j ≤ i else 0, [L, L]. */
export function causalMask(L: number): tf.Tensor2D {
  const m = new Float32Array(L * L);
  for (let i = 0; i < L; i++) for (let j = 0; j <= i; j++) m[i * L + j] = 1;
  return tf.tensor2d(m, [L, L]);
}

/**
 * Attention weights from scaled scores s = q·kᵀ/sqrt(d_head) [.., L, L]:
 * DPA a = softmax(s + (m − 1)·1e9) (mask added after the scale);
 * EA  e = m ⊙ s²/(1 + s²), a = e/(Σ_j e + ε) — the mask multiplies, nothing is added before squaring.
 */
export function attentionWeights(scores: tf.Tensor3D, kind: 'dpa' | 'ea', eps: number): tf.Tensor3D {
  const L = scores.shape[1];
  return tf.tidy(() => {
    const mask = causalMask(L); // [L, L]
    if (kind === 'dpa') return tf.softmax(tf.add(scores, tf.mul(tf.sub(mask, 1), 1e9))) as tf.Tensor3D;
    const s2 = tf.square(scores);
    const e = tf.mul(mask, tf.div(s2, tf.add(s2, 1))); // [BH, L, L]
    return tf.div(e, tf.add(tf.sum(e, -1, true), eps)) as tf.Tensor3D;
  });
}

/** Causal multi-head self-attention of h [B, L, d]: out = proj(concat_h a_h v_h). */
export function causalAttention(h: tf.Tensor3D, w: AttentionWeights, options: AttentionOptions): tf.Tensor3D {
  const [B, L, d] = h.shape;
  const H = options.nHeads;
  const dh = d / H;
  return tf.tidy(() => {
    const qkv = tf.reshape(linear(h, w.wQkv, w.bQkv), [B * L, 3 * d]); // [B·L, 3d]: columns q | k | v
    const [q2, k2, v2] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]; // [B·L, d] each
    const heads = (x: tf.Tensor2D, perm: number[], shape: number[]) => tf.reshape(tf.transpose(tf.reshape(x, [B, L, H, dh]), perm), shape);
    const q = heads(q2, [0, 2, 1, 3], [B * H, L, dh]); // [B, L, H, dh] → [B, H, L, dh] → [B·H, L, dh]
    const kT = heads(k2, [0, 2, 3, 1], [B * H, dh, L]); // [B, L, H, dh] → [B, H, dh, L] → [B·H, dh, L]
    const v = heads(v2, [0, 2, 1, 3], [B * H, L, dh]); // [B·H, L, dh]
    const scores = tf.mul(matmul(q, kT), 1 / Math.sqrt(dh)); // [B·H, L, L]
    const a = attentionWeights(scores as tf.Tensor3D, options.kind, options.eps); // [B·H, L, L]
    const y = matmul(a, v); // [B·H, L, dh]
    const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, L, dh]), [0, 2, 1, 3]), [B, L, d]); // [B, L, d]
    return linear(merged, w.wProj, w.bProj) as tf.Tensor3D;
  });
}

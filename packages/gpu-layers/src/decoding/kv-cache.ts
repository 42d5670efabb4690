// Incremental causal attention (DPA and EA): a key/value cache that grows by one entry per position (paper-notes §4).
import * as tf from '@tensorflow/tfjs-core';
import type { TransformerBlock } from '../layers/transformer-block.js';
import { linear, matmul } from '../ops.js';
import type { LayerDecodingState } from './layer-state.js';

/** Causal mask m_ij = 1 if key j ≤ t0 + i (query i sits at position t0 + i), else 0: [T, t0 + T]. */
function offsetCausalMask(T: number, t0: number): tf.Tensor2D {
  const n = t0 + T;
  const m = new Float32Array(T * n);
  for (let i = 0; i < T; i++) for (let j = 0; j <= t0 + i; j++) m[i * n + j] = 1;
  return tf.tensor2d(m, [T, n]);
}

/**
 * Attention weights of T queries against t0 + T keys from scaled scores s [B·H, T, t0 + T], with the formulas
 * of attentionWeights: DPA a = softmax(s + (m − 1)·1e9); EA e = m ⊙ s²/(1 + s²), a = e/(Σ_j e + ε).
 * For a single query (T = 1) every key is in its past (m = 1), so the mask is skipped: adding 0 or
 * multiplying by 1 changes no value.
 */
function cachedAttentionWeights(scores: tf.Tensor3D, t0: number, kind: 'dpa' | 'ea', eps: number): tf.Tensor3D {
  const T = scores.shape[1];
  return tf.tidy(() => {
    const mask = T === 1 ? null : offsetCausalMask(T, t0); // [T, t0 + T]
    if (kind === 'dpa') return tf.softmax(mask === null ? scores : tf.add(scores, tf.mul(tf.sub(mask, 1), 1e9))) as tf.Tensor3D;
    const s2 = tf.square(scores);
    const ratio = tf.div(s2, tf.add(s2, 1));
    const e = mask === null ? ratio : tf.mul(mask, ratio); // [B·H, T, t0 + T]
    return tf.div(e, tf.add(tf.sum(e, -1, true), eps)) as tf.Tensor3D;
  });
}

/**
 * Decoding state of one TransformerBlock: keys and values of every position so far, Kᵀ [B·H, d_head, t] and
 * V [B·H, t, d_head] — 2·B·t·d floats, growing linearly with the context t. Each call appends the new
 * positions' keys and values (a copy of the cache: tfjs tensors are immutable, and attention reads all of it
 * anyway, so the step stays O(t)).
 */
export class KvCacheState implements LayerDecodingState {
  private keysT: tf.Tensor3D | null = null; // [B·H, d_head, t]
  private values: tf.Tensor3D | null = null; // [B·H, t, d_head]

  constructor(private readonly block: TransformerBlock) {}

  /**
   * Attention output [B, T, d] of u [B, T, d] at positions t0 … t0 + T − 1 over the cached positions and the
   * new ones (causal within the chunk): out = proj(concat_h a_h v_h), as causalAttention computes it.
   */
  mix(u: tf.Tensor3D, t0: number): tf.Tensor3D {
    const [B, T, d] = u.shape;
    const H = this.block.nHeads;
    const dh = d / H;
    const w = this.block.mixerWeights();
    return tf.tidy(() => {
      const qkv = tf.reshape(linear(u, w.wQkv, w.bQkv), [B * T, 3 * d]); // [B·T, 3d]: columns q | k | v
      const [q2, k2, v2] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]; // [B·T, d] each
      const heads = (x: tf.Tensor2D, perm: number[], shape: number[]) => tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, dh]), perm), shape);
      const q = heads(q2, [0, 2, 1, 3], [B * H, T, dh]); // [B, T, H, dh] → [B, H, T, dh] → [B·H, T, dh]
      const kTNew = heads(k2, [0, 2, 3, 1], [B * H, dh, T]); // [B·H, dh, T]
      const vNew = heads(v2, [0, 2, 1, 3], [B * H, T, dh]); // [B·H, T, dh]
      const kT = this.keysT === null ? kTNew : tf.concat([this.keysT, kTNew], 2); // [B·H, dh, t0 + T]
      const v = this.values === null ? vNew : tf.concat([this.values, vNew], 1); // [B·H, t0 + T, dh]
      const scores = tf.mul(matmul(q, kT), 1 / Math.sqrt(dh)) as tf.Tensor3D; // [B·H, T, t0 + T]
      const a = cachedAttentionWeights(scores, t0, this.block.attention, this.block.eps); // [B·H, T, t0 + T]
      const y = matmul(a, v); // [B·H, T, dh]
      const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, T, dh]), [0, 2, 1, 3]), [B, T, d]); // [B, T, d]
      this.keysT?.dispose();
      this.values?.dispose();
      this.keysT = tf.keep(kT as tf.Tensor3D);
      this.values = tf.keep(v as tf.Tensor3D);
      return linear(merged, w.wProj, w.bProj) as tf.Tensor3D;
    });
  }

  bytes(): number {
    return ((this.keysT?.size ?? 0) + (this.values?.size ?? 0)) * 4;
  }

  reset(): void {
    this.keysT?.dispose();
    this.values?.dispose();
    this.keysT = null;
    this.values = null;
  }

  dispose(): void {
    this.reset();
  }
}

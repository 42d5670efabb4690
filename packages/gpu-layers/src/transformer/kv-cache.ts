// Incremental causal attention (DPA and EA): a key/value cache that grows by one entry per position (paper-notes §4).
import * as tf from '@tensorflow/tfjs-core';
import { attentionWithCache, type AttentionCache } from './attention.js';
import type { TransformerBlock } from './block.js';
import type { LayerDecodingState } from '../language-model/decoding-state.js';

/**
 * Decoding state of one TransformerBlock: keys and values of every position so far, Kᵀ [B·H, d_head, t] and
 * V [B·H, t, d_head] — 2·B·t·d floats, growing linearly with the context t. Each call hands them to
 * attentionWithCache, which appends the new positions' keys and values (a copy of the cache: tfjs tensors are
 * immutable, and attention reads all of it anyway, so the step stays O(t)).
 */
export class KvCacheState implements LayerDecodingState {
  private cache: AttentionCache = { keysT: null, values: null };

  constructor(private readonly block: TransformerBlock) {}

  /** Attention output [B, T, d] of u [B, T, d] at positions t0 … t0 + T − 1 over the cached and new positions. */
  mix(u: tf.Tensor3D, t0: number): tf.Tensor3D {
    const held = this.cache.keysT?.shape[2] ?? 0;
    if (t0 !== held) throw new Error(`internal: the cache holds ${held} positions, asked for position ${t0}`);
    const { nHeads, attention, eps, eaEps } = this.block;
    const { output, cache } = attentionWithCache(u, this.block.mixerWeights(), {
      nHeads,
      kind: attention,
      eps,
      eaEps,
      cache: this.cache,
    });
    this.reset();
    this.cache = { keysT: tf.keep(cache.keysT), values: tf.keep(cache.values) }; // outlive the caller's tidy
    return output;
  }

  bytes(): number {
    return ((this.cache.keysT?.size ?? 0) + (this.cache.values?.size ?? 0)) * 4;
  }

  reset(): void {
    this.cache.keysT?.dispose();
    this.cache.values?.dispose();
    this.cache = { keysT: null, values: null };
  }

  dispose(): void {
    this.reset();
  }
}

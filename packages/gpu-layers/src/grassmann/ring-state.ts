// Incremental Grassmann mixing: the last max(Δ) reduced states z of a layer (paper-notes §1, §5).
import * as tf from '@tensorflow/tfjs-core';
import { grassmannMixingStep } from './decode-step.js';
import type { GrassmannMixingPast } from './types.js';
import type { GrassmannBlock } from './block.js';
import type { LayerDecodingState } from '../language-model/decoding-state.js';

/**
 * Decoding state of one GrassmannBlock: the reduced states z of the last M = max(Δ) positions, [B, ≤ M, r].
 * Pairs need z_{t−Δ} for Δ ≤ M only, so the state is B·M·r floats whatever the position — constant memory,
 * where attention's key/value cache grows with the context. The mixing itself is grassmannMixing's, given
 * these states as its past.
 */
export class GrassmannRingState implements LayerDecodingState {
  private past: GrassmannMixingPast = { z: null, t0: 0 };

  constructor(private readonly block: GrassmannBlock) {}

  /** Mixer output [B, T, d] for inputs u [B, T, d] at positions t0 … t0 + T − 1; then keeps the last M z's. */
  mix(u: tf.Tensor3D, t0: number): tf.Tensor3D {
    if (t0 !== this.past.t0)
      throw new Error(`internal: the ring holds positions before ${this.past.t0}, asked for ${t0}`);
    const { offsets, eps, gate } = this.block;
    const { output, next } = grassmannMixingStep(u, this.block.mixerWeights(), {
      offsets,
      eps,
      gate, // and LN_mix through mixerWeights() where the block has mixerNorm
      direction: 'causal',
      past: this.past,
    });
    this.past.z?.dispose();
    this.past = { z: next.z === null ? null : tf.keep(next.z), t0: next.t0 }; // outlives the caller's tidy
    return output;
  }

  bytes(): number {
    return (this.past.z?.size ?? 0) * 4;
  }

  reset(): void {
    this.past.z?.dispose();
    this.past = { z: null, t0: 0 };
  }

  dispose(): void {
    this.reset();
  }
}

// What a block keeps between decoding calls: the interface of the Grassmann ring buffer and the KV cache.
import type * as tf from '@tensorflow/tfjs-core';

/** Per-block decoding state: a token mixer that remembers what it needs of earlier positions. */
export interface LayerDecodingState {
  /**
   * Mixer output [B, T, d] for mixer inputs u [B, T, d] at positions t0 … t0 + T − 1, given every earlier
   * position through the state; then remembers what later positions need. Called inside a tf.tidy.
   */
  mix(u: tf.Tensor3D, t0: number): tf.Tensor3D;
  /** Bytes of tensor data the state holds (float32). */
  bytes(): number;
  /** Forget every position (dispose the state's tensors); the next call starts at t0 = 0. */
  reset(): void;
  /** reset() and free anything else held. */
  dispose(): void;
}

// What both heads share: masked mean pooling of a sentence and the pair combination [u; v; |u−v|; u⊙v].
import * as tf from '@tensorflow/tfjs-core';
import type { ParamStore } from '@grassflow/training';

/**
 * Masked mean over tokens: u_b = Σ_t m_bt h_bt / max(1, Σ_t m_bt), for h [B, T, d] and a 0/1 mask [B, T].
 * Padding never reaches the sentence vector.
 */
export function maskedMeanPool(h: tf.Tensor3D, mask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const m = tf.expandDims(mask, 2); // [B, T, 1]
    const sum = tf.sum(tf.mul(h, m), 1); // [B, d]
    const n = tf.maximum(tf.sum(m, 1), 1); // [B, 1]
    return tf.div<tf.Tensor2D>(sum, n);
  });
}

/** InferSent's pair features [u; v; |u − v|; u ⊙ v]: [B, d] × [B, d] → [B, 4d]. */
export function pairFeatures(u: tf.Tensor2D, v: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tf.concat([u, v, tf.abs(tf.sub(u, v)), tf.mul(u, v)], 1) as tf.Tensor2D);
}

/**
 * Premise and hypothesis as one batch of 2B sentences (same T): the encoder runs once, then {@link splitPair} separates
 * them.
 */
export function stackPair<T extends tf.Tensor>(premise: T, hypothesis: T): T {
  return tf.concat<T>([premise, hypothesis], 0);
}

/** Inverse of {@link stackPair} along the batch axis: [2B, …] → ([B, …], [B, …]). */
export function splitPair<T extends tf.Tensor>(x: T): [T, T] {
  const half = x.shape[0] / 2;
  return tf.split(x, [half, half], 0) as [T, T];
}

/** The LayerNorms and feed-forward of head layer i (post-LN, both heads); the token mixer's weights are each head's. */
export interface HeadLayerParams {
  ln1: { g: tf.Variable; b: tf.Variable };
  fc1: { w: tf.Variable; b: tf.Variable };
  fc2: { w: tf.Variable; b: tf.Variable };
  ln2: { g: tf.Variable; b: tf.Variable };
}

/** Head layer i's {@link HeadLayerParams} at width d and feed-forward width dFF, under `head.layers.${i}.`. */
export function headLayerParams(params: ParamStore, i: number, d: number, dFF: number): HeadLayerParams {
  return {
    ln1: params.layerNorm(`head.layers.${i}.ln1`, d),
    fc1: params.linear(`head.layers.${i}.ffn.fc1`, d, dFF),
    fc2: params.linear(`head.layers.${i}.ffn.fc2`, dFF, d),
    ln2: params.layerNorm(`head.layers.${i}.ln2`, d),
  };
}

/**
 * A siamese pair classifier, the frame both heads share: premise and hypothesis are encoded as one batch of 2B
 * sentences (same weights), pooled to u and v [B, d], combined to [u; v; |u − v|; u ⊙ v] and classified.
 */
export abstract class PairHead {
  /** Sentence vectors [N, d] of features x [N, T, D] with a 0/1 mask [N, T]. */
  abstract encode(x: tf.Tensor3D, mask: tf.Tensor2D, training: boolean): tf.Tensor2D;

  /** Logits [B, 3] of the pair features [B, 4d]. */
  protected abstract classify(features: tf.Tensor2D, training: boolean): tf.Tensor2D;

  /** Logits [B, 3] for premise and hypothesis features (each x [B, T, D] with mask [B, T]). */
  forward(
    premise: tf.Tensor3D,
    premiseMask: tf.Tensor2D,
    hypothesis: tf.Tensor3D,
    hypothesisMask: tf.Tensor2D,
    training: boolean,
  ): tf.Tensor2D {
    return tf.tidy(() => {
      const pair = this.encode(stackPair(premise, hypothesis), stackPair(premiseMask, hypothesisMask), training);
      const [u, v] = splitPair(pair); // [B, d] each
      return this.classify(pairFeatures(u, v), training); // [B, 3]
    });
  }
}

// Backbone 'none': a small trainable embedding encoder over the BERT vocabulary (no pretrained weights needed).
import * as tf from '@tensorflow/tfjs-core';
import { embeddingLookup, layerNorm } from '@grassflow/gpu-layers';
import type { ParamStore } from '@grassflow/training';

/** Configuration of {@link EmbeddingEncoder}. */
export interface EmbeddingEncoderConfig {
  /** V: vocabulary size (BERT uncased: 30,522). */
  vocabSize: number;
  /** D: feature width handed to the head (ours: 64, small enough to train on 2 CPU cores). */
  dim: number;
  /** Positions in the table (the per-sentence token limit, 48). */
  maxLen: number;
}

/** Analytic parameter count: token table V·D, position table maxLen·D, LayerNorm 2D. */
export function countEmbeddingEncoder(c: EmbeddingEncoderConfig): number {
  return c.vocabSize * c.dim + c.maxLen * c.dim + 2 * c.dim;
}

/** x_t = LayerNorm(E_tok[id_t] + E_pos[t]): ids int32 [B, T] → features [B, T, D]. Trained with the head. */
export class EmbeddingEncoder {
  readonly config: EmbeddingEncoderConfig;
  private readonly tok: tf.Variable;
  private readonly pos: tf.Variable;
  private readonly ln: { g: tf.Variable; b: tf.Variable };

  constructor(config: EmbeddingEncoderConfig, params: ParamStore) {
    for (const k of ['vocabSize', 'dim', 'maxLen'] as const) {
      if (!Number.isInteger(config[k]) || config[k] < 1)
        throw new RangeError(`embedding encoder: ${k} must be an integer >= 1, got ${config[k]}`);
    }
    this.config = { ...config };
    this.tok = params.add('backbone.tok_emb.weight', [config.vocabSize, config.dim], 'normal');
    this.pos = params.add('backbone.pos_emb.weight', [config.maxLen, config.dim], 'normal');
    this.ln = params.layerNorm('backbone.ln', config.dim);
  }

  /** Features [B, T, D] of token ids [B, T] (T ≤ maxLen). */
  forward(ids: tf.Tensor2D): tf.Tensor3D {
    const T = ids.shape[1];
    if (T > this.config.maxLen)
      throw new RangeError(`embedding encoder: T = ${T} exceeds the position table (${this.config.maxLen})`);
    return tf.tidy(() => {
      const e = embeddingLookup(this.tok as tf.Tensor2D, ids); // [B, T, D]
      const p = tf.slice(this.pos, [0, 0], [T, this.config.dim]); // [T, D]
      return layerNorm(tf.add(e, p), this.ln.g, this.ln.b) as tf.Tensor3D;
    });
  }
}

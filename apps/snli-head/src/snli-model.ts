// An SNLI classifier: optional trainable embedding backbone + one of the two heads, built from one config.
import * as tf from '@tensorflow/tfjs-core';
import { countEmbeddingEncoder, EmbeddingEncoder, type EmbeddingEncoderConfig } from './embedding-encoder.js';
import { countGrassmannHead, GrassmannHead, grassmannHeadConfig, type GrassmannHeadConfig } from './grassmann-head.js';
import { ParamStore } from './params.js';
import { countTransformerHead, TransformerHead, transformerHeadConfig, type TransformerHeadConfig } from './transformer-head.js';

export type HeadKind = 'grassmann' | 'transformer';
export const HEAD_KINDS: readonly HeadKind[] = ['grassmann', 'transformer'];

/** Everything that fixes the model's shapes. `embedding` is set for backbone 'none' (trained with the head). */
export interface SnliModelConfig {
  head: GrassmannHeadConfig | TransformerHeadConfig;
  embedding: EmbeddingEncoderConfig | null;
}

/** The paper's head of `kind` over features of width `inputDim` (and, for backbone 'none', the embedding encoder). */
export function modelConfig(kind: HeadKind, inputDim: number, embedding: EmbeddingEncoderConfig | null): SnliModelConfig {
  return { head: kind === 'grassmann' ? grassmannHeadConfig(inputDim) : transformerHeadConfig(inputDim), embedding };
}

/** Analytic parameter counts: head, backbone (trainable embedding encoder, else 0) and total. */
export function countParams(c: SnliModelConfig): { head: number; backbone: number; total: number } {
  const head = c.head.kind === 'grassmann' ? countGrassmannHead(c.head) : countTransformerHead(c.head);
  const backbone = c.embedding === null ? 0 : countEmbeddingEncoder(c.embedding);
  return { head, backbone, total: head + backbone };
}

/** A sentence batch: token ids (backbone 'none') or precomputed backbone features, with a 0/1 mask. */
export type SentenceInput = { ids: tf.Tensor2D; mask: tf.Tensor2D } | { features: tf.Tensor3D; mask: tf.Tensor2D };

/** Backbone (optional) + head; all trainable parameters live in one {@link ParamStore}. */
export class SnliModel {
  readonly config: SnliModelConfig;
  readonly params: ParamStore;
  readonly embedding: EmbeddingEncoder | null;
  readonly head: GrassmannHead | TransformerHead;

  constructor(config: SnliModelConfig, seed: number) {
    this.config = config;
    this.params = new ParamStore(seed);
    try {
      this.embedding = config.embedding === null ? null : new EmbeddingEncoder(config.embedding, this.params);
      if (this.embedding !== null && this.embedding.config.dim !== config.head.inputDim) {
        throw new RangeError(`head inputDim ${config.head.inputDim} differs from the embedding width ${this.embedding.config.dim}`);
      }
      this.head = config.head.kind === 'grassmann' ? new GrassmannHead(config.head, this.params) : new TransformerHead(config.head, this.params);
    } catch (err) {
      this.params.dispose();
      throw err;
    }
  }

  private features(s: SentenceInput): tf.Tensor3D {
    if ('features' in s) return s.features;
    if (this.embedding === null) throw new Error('this model has no embedding backbone: pass features, not ids');
    return this.embedding.forward(s.ids);
  }

  /** Logits [B, 3] (entailment, neutral, contradiction). */
  forward(premise: SentenceInput, hypothesis: SentenceInput, training: boolean): tf.Tensor2D {
    return tf.tidy(() => this.head.forward(this.features(premise), premise.mask, this.features(hypothesis), hypothesis.mask, training));
  }

  /** Number of trainable scalars (equals {@link countParams}().total; tested). */
  countBuilt(): number {
    return this.params.count();
  }

  dispose(): void {
    this.params.dispose();
  }
}

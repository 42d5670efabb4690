// An SNLI classifier: optional trainable embedding backbone + one of the two heads, built from one config.
import * as tf from '@tensorflow/tfjs-core';
import { CheckpointError, type CheckpointJson } from '@grassflow/gpu-layers';
import { ParamStore, type Checkpointable, type NamedVariable } from '@grassflow/training';
import { countEmbeddingEncoder, EmbeddingEncoder, type EmbeddingEncoderConfig } from './embedding-encoder.js';
import { countGrassmannHead, GrassmannHead, grassmannHeadConfig, type GrassmannHeadConfig } from './grassmann-head.js';
import {
  countTransformerHead,
  TransformerHead,
  transformerHeadConfig,
  type TransformerHeadConfig,
} from './transformer-head.js';

export type HeadKind = 'grassmann' | 'transformer';
export const HEAD_KINDS: readonly HeadKind[] = ['grassmann', 'transformer'];

/** Everything that fixes the model's shapes. `embedding` is set for backbone 'none' (trained with the head). */
export interface SnliModelConfig {
  head: GrassmannHeadConfig | TransformerHeadConfig;
  embedding: EmbeddingEncoderConfig | null;
}

/** The paper's head of `kind` over features of width `inputDim` (and, for backbone 'none', the embedding encoder). */
export function modelConfig(
  kind: HeadKind,
  inputDim: number,
  embedding: EmbeddingEncoderConfig | null,
): SnliModelConfig {
  return { head: kind === 'grassmann' ? grassmannHeadConfig(inputDim) : transformerHeadConfig(inputDim), embedding };
}

/**
 * config.json `model` of a checkpoint as an SnliModelConfig: a head of a known kind with a numeric inputDim, and
 * an embedding encoder or null. (The model built from it then fixes every tensor name and shape.)
 */
export function parseSnliModelConfig(value: unknown): SnliModelConfig {
  const c = value as Partial<SnliModelConfig> | null;
  const head = c?.head as Partial<GrassmannHeadConfig | TransformerHeadConfig> | undefined;
  if (typeof c !== 'object' || c === null || typeof head !== 'object' || head === null) {
    throw new CheckpointError('INVALID_CONFIG', 'config.json model is not an SNLI model config ({ head, embedding })');
  }
  if (!HEAD_KINDS.includes(head.kind as HeadKind) || typeof head.inputDim !== 'number') {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `config.json model.head: kind must be one of ${HEAD_KINDS.join(', ')} with a numeric inputDim`,
    );
  }
  if (c.embedding !== null && typeof c.embedding !== 'object') {
    throw new CheckpointError(
      'INVALID_CONFIG',
      'config.json model.embedding must be an embedding encoder config or null',
    );
  }
  return c as SnliModelConfig;
}

/** Analytic parameter counts: head, backbone (trainable embedding encoder, else 0) and total. */
export function countParams(c: SnliModelConfig): { head: number; backbone: number; total: number } {
  const head = c.head.kind === 'grassmann' ? countGrassmannHead(c.head) : countTransformerHead(c.head);
  const backbone = c.embedding === null ? 0 : countEmbeddingEncoder(c.embedding);
  return { head, backbone, total: head + backbone };
}

/** A sentence batch: token ids (backbone 'none') or precomputed backbone features, with a 0/1 mask. */
export type SentenceInput = { ids: tf.Tensor2D; mask: tf.Tensor2D } | { features: tf.Tensor3D; mask: tf.Tensor2D };

/** Backbone (optional) + head; all trainable parameters live in one {@link ParamStore} (checkpointed by name). */
export class SnliModel implements Checkpointable {
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
        throw new RangeError(
          `head inputDim ${config.head.inputDim} differs from the embedding width ${this.embedding.config.dim}`,
        );
      }
      this.head =
        config.head.kind === 'grassmann'
          ? new GrassmannHead(config.head, this.params)
          : new TransformerHead(config.head, this.params);
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
    return tf.tidy(() =>
      this.head.forward(this.features(premise), premise.mask, this.features(hypothesis), hypothesis.mask, training),
    );
  }

  /** Number of trainable scalars (equals {@link countParams}().total; tested). */
  countBuilt(): number {
    return this.params.count();
  }

  /** config.json `model` of its checkpoints. */
  checkpointConfig(): CheckpointJson {
    return JSON.parse(JSON.stringify(this.config)) as CheckpointJson;
  }

  /** Every trainable parameter under its checkpoint name (`head.layers.0.ln1.weight`, …), in creation order. */
  namedParams(): NamedVariable[] {
    return this.params.named();
  }

  dispose(): void {
    this.params.dispose();
  }
}

// What a grassflow-lm study run's key is taken of: its fully resolved config (the key itself is @grassflow/studies'
// runKey, sha256 of the canonical JSON).
import type { ModelConfig } from '@grassflow/gpu-layers';
import type { ModelKind } from '../shared/model-options.js';
import { readTrainingConfig, type StoredRunConfig, type TrainingConfig } from '../train/config.js';

/**
 * What a run trains, fully resolved: the model config (vocabulary from the tokenizer), the training config and the
 * tokenizer. Left out, because they do not change what is trained: the preset's name (the model config holds the
 * size), checkpointEvery and logEvery (bookkeeping) and microBatch (the same update, accumulated in passes).
 */
export interface ResolvedRunConfig {
  modelKind: ModelKind;
  tokenizer: string;
  model: ModelConfig;
  training: Omit<TrainingConfig, 'checkpointEvery' | 'logEvery' | 'microBatch'>;
}

/** The resolved config of a run's parts (a fresh train plan's, or a config.json's). */
export function resolvedRunConfig(
  modelKind: ModelKind,
  tokenizer: string,
  model: ModelConfig,
  training: TrainingConfig,
): ResolvedRunConfig {
  const { checkpointEvery: _c, logEvery: _l, microBatch: _m, ...kept } = training;
  return { modelKind, tokenizer, model, training: kept };
}

/** The resolved config of a run folder's config.json. */
export function resolvedOfStored(cfg: StoredRunConfig): ResolvedRunConfig {
  return resolvedRunConfig(cfg.modelKind, cfg.data.tokenizer, cfg.model, readTrainingConfig(cfg.training));
}

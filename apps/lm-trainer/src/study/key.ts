// The key of a study run: sha256 of its fully resolved config as canonical JSON (sorted keys), first 16 hex digits.
import { createHash } from 'node:crypto';
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

/** JSON with the keys of every object sorted (arrays keep their order; undefined fields dropped, as JSON does). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** sha256(canonicalJson(config)), the first 16 hex digits: the run's key in the ledger and its folder's name. */
export function runKey(config: unknown): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex').slice(0, 16);
}

// Trainer checkpoint = gpu-layers checkpoint (model) + AdamW moments + step, RNG state and data position.
import type * as tf from '@tensorflow/tfjs-core';
import { loadCheckpoint, saveCheckpoint, type CheckpointJson, type LanguageModel, type ModelConfig } from '@grassflow/gpu-layers';
import type { PrngState } from '@grassflow/datasets';
import type { AdamW, AdamWState } from './adamw.js';

/** Everything besides tensors that a resume needs. Stored under `extra.trainer` of the checkpoint's config.json. */
export interface TrainerState {
  /** Optimizer updates done. */
  step: number;
  /** Training tokens consumed. */
  tokensSeen: number;
  /** Seconds spent in training steps so far (for tokens/s and ETA across resumes). */
  trainSeconds: number;
  /** RNG stream (dropout seeds) at this step. */
  rng: PrngState;
  /** Data position (e.g. LmTrainBatcher.state), as JSON. */
  data: CheckpointJson;
  optimizer: AdamWState;
  /** Best validation metric so far and the step it was reached at (null before the first eval). */
  best: { value: number; step: number } | null;
}

/** A loaded trainer checkpoint. The caller disposes `model` and `optimizerTensors`' tensors (or hands them to AdamW.loadState). */
export interface LoadedTrainerCheckpoint {
  model: LanguageModel;
  config: ModelConfig;
  state: TrainerState;
  /** `adamw.m.*` / `adamw.v.*` moments. */
  optimizerTensors: Map<string, tf.Tensor>;
  /** Other JSON saved beside the trainer state (e.g. the run config). */
  extra: { readonly [key: string]: CheckpointJson };
}

/** A trainer checkpoint that cannot be used for resuming; says what is missing. */
export class TrainerCheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrainerCheckpointError';
  }
}

/** Save model + optimizer + trainer state to `dir` (atomically: a crash leaves the previous checkpoint or this one). */
export async function saveTrainerCheckpoint(
  dir: string,
  model: LanguageModel,
  optimizer: AdamW,
  state: TrainerState,
  extra: { [key: string]: CheckpointJson } = {},
): Promise<void> {
  const tensors = optimizer.stateTensors();
  try {
    const trainer = JSON.parse(JSON.stringify(state)) as CheckpointJson;
    await saveCheckpoint(dir, model, { extra: { ...extra, trainer }, extraTensors: tensors });
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

function isTrainerState(v: unknown): v is TrainerState {
  const o = v as Record<string, unknown> | null;
  return (
    typeof o === 'object' && o !== null && Number.isInteger(o['step']) && typeof o['tokensSeen'] === 'number' && typeof o['trainSeconds'] === 'number' &&
    Array.isArray(o['rng']) && (o['rng'] as unknown[]).length === 4 && typeof o['optimizer'] === 'object' && o['optimizer'] !== null && 'data' in o && 'best' in o
  );
}

/**
 * Load a checkpoint written by {@link saveTrainerCheckpoint}. gpu-layers' checks apply first (a corrupt or
 * truncated file is a CheckpointError naming it); a model-only checkpoint (no trainer state) is a TrainerCheckpointError.
 */
export async function loadTrainerCheckpoint(dir: string): Promise<LoadedTrainerCheckpoint> {
  const loaded = await loadCheckpoint(dir);
  const { trainer, ...extra } = loaded.extra;
  if (!isTrainerState(trainer)) {
    loaded.model.dispose();
    for (const t of loaded.extraTensors.values()) t.dispose();
    throw new TrainerCheckpointError(`${dir} is a model checkpoint without trainer state (extra.trainer): it can be evaluated or sampled, but not resumed`);
  }
  return { model: loaded.model, config: loaded.config, state: trainer, optimizerTensors: loaded.extraTensors, extra };
}

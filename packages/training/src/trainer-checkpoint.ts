// Trainer checkpoint = model checkpoint + AdamW moments + step, RNG state and data position. A gpu-layers
// LanguageModel is saved as gpu-layers' checkpoint (PyTorch names and layouts); any other model that exposes named
// parameters (Checkpointable) as a @grassflow/checkpoints folder of its config and its parameters by name.
import * as tf from '@tensorflow/tfjs-core';
import {
  CheckpointError,
  loadCheckpointFolder,
  saveCheckpointFolder,
  type CheckpointTensor,
  type SafetensorsTensorInput,
} from '@grassflow/checkpoints';
import {
  loadCheckpoint,
  saveCheckpoint,
  type CheckpointJson,
  type LanguageModel,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import type { PrngState } from '@grassflow/prng';
import type { AdamW, AdamWState, NamedVariable } from './adamw.js';
import type { EarlyStopDecision } from './early-stop.js';

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
  /** Every evaluation's best-checkpoint metric, [step, value] in order: kept when the run stops early on it. */
  evals?: Array<[number, number]>;
  /** Set when the early-stopping rule ended the run at `step` (a resume then trains nothing). */
  stoppedEarly?: EarlyStopDecision;
}

/**
 * A model the trainer can checkpoint without knowing it: the JSON that rebuilds it (config.json `model`) and its
 * trainable parameters under stable names (model.safetensors holds them as they are, float32).
 */
export interface Checkpointable {
  checkpointConfig(): CheckpointJson;
  namedParams(): readonly NamedVariable[];
  dispose(): void;
}

/** A model of either kind: a gpu-layers LanguageModel, or a {@link Checkpointable} one. */
export type TrainableModel = LanguageModel | Checkpointable;

function isCheckpointable(m: TrainableModel): m is Checkpointable {
  return typeof (m as Partial<Checkpointable>).checkpointConfig === 'function';
}

/**
 * A loaded trainer checkpoint. The caller disposes `model` and `optimizerTensors`' tensors (or hands them to
 * AdamW.loadState).
 */
export interface LoadedTrainerCheckpoint<M = LanguageModel, C = ModelConfig> {
  model: M;
  config: C;
  state: TrainerState;
  /** `adamw.m.*` / `adamw.v.*` moments. */
  optimizerTensors: Map<string, tf.Tensor>;
  /** Other JSON saved beside the trainer state (e.g. the run config). */
  extra: { readonly [key: string]: CheckpointJson };
}

/** A loaded model checkpoint of a {@link Checkpointable} model; the caller disposes `model` and `extraTensors`. */
export interface LoadedModelCheckpoint<M extends Checkpointable, C> {
  model: M;
  config: C;
  extra: { readonly [key: string]: CheckpointJson };
  extraTensors: Map<string, tf.Tensor>;
  /** The folder read (`<dir>.old-*` after a crashed save). */
  dir: string;
}

/** A trainer checkpoint that cannot be used for resuming; says what is missing. */
export class TrainerCheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrainerCheckpointError';
  }
}

async function float32Inputs(tensors: Iterable<[string, tf.Tensor]>): Promise<Map<string, SafetensorsTensorInput>> {
  const out = new Map<string, SafetensorsTensorInput>();
  for (const [name, t] of tensors) out.set(name, { dtype: 'F32', shape: t.shape, data: await t.data() });
  return out;
}

/**
 * Save a {@link Checkpointable} model to `dir` (config.json with its config, extra JSON and file hashes;
 * model.safetensors; extra.safetensors with `extraTensors`), crash-safely (the previous checkpoint or this one).
 */
export async function saveModelCheckpoint(
  dir: string,
  model: Checkpointable,
  opts: { extra?: { [key: string]: CheckpointJson }; extraTensors?: ReadonlyMap<string, tf.Tensor> } = {},
): Promise<void> {
  const tensors = await float32Inputs(model.namedParams().map((p) => [p.name, p.variable]));
  const extraTensors = opts.extraTensors === undefined ? undefined : await float32Inputs(opts.extraTensors);
  await saveCheckpointFolder(dir, {
    model: model.checkpointConfig(),
    tensors,
    ...(extraTensors === undefined || extraTensors.size === 0 ? {} : { extraTensors }),
    ...(opts.extra === undefined ? {} : { extra: opts.extra }),
  });
}

const toTensor = (t: CheckpointTensor): tf.Tensor =>
  tf.tensor(t.data, [...t.shape], t.dtype === 'F32' ? 'float32' : t.dtype === 'I32' ? 'int32' : 'bool');

/**
 * Load a checkpoint written by {@link saveModelCheckpoint}: `build` makes the model from config.json's `model`
 * (`parse` validates it first), whose parameter names and shapes the file must match exactly (a CheckpointError
 * names the first that does not) before its values are assigned.
 */
export async function loadModelCheckpoint<M extends Checkpointable, C>(
  dir: string,
  opts: { build: (config: C) => M; parse?: (value: unknown) => C },
): Promise<LoadedModelCheckpoint<M, C>> {
  let model: M | null = null;
  try {
    const loaded = await loadCheckpointFolder<C>(dir, {
      ...(opts.parse === undefined ? {} : { parseModel: opts.parse }),
      expectedTensors: (config) => {
        model?.dispose();
        model = opts.build(config);
        return new Map(model.namedParams().map((p) => [p.name, p.variable.shape]));
      },
    });
    const built = model as M | null;
    if (built === null)
      throw new CheckpointError('INVALID_CONFIG', `${dir}: the model could not be built from config.json`);
    for (const p of built.namedParams()) {
      const t = toTensor(loaded.tensors.get(p.name) as CheckpointTensor);
      p.variable.assign(t);
      t.dispose();
    }
    const extraTensors = new Map([...loaded.extraTensors].map(([name, t]) => [name, toTensor(t)] as const));
    return { model: built, config: loaded.model, extra: loaded.extra, extraTensors, dir: loaded.dir };
  } catch (err) {
    (model as M | null)?.dispose();
    throw err;
  }
}

/**
 * Save model + optimizer + trainer state to `dir` (atomically: a crash leaves the previous checkpoint or this one).
 * A LanguageModel is written as gpu-layers' checkpoint, a {@link Checkpointable} model by {@link saveModelCheckpoint}.
 */
export async function saveTrainerCheckpoint(
  dir: string,
  model: TrainableModel,
  optimizer: AdamW,
  state: TrainerState,
  extra: { [key: string]: CheckpointJson } = {},
): Promise<void> {
  const tensors = optimizer.stateTensors();
  try {
    const trainer = JSON.parse(JSON.stringify(state)) as CheckpointJson;
    const opts = { extra: { ...extra, trainer }, extraTensors: tensors };
    if (isCheckpointable(model)) await saveModelCheckpoint(dir, model, opts);
    else await saveCheckpoint(dir, model, opts);
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

function isTrainerState(v: unknown): v is TrainerState {
  const o = v as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    Number.isInteger(o['step']) &&
    typeof o['tokensSeen'] === 'number' &&
    typeof o['trainSeconds'] === 'number' &&
    Array.isArray(o['rng']) &&
    (o['rng'] as unknown[]).length === 4 &&
    typeof o['optimizer'] === 'object' &&
    o['optimizer'] !== null &&
    'data' in o &&
    'best' in o
  );
}

/** How to rebuild a Checkpointable model from its checkpoint (see {@link loadModelCheckpoint}). */
export interface BuildOptions<M extends Checkpointable, C> {
  build: (config: C) => M;
  parse?: (value: unknown) => C;
}

/**
 * Load a checkpoint written by {@link saveTrainerCheckpoint}. Without `build`, a gpu-layers LanguageModel checkpoint
 * (its checks apply first: a corrupt or truncated file is a CheckpointError naming it); with `build`, a Checkpointable
 * model's. A model-only checkpoint (no trainer state) is a TrainerCheckpointError.
 */
export async function loadTrainerCheckpoint(dir: string): Promise<LoadedTrainerCheckpoint>;
export async function loadTrainerCheckpoint<M extends Checkpointable, C>(
  dir: string,
  opts: BuildOptions<M, C>,
): Promise<LoadedTrainerCheckpoint<M, C>>;
export async function loadTrainerCheckpoint<M extends Checkpointable, C>(
  dir: string,
  opts?: BuildOptions<M, C>,
): Promise<LoadedTrainerCheckpoint<M | LanguageModel, C | ModelConfig>> {
  const loaded = opts === undefined ? await loadCheckpoint(dir) : await loadModelCheckpoint(dir, opts);
  const { trainer, ...extra } = loaded.extra;
  if (!isTrainerState(trainer)) {
    loaded.model.dispose();
    for (const t of loaded.extraTensors.values()) t.dispose();
    throw new TrainerCheckpointError(
      `${dir} is a model checkpoint without trainer state (extra.trainer): ` +
        'it can be evaluated or sampled, but not resumed',
    );
  }
  if (trainer.optimizer.step !== trainer.step) {
    loaded.model.dispose();
    for (const t of loaded.extraTensors.values()) t.dispose();
    throw new TrainerCheckpointError(
      `${dir}: its trainer state is at step ${trainer.step} but its optimizer state at step ${String(trainer.optimizer.step)}` +
        ' (one update per step, so they are always equal when saved): config.json was edited; resume from another ' +
        'checkpoint (checkpoints/best) or restore this one',
    );
  }
  return { model: loaded.model, config: loaded.config, state: trainer, optimizerTensors: loaded.extraTensors, extra };
}

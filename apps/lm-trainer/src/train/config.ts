// The training config: from the flags (sequence length, batch, optimizer, run length), as a run's config.json stores
// it, the run's length in steps and what each evaluation covers. Imported by command.ts (the plan), run.ts (which
// trains) and report.ts (the report), and by the commands that take the same flags or read run folders (compare,
// bench, ladder, study); it imports no file of train/, so no two of them import each other.
import { PRESETS, type ModelConfig, type PresetName } from '@grassflow/gpu-layers';
import {
  DEFAULT_EARLY_STOP,
  optimizerConfigFrom,
  UsageError,
  type EarlyStopRule,
  type OptimizerConfig,
  type RunProvenance,
} from '@grassflow/training';
import type { CommonTrainFlags, ModelKind } from '../shared/model-options.js';

/** Hyper-parameters of a training run (config.json's `training`). */
export interface TrainingConfig extends OptimizerConfig {
  batch: number;
  /**
   * Sequences per forward/backward pass (gradient accumulation over batch/microBatch passes); absent: the whole batch.
   */
  microBatch?: number;
  /** L: tokens per training row (the model's maxLen, its positional table, is made to hold it: modelConfigFrom). */
  seqLen: number;
  /** Requested length as given: { epochs } | { steps } | { tokens }. */
  length: { epochs: number } | { steps: number } | { tokens: number };
  evalEvery: number;
  evalTokens: number | null;
  checkpointEvery: number | null;
  logEvery: number;
  seed: number;
  /** --early-stop: the rule that ends the run on validation before its length (absent: the run goes to its length). */
  earlyStop?: EarlyStopRule;
}

/**
 * The sequence length of a run, resolved once: the flag, else the command's default (compare's 64), else the preset's
 * positional table (train and bench).
 */
export function seqLenOf(f: Pick<CommonTrainFlags, 'seq-len' | 'preset'>, fallback?: number): number {
  return f['seq-len'] ?? fallback ?? PRESETS[f.preset as PresetName].maxLen;
}

/**
 * --micro-batch M checked against --batch B (once, for train and bench): M must divide B, each step then
 * accumulates B/M equal passes. Returns M, or undefined when it is absent or equals B (no accumulation).
 */
export function microBatchOf(batch: number, micro: number | undefined): number | undefined {
  if (micro === undefined || micro === batch) return undefined;
  if (micro > batch || batch % micro !== 0) {
    throw new UsageError(
      `--micro-batch ${micro} must divide --batch ${batch} (each step accumulates B/M equal passes)`,
      'micro-batch',
    );
  }
  return micro;
}

/**
 * The run's length from --epochs/--steps/--tokens: at most one of them; none: `fallback` (train's 1 epoch; compare
 * gives its token budget, which any of the three flags replaces).
 */
export function runLengthFrom(
  f: Pick<CommonTrainFlags, 'epochs' | 'steps' | 'tokens'>,
  fallback: TrainingConfig['length'] = { epochs: 1 },
): TrainingConfig['length'] {
  const given = (['epochs', 'steps', 'tokens'] as const).filter((k) => f[k] !== undefined);
  if (given.length > 1)
    throw new UsageError(
      `give only one of --epochs, --steps, --tokens (got ${given.map((k) => `--${k}`).join(' and ')})`,
      given[1],
    );
  if (f.steps !== undefined) return { steps: f.steps };
  if (f.tokens !== undefined) return { tokens: f.tokens };
  return f.epochs !== undefined ? { epochs: f.epochs } : fallback;
}

/** Training config from the flags at sequence length `seqLen`; the length: see {@link runLengthFrom}. */
export function trainingConfigFrom(
  f: CommonTrainFlags,
  seqLen: number,
  fallbackLength?: TrainingConfig['length'],
): TrainingConfig {
  const length = runLengthFrom(f, fallbackLength);
  const micro = microBatchOf(f.batch, f['micro-batch']);
  return {
    batch: f.batch,
    ...(micro === undefined ? {} : { microBatch: micro }),
    seqLen,
    ...optimizerConfigFrom(f),
    length,
    evalEvery: f['eval-every'],
    evalTokens: f['eval-tokens'] ?? null,
    checkpointEvery: f['checkpoint-every'] ?? null,
    logEvery: f['log-every'],
    seed: f.seed,
    ...(f['early-stop'] === true ? { earlyStop: { ...DEFAULT_EARLY_STOP } } : {}),
  };
}

/** Optimizer steps of a run: ⌈epochs · batches/epoch⌉, the given steps, or ⌈tokens / (B·L)⌉. */
export function totalStepsOf(t: TrainingConfig, batchesPerEpoch: number): number {
  if ('steps' in t.length) return t.length.steps;
  if ('tokens' in t.length) return Math.ceil(t.length.tokens / (t.batch * t.seqLen));
  return Math.max(1, Math.ceil(t.length.epochs * batchesPerEpoch));
}

/**
 * config.json `training` as stored: the sequence length under its old key `block`, which existing run folders,
 * study ledgers and scripts read (the one place where the name is kept).
 */
export type StoredTrainingConfig = Omit<TrainingConfig, 'seqLen'> & { block: number };

/** The training config as config.json stores it (`seqLen` under `block`, the key existing runs and scripts read). */
export function storedTrainingConfig(t: TrainingConfig): StoredTrainingConfig {
  const { seqLen, ...rest } = t;
  const { batch, microBatch, ...others } = rest;
  return { batch, ...(microBatch === undefined ? {} : { microBatch }), block: seqLen, ...others };
}

/** The training config of a stored config.json `training`. */
export function readTrainingConfig(t: StoredTrainingConfig): TrainingConfig {
  const { block, ...rest } = t;
  return { ...rest, seqLen: block };
}

/** config.json of a run folder: everything needed to repeat the run. */
export interface RunConfig extends RunProvenance {
  format: 'grassflow-lm-run';
  formatVersion: 1;
  command: string;
  modelKind: ModelKind;
  preset: string;
  model: ModelConfig;
  params: number;
  training: TrainingConfig;
  totalSteps: number;
  /** Each extension of the run to a new total (`train --resume DIR --steps N`), oldest first; absent: none. */
  history?: RunExtension[];
  data: {
    tokenizer: string;
    tokenizerId: string;
    dataDir: string;
    /** --train-file's paths, when the run trained on the user's text (absent: WikiText-2). */
    trainFiles?: string[];
    /** --valid-file's paths (absent with trainFiles: the end of the training text validates). */
    validFiles?: string[];
    trainTokens: number;
    validTokens: number;
    /** wiki.valid tokens every evaluation scores (the first ones): --eval-tokens, the default, or all. */
    evalTokens: number;
  };
}

/** One extension of a run in config.json's `history`. */
export interface RunExtension {
  /** ISO time of the extension. */
  time: string;
  /** The total steps before and after. */
  fromSteps: number;
  toSteps: number;
  /** The step of the checkpoint it continued from. */
  atStep: number;
  /** The length as given then (--steps, --tokens or --epochs). */
  length: TrainingConfig['length'];
}

/** Floor of the default evaluation: 16,384 tokens (compare's default), enough for a perplexity to ~1%. */
export const MIN_DEFAULT_EVAL_TOKENS = 16_384;

/**
 * wiki.valid tokens each evaluation of `train` scores when --eval-tokens is not given: a quarter of the run's
 * training tokens, at least {@link MIN_DEFAULT_EVAL_TOKENS} (and at most the split). A forward pass costs about a
 * third of a training step per token, so the final evaluation costs about 1/12 of the training, and a short run is
 * not followed by minutes of scoring all of wiki.valid; a run of 4× the split's tokens or more scores all of it.
 */
export function defaultEvalTokens(trainTokens: number): number {
  return Math.max(MIN_DEFAULT_EVAL_TOKENS, Math.ceil(trainTokens / 4));
}

/** What every evaluation of a run covers, in words (the first progress line and the report say it). */
export function evalCoverage(cfg: Pick<RunConfig, 'data' | 'training' | 'totalSteps'>): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const { evalTokens, validTokens } = cfg.data;
  const of = validationName(cfg.data);
  if (evalTokens >= validTokens) return `validation on all ${n(validTokens)} ${of} tokens`;
  const part = `validation on the first ${n(evalTokens)} of ${n(validTokens)} ${of} tokens`;
  if (cfg.training.evalTokens !== null) return `${part} (--eval-tokens)`;
  return (
    `${part} (the default: a quarter of the run's ${n(cfg.totalSteps * cfg.training.batch * cfg.training.seqLen)} ` +
    `training tokens, at least ${n(MIN_DEFAULT_EVAL_TOKENS)}; train --full-eval scores all of them)`
  );
}

/** What a run validates on, in words: wiki.valid, the --valid-file text, or the held-out end of --train-file's. */
function validationName(data: Pick<RunConfig['data'], 'trainFiles' | 'validFiles'>): string {
  if (data.trainFiles === undefined) return 'wiki.valid';
  return (data.validFiles ?? []).length > 0 ? '--valid-file' : "held-out (the training text's last tenth)";
}

/** JSON kept in every checkpoint so `eval` and `generate` can rebuild the tokenizer. */
export function checkpointExtra(cfg: RunConfig): {
  run: { modelKind: string; tokenizer: string; tokenizerId: string; block: number };
} {
  const { modelKind, data, training } = cfg;
  // `block`: the key checkpoints have always stored seqLen under
  return { run: { modelKind, tokenizer: data.tokenizer, tokenizerId: data.tokenizerId, block: training.seqLen } };
}

/** config.json as stored: RunConfig with the training config's stored form. */
export type StoredRunConfig = Omit<RunConfig, 'training'> & { training: StoredTrainingConfig };

/** The RunConfig of a config.json read on --resume. */
export function resumedConfig(stored: StoredRunConfig): RunConfig {
  return { ...stored, training: readTrainingConfig(stored.training) };
}

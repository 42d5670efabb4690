// The run's config.json: the training config as a run stores it, its length and what each evaluation covers
// (imported by run.ts, which trains, and report.ts, which writes the report).
import type { ModelConfig } from '@grassflow/gpu-layers';
import type { RunProvenance } from '@grassflow/training';
import { readTrainingConfig } from '../shared/model-options.js';
import type { ModelKind, StoredTrainingConfig, TrainingConfig } from '../shared/model-options.js';

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
  if (evalTokens >= validTokens) return `validation on all ${n(validTokens)} wiki.valid tokens`;
  const part = `validation on the first ${n(evalTokens)} of ${n(validTokens)} wiki.valid tokens`;
  if (cfg.training.evalTokens !== null) return `${part} (--eval-tokens)`;
  return (
    `${part} (the default: a quarter of the run's ${n(cfg.totalSteps * cfg.training.batch * cfg.training.seqLen)} ` +
    `training tokens, at least ${n(MIN_DEFAULT_EVAL_TOKENS)}; train --full-eval scores all of wiki.valid)`
  );
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

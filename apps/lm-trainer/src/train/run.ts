// One training run of a language model: fresh or resumed, in a run folder, with its report
// (on @grassflow/training's run lifecycle).
import {
  countParams,
  createModel,
  frequencyOrder,
  type BackendInfo,
  type LanguageModel,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import type { LmBatcherState } from '@grassflow/datasets';
import { checkNewRunFolder, createRun, runProvenance, trainRun, UsageError } from '@grassflow/training';
import { loadTrainerCheckpoint, namedParameters, saveTrainerCheckpoint } from '@grassflow/training';
import type {
  OpenedRun,
  RunControl,
  RunProvenance,
  RunOutcome as GenericRunOutcome,
  RunStart,
} from '@grassflow/training';
import type { RunData } from '../shared/corpus.js';
import { LmTrainTask } from '../shared/lm-task.js';
import { readTrainingConfig, storedTrainingConfig, totalStepsOf } from '../shared/model-options.js';
import type { ModelKind, StoredTrainingConfig, TrainingConfig } from '../shared/model-options.js';
import { writeRunReport } from './report.js';

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
  data: {
    tokenizer: string;
    tokenizerId: string;
    dataDir: string;
    trainTokens: number;
    validTokens: number;
    evalTokens: number;
  };
}

/** JSON kept in every checkpoint so `eval` and `generate` can rebuild the tokenizer. */
export function checkpointExtra(cfg: RunConfig): {
  run: { modelKind: string; tokenizer: string; tokenizerId: string; block: number };
} {
  const { modelKind, data, training } = cfg;
  // `block`: the key checkpoints have always stored seqLen under
  return { run: { modelKind, tokenizer: data.tokenizer, tokenizerId: data.tokenizerId, block: training.seqLen } };
}

/** A fresh run as `train` (or `compare`, once per kind) resolved it from the flags. */
export interface FreshRun {
  out: string;
  modelKind: ModelKind;
  preset: string;
  model: ModelConfig;
  training: TrainingConfig;
  /** The command line, recorded in config.json. */
  command: string;
  control: RunControl;
}

/** config.json as stored: RunConfig with the training config's stored form. */
export type StoredRunConfig = Omit<RunConfig, 'training'> & { training: StoredTrainingConfig };

/** The RunConfig of a config.json read on --resume. */
export function resumedConfig(stored: StoredRunConfig): RunConfig {
  return { ...stored, training: readTrainingConfig(stored.training) };
}

/** How a run ended, with its config. */
export type RunOutcome = GenericRunOutcome<RunConfig>;

function validSlice(valid: Int32Array, evalTokens: number | null): Int32Array {
  return evalTokens === null ? valid : valid.subarray(0, Math.min(valid.length, evalTokens));
}

/**
 * A fresh run: write config.json, build the model from the seed, train. Refuses a folder that already holds a run,
 * and a batch larger than the training data (the one check of --batch against the data).
 */
export async function startRun(plan: FreshRun, data: RunData, backend: BackendInfo): Promise<RunOutcome> {
  checkNewRunFolder(plan.out);
  const { batch, seqLen } = plan.training;
  const chunks = Math.floor(data.train.length / (seqLen + 1)); // as LmTrainBatcher
  const batchesPerEpoch = Math.floor(chunks / batch); // full batches only (dropLastBatch)
  if (batchesPerEpoch < 1) {
    throw new UsageError(
      `--batch ${batch} is more than the ${chunks} chunks of ${seqLen + 1} tokens in the training data`,
      'batch',
    );
  }
  const valid = validSlice(data.valid, plan.training.evalTokens);
  const config: RunConfig = {
    format: 'grassflow-lm-run',
    formatVersion: 1,
    command: plan.command,
    modelKind: plan.modelKind,
    preset: plan.preset,
    model: plan.model,
    params: countParams(plan.model),
    training: plan.training,
    totalSteps: totalStepsOf(plan.training, batchesPerEpoch),
    data: {
      tokenizer: data.tok.kind,
      tokenizerId: data.tok.id,
      dataDir: data.dataDir,
      trainTokens: data.train.length,
      validTokens: data.valid.length,
      evalTokens: valid.length,
    },
    ...runProvenance(backend),
  };
  const run = await createRun(plan.out, { ...config, training: storedTrainingConfig(config.training) });
  const model = createModel(plan.model, { seed: plan.training.seed });
  // an adaptive head's clusters are frequency ranks: rank the vocabulary by the training split (stored in checkpoints)
  model.adaptiveHead?.setVocabOrder(frequencyOrder(data.train, plan.model.vocabSize));
  return train({ opened: { run, config }, model: model, data: data, start: plan.control });
}

/** Continue the run (opened by openRunToResume) from checkpoints/latest: same config, moments, RNG, data position. */
export async function resumeRun(
  { run, config }: OpenedRun<RunConfig>,
  data: RunData,
  opts: RunControl,
): Promise<RunOutcome> {
  if (data.tok.id !== config.data.tokenizerId) {
    throw new UsageError(
      `--resume ${run.dir}: the run used tokenizer ${config.data.tokenizerId}, the data folder gives ${data.tok.id}`,
      'resume',
    );
  }
  const ck = await loadTrainerCheckpoint(run.latestCheckpoint);
  return train({ opened: { run, config }, model: ck.model, data: data, start: { ...opts, resume: ck } });
}

/** One run's pieces: the folder and its config, the model, the data, and how it starts. */
type RunParts = { opened: OpenedRun<RunConfig>; model: LanguageModel; data: RunData; start: RunStart };

async function train({ opened: { run, config }, model, data, start }: RunParts): Promise<RunOutcome> {
  const t = config.training;
  const task = new LmTrainTask(model, data.train, validSlice(data.valid, t.evalTokens), {
    seqLen: t.seqLen,
    batch: t.batch,
    seed: t.seed,
    ...(t.microBatch === undefined ? {} : { microBatch: t.microBatch }),
  });
  const o = await trainRun<LmBatcherState>(task, {
    run,
    params: namedParameters(model),
    optimizer: t,
    totalSteps: config.totalSteps,
    seed: t.seed,
    evalEvery: t.evalEvery,
    logEvery: t.logEvery,
    ...(t.checkpointEvery === null ? {} : { checkpointEvery: t.checkpointEvery }),
    ...(start.stopAtStep === undefined ? {} : { stopAtStep: start.stopAtStep }),
    bestMetric: 'val_ppl',
    save: (dir, state, optimizer) => saveTrainerCheckpoint(dir, model, optimizer, state, checkpointExtra(config)),
    ...(start.resume === undefined ? {} : { resume: start.resume }),
    quiet: start.quiet,
    describe:
      `${config.modelKind} (${config.params.toLocaleString('en-US')} params), ` +
      `${config.totalSteps} steps of ${t.batch}×${t.seqLen} tokens, backend ${config.backend.name}`,
    report: () => writeRunReport(run, config),
    dispose: () => model.dispose(),
  });
  return { ...o, config };
}

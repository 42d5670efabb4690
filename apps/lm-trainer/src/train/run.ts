// One training run of a language model: fresh or resumed, in a run folder, with its report (lifecycle: @grassflow/training).
import { countParams, createModel, type BackendInfo, type LanguageModel, type ModelConfig } from '@grassflow/gpu-layers';
import type { LmBatcherState } from '@grassflow/datasets';
import {
  checkNewRunFolder,
  createRun,
  loadTrainerCheckpoint,
  namedParameters,
  runProvenance,
  saveTrainerCheckpoint,
  trainRun,
  UsageError,
  type OpenedRun,
  type RunControl,
  type RunFolder,
  type RunProvenance,
  type RunOutcome as GenericRunOutcome,
  type ResumePoint,
} from '@grassflow/training';
import type { CorpusTokenizer } from '../shared/corpus.js';
import { LmTrainTask } from '../lm-task.js';
import { totalStepsOf, type ModelKind, type TrainingConfig } from '../shared/model-options.js';
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
  data: { tokenizer: string; tokenizerId: string; dataDir: string; trainTokens: number; validTokens: number; evalTokens: number };
}

/** Token ids a run trains and validates on. */
export interface RunData {
  tok: CorpusTokenizer;
  dataDir: string;
  train: Int32Array;
  valid: Int32Array;
}

/** JSON kept in every checkpoint so `eval` and `generate` can rebuild the tokenizer. */
export function checkpointExtra(cfg: RunConfig): { run: { modelKind: string; tokenizer: string; tokenizerId: string; block: number } } {
  return { run: { modelKind: cfg.modelKind, tokenizer: cfg.data.tokenizer, tokenizerId: cfg.data.tokenizerId, block: cfg.training.block } };
}

/** How a run ended, with its config. */
export type RunOutcome = GenericRunOutcome<RunConfig>;

function validSlice(valid: Int32Array, evalTokens: number | null): Int32Array {
  return evalTokens === null ? valid : valid.subarray(0, Math.min(valid.length, evalTokens));
}

/** A fresh run: write config.json, build the model from the seed, train. Refuses a folder that already holds a run. */
export async function startRun(args: {
  out: string;
  modelKind: ModelKind;
  preset: string;
  model: ModelConfig;
  training: TrainingConfig;
  data: RunData;
  backend: BackendInfo;
  command: string;
  quiet: boolean;
  stopAtStep?: number;
}): Promise<RunOutcome> {
  checkNewRunFolder(args.out);
  const chunks = Math.floor(args.data.train.length / (args.training.block + 1)); // as LmTrainBatcher
  const batchesPerEpoch = Math.floor(chunks / args.training.batch); // full batches only (dropLastBatch)
  if (batchesPerEpoch < 1) {
    throw new UsageError(`--batch ${args.training.batch} is more than the ${chunks} chunks of ${args.training.block + 1} tokens in the training data`, 'batch');
  }
  const valid = validSlice(args.data.valid, args.training.evalTokens);
  const config: RunConfig = {
    format: 'grassflow-lm-run',
    formatVersion: 1,
    command: args.command,
    modelKind: args.modelKind,
    preset: args.preset,
    model: args.model,
    params: countParams(args.model),
    training: args.training,
    totalSteps: totalStepsOf(args.training, batchesPerEpoch),
    data: { tokenizer: args.data.tok.kind, tokenizerId: args.data.tok.id, dataDir: args.data.dataDir, trainTokens: args.data.train.length, validTokens: args.data.valid.length, evalTokens: valid.length },
    ...runProvenance(args.backend),
  };
  const run = await createRun(args.out, config);
  const model = createModel(args.model, { seed: args.training.seed });
  return train(run, config, model, args.data, { quiet: args.quiet, stopAtStep: args.stopAtStep });
}

/** Continue the run (opened by openRunToResume) from checkpoints/latest: same config, optimizer moments, RNG and data position. */
export async function resumeRun({ run, config }: OpenedRun<RunConfig>, data: RunData, opts: RunControl): Promise<RunOutcome> {
  if (data.tok.id !== config.data.tokenizerId) {
    throw new UsageError(`--resume ${run.dir}: the run used tokenizer ${config.data.tokenizerId}, the data folder gives ${data.tok.id}`, 'resume');
  }
  const ck = await loadTrainerCheckpoint(run.latestCheckpoint);
  return train(run, config, ck.model, data, { ...opts, resume: { state: ck.state, optimizerTensors: ck.optimizerTensors } });
}

async function train(
  run: RunFolder,
  config: RunConfig,
  model: LanguageModel,
  data: RunData,
  opts: RunControl & { resume?: ResumePoint },
): Promise<RunOutcome> {
  const t = config.training;
  const task = new LmTrainTask(model, data.train, validSlice(data.valid, t.evalTokens), {
    block: t.block,
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
    ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
    bestMetric: 'val_ppl',
    save: (dir, state, optimizer) => saveTrainerCheckpoint(dir, model, optimizer, state, checkpointExtra(config)),
    ...(opts.resume === undefined ? {} : { resume: opts.resume }),
    quiet: opts.quiet,
    describe:
      `${config.modelKind} (${config.params.toLocaleString('en-US')} params), ` +
      `${config.totalSteps} steps of ${t.batch}×${t.block} tokens, backend ${config.backend.name}`,
    report: () => writeRunReport(run, config),
    dispose: () => model.dispose(),
  });
  return { ...o, config };
}

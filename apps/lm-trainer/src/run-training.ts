// One training run of a language model: fresh or resumed, in a run folder, with its report.
import { existsSync } from 'node:fs';
import { countParams, createModel, type BackendInfo, type LanguageModel, type ModelConfig } from '@grassflow/gpu-layers';
import type { LmBatcherState } from '@grassflow/datasets';
import {
  AdamW,
  defaultDecayFilter,
  gitCommit,
  loadTrainerCheckpoint,
  namedParameters,
  Progress,
  RunFolder,
  runTraining,
  saveTrainerCheckpoint,
  StopSignal,
  TrainingRng,
  UsageError,
  warmupCosineLr,
  type TrainLoopResult,
  type TrainerState,
} from '@grassflow/training';
import type { CorpusTokenizer } from './corpus.js';
import { LmTrainTask } from './lm-task.js';
import { totalStepsOf, type ModelKind, type TrainingConfig } from './model-options.js';
import { writeRunReport } from './run-report.js';

/** config.json of a run folder: everything needed to repeat the run. */
export interface RunConfig {
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
  backend: { name: string; simd?: boolean; threads?: number; tfjsCore: string };
  git: string | null;
  node: string;
  created: string;
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

export interface RunOutcome {
  run: RunFolder;
  config: RunConfig;
  result: TrainLoopResult;
  reportPath: string | null;
}

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
  const run = new RunFolder(args.out);
  if (run.exists() || existsSync(run.latestCheckpoint)) {
    throw new UsageError(`${run.dir} already holds a run: continue it with --resume ${args.out}, or choose another --out`, 'out');
  }
  const chunks = Math.floor(args.data.train.length / (args.training.block + 1)); // as LmTrainBatcher
  const batchesPerEpoch = Math.floor(chunks / args.training.batch); // full batches only (dropLastBatch)
  if (batchesPerEpoch < 1) {
    throw new UsageError(`--batch ${args.training.batch} is more than the ${chunks} chunks of ${args.training.block + 1} tokens in the training data`, 'batch');
  }
  const totalSteps = totalStepsOf(args.training, batchesPerEpoch);
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
    totalSteps,
    data: { tokenizer: args.data.tok.kind, tokenizerId: args.data.tok.id, dataDir: args.data.dataDir, trainTokens: args.data.train.length, validTokens: args.data.valid.length, evalTokens: valid.length },
    backend: { name: args.backend.name, simd: args.backend.simd, threads: args.backend.threads, tfjsCore: args.backend.tfjsCore },
    git: gitCommit(),
    node: process.version,
    created: new Date().toISOString(),
  };
  await run.init(config);
  const model = createModel(args.model, { seed: args.training.seed });
  return train(run, config, model, args.data, { quiet: args.quiet, stopAtStep: args.stopAtStep });
}

/** Continue the run in `dir` from checkpoints/latest: same config, optimizer moments, RNG and data position. */
export async function resumeRun(dir: string, data: RunData, opts: { quiet: boolean; stopAtStep?: number }): Promise<RunOutcome> {
  const run = new RunFolder(dir);
  if (!run.exists()) throw new UsageError(`--resume ${dir}: no config.json there; pass the run folder that train --out created`, 'resume');
  const config = await run.readConfig<RunConfig>();
  if (config.format !== 'grassflow-lm-run') throw new UsageError(`--resume ${dir}: config.json is not a grassflow-lm run`, 'resume');
  if (data.tok.id !== config.data.tokenizerId) {
    throw new UsageError(`--resume ${dir}: the run used tokenizer ${config.data.tokenizerId}, the data folder gives ${data.tok.id}`, 'resume');
  }
  const ck = await loadTrainerCheckpoint(run.latestCheckpoint);
  return train(run, config, ck.model, data, { ...opts, resume: ck });
}

async function train(
  run: RunFolder,
  config: RunConfig,
  model: LanguageModel,
  data: RunData,
  opts: { quiet: boolean; stopAtStep?: number; resume?: Awaited<ReturnType<typeof loadTrainerCheckpoint>> },
): Promise<RunOutcome> {
  const t = config.training;
  const optimizer = new AdamW(namedParameters(model), { beta1: t.beta1, beta2: t.beta2, weightDecay: t.weightDecay, decay: defaultDecayFilter() });
  const task = new LmTrainTask(model, data.train, validSlice(data.valid, t.evalTokens), {
    block: t.block,
    batch: t.batch,
    seed: t.seed,
    ...(t.microBatch === undefined ? {} : { microBatch: t.microBatch }),
  });
  let rng = new TrainingRng(t.seed);
  let start: TrainerState | undefined;
  if (opts.resume !== undefined) {
    const r = opts.resume;
    optimizer.loadState(r.optimizerTensors, r.state.optimizer);
    for (const x of r.optimizerTensors.values()) x.dispose();
    task.restore(r.state.data as unknown as LmBatcherState);
    rng = new TrainingRng(r.state.rng);
    start = r.state;
    await run.truncateMetricsAfter(r.state.step);
  }
  const progress = new Progress(config.totalSteps, { quiet: opts.quiet });
  progress.log(
    `${opts.resume ? `resuming ${run.dir} at step ${start?.step}` : `run ${run.dir}`}: ${config.modelKind} (${config.params.toLocaleString('en-US')} params), ` +
      `${config.totalSteps} steps of ${t.batch}×${t.block} tokens, backend ${config.backend.name}`,
  );
  const signal = new StopSignal().install();
  try {
    const result = await runTraining(task, {
      optimizer,
      rng,
      lr: (s) => warmupCosineLr(s, { peakLr: t.lr, warmupSteps: t.warmup, totalSteps: config.totalSteps, minLr: t.minLr }),
      totalSteps: config.totalSteps,
      clipNorm: t.clip,
      evalEvery: t.evalEvery,
      logEvery: t.logEvery,
      ...(t.checkpointEvery === null ? {} : { checkpointEvery: t.checkpointEvery }),
      ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
      bestMetric: 'val_ppl',
      run,
      save: (dir, state) => saveTrainerCheckpoint(dir, model, optimizer, state, checkpointExtra(config)),
      progress,
      signal,
      ...(start === undefined ? {} : { start }),
    });
    const reportPath = result.status === 'finished' ? await writeRunReport(run, config) : null;
    return { run, config, result, reportPath };
  } finally {
    signal.uninstall();
    optimizer.dispose();
    model.dispose();
  }
}

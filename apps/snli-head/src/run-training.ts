// One training run of an SNLI head: fresh or resumed, in a run folder (toolkit conventions), with its report.
import { existsSync } from 'node:fs';
import type { BackendInfo } from '@grassflow/gpu-layers';
import type { EncodedSnli } from '@grassflow/datasets';
import {
  AdamW,
  defaultDecayFilter,
  gitCommit,
  Progress,
  RunFolder,
  runTraining,
  StopSignal,
  TrainingRng,
  UsageError,
  warmupCosineLr,
  type TrainerState,
  type TrainLoopResult,
} from '@grassflow/training';
import type { FeatureTable } from './batches.js';
import { loadHeadCheckpoint, saveHeadCheckpoint, type LoadedHeadCheckpoint } from './head-checkpoint.js';
import { writeRunReport } from './run-report.js';
import { countParams, SnliModel, type HeadKind, type SnliModelConfig } from './snli-model.js';
import { SnliTrainTask, type SnliDataState } from './snli-task.js';

/** Training hyper-parameters (config.json `training`). */
export interface TrainingConfig {
  epochs: number;
  batch: number;
  lr: number;
  minLr: number;
  warmup: number;
  weightDecay: number;
  beta1: number;
  beta2: number;
  clip: number;
  seed: number;
  maxLen: number;
  /** Validate every N steps (0: once per epoch). */
  evalEvery: number;
  logEvery: number;
}

/** config.json of a run folder: everything needed to repeat the run. */
export interface RunConfig {
  format: 'grassflow-snli-run';
  formatVersion: 1;
  command: string;
  head: HeadKind;
  backbone: string;
  model: SnliModelConfig;
  params: { head: number; backbone: number; total: number };
  training: TrainingConfig;
  totalSteps: number;
  data: { dataDir: string; trainFile: string; trainPairs: number; trainIsSample: boolean; validFile: string; validPairs: number; tokenizerId: string };
  backend: { name: string; simd?: boolean; threads?: number; tfjsCore: string };
  git: string | null;
  node: string;
  created: string;
}

/** Encoded pairs (and frozen-backbone features, if any) a run trains and validates on. */
export interface RunData {
  train: EncodedSnli;
  valid: EncodedSnli;
  trainFeatures: FeatureTable | null;
  validFeatures: FeatureTable | null;
}

export interface RunOutcome {
  run: RunFolder;
  config: RunConfig;
  result: TrainLoopResult;
  reportPath: string | null;
}

/** A fresh run: write config.json, build the model from the seed, train. Refuses a folder that already holds a run. */
export async function startRun(args: {
  out: string;
  head: HeadKind;
  backbone: string;
  model: SnliModelConfig;
  training: TrainingConfig;
  data: RunData;
  dataInfo: RunConfig['data'];
  backend: BackendInfo;
  command: string;
  quiet: boolean;
  stopAtStep?: number;
}): Promise<RunOutcome> {
  const run = new RunFolder(args.out);
  if (run.exists() || existsSync(run.latestCheckpoint)) {
    throw new UsageError(`${run.dir} already holds a run: continue it with --resume ${args.out}, or choose another --out`, 'out');
  }
  const batchesPerEpoch = Math.floor(args.data.train.count / args.training.batch);
  if (batchesPerEpoch < 1) throw new UsageError(`--batch ${args.training.batch} is more than the ${args.data.train.count} training pairs`, 'batch');
  const config: RunConfig = {
    format: 'grassflow-snli-run',
    formatVersion: 1,
    command: args.command,
    head: args.head,
    backbone: args.backbone,
    model: args.model,
    params: countParams(args.model),
    training: args.training,
    totalSteps: args.training.epochs * batchesPerEpoch,
    data: args.dataInfo,
    backend: { name: args.backend.name, simd: args.backend.simd, threads: args.backend.threads, tfjsCore: args.backend.tfjsCore },
    git: gitCommit(),
    node: process.version,
    created: new Date().toISOString(),
  };
  await run.init(config);
  const model = new SnliModel(args.model, args.training.seed);
  return train(run, config, model, args.data, { quiet: args.quiet, stopAtStep: args.stopAtStep });
}

/** config.json of the run in `dir` (checked to be a grassflow-snli run). */
export async function readRunConfig(dir: string): Promise<RunConfig> {
  const run = new RunFolder(dir);
  if (!run.exists()) throw new UsageError(`--resume ${dir}: no config.json there; pass the run folder that train --out created`, 'resume');
  const config = await run.readConfig<RunConfig>();
  if (config.format !== 'grassflow-snli-run') throw new UsageError(`--resume ${dir}: config.json is not a grassflow-snli run`, 'resume');
  return config;
}

/** Continue the run in `dir` from checkpoints/latest: same config, weights, optimizer moments, RNG and data position. */
export async function resumeRun(dir: string, data: RunData, opts: { quiet: boolean; stopAtStep?: number }): Promise<RunOutcome> {
  const config = await readRunConfig(dir);
  const run = new RunFolder(dir);
  const ck = await loadHeadCheckpoint(run.latestCheckpoint);
  if (ck.trainer === undefined) throw new UsageError(`${run.latestCheckpoint} has no trainer state: it cannot be resumed`, 'resume');
  const model = new SnliModel(config.model, config.training.seed);
  try {
    model.params.assign(ck.weights);
  } catch (err) {
    model.dispose();
    throw err;
  } finally {
    for (const t of ck.weights.values()) t.dispose();
  }
  return train(run, config, model, data, { ...opts, resume: ck });
}

async function train(
  run: RunFolder,
  config: RunConfig,
  model: SnliModel,
  data: RunData,
  opts: { quiet: boolean; stopAtStep?: number | undefined; resume?: LoadedHeadCheckpoint },
): Promise<RunOutcome> {
  const t = config.training;
  const optimizer = new AdamW(model.params.named(), { beta1: t.beta1, beta2: t.beta2, weightDecay: t.weightDecay, decay: defaultDecayFilter() });
  const task = new SnliTrainTask(model, data.train, data.valid, { batch: t.batch, seed: t.seed, trainFeatures: data.trainFeatures, validFeatures: data.validFeatures });
  let rng = new TrainingRng(t.seed);
  let start: TrainerState | undefined;
  try {
    if (opts.resume !== undefined) {
      const r = opts.resume;
      const state = r.trainer as TrainerState;
      optimizer.loadState(r.optimizer, state.optimizer);
      task.restore(state.data as unknown as SnliDataState);
      rng = new TrainingRng(state.rng);
      start = state;
      await run.truncateMetricsAfter(state.step);
    }
  } finally {
    for (const x of opts.resume?.optimizer.values() ?? []) x.dispose();
  }
  const progress = new Progress(config.totalSteps, { quiet: opts.quiet });
  const p = config.params;
  progress.log(
    `${start !== undefined ? `resuming ${run.dir} at step ${start.step}` : `run ${run.dir}`}: ${config.head} head (${p.head.toLocaleString('en-US')} params` +
      `${p.backbone > 0 ? ` + ${p.backbone.toLocaleString('en-US')} embedding encoder` : ''}), backbone ${config.backbone}, ` +
      `${config.totalSteps} steps (${t.epochs} epochs of ${task.batchesPerEpoch} batches of ${t.batch} pairs), backend ${config.backend.name}`,
  );
  const meta = { model: config.model, backbone: config.backbone, maxLen: t.maxLen };
  const signal = new StopSignal().install();
  try {
    const result = await runTraining(task, {
      optimizer,
      rng,
      lr: (s) => warmupCosineLr(s, { peakLr: t.lr, warmupSteps: t.warmup, totalSteps: config.totalSteps, minLr: t.minLr }),
      totalSteps: config.totalSteps,
      clipNorm: t.clip,
      evalEvery: t.evalEvery > 0 ? t.evalEvery : task.batchesPerEpoch,
      logEvery: t.logEvery,
      ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
      bestMetric: 'val_loss',
      run,
      save: async (dir, state) => {
        const moments = optimizer.stateTensors();
        try {
          await saveHeadCheckpoint(dir, { ...meta, trainer: state }, model.params.named().map((n) => [n.name, n.variable]), moments);
        } finally {
          for (const m of moments.values()) m.dispose();
        }
      },
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

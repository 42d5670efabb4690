// One training run of an SNLI head: fresh or resumed, in a run folder (toolkit conventions), with its report.
import type { BackendInfo } from '@grassflow/gpu-layers';
import type { EncodedSnli } from '@grassflow/datasets';
import {
  checkNewRunFolder,
  createRun,
  runProvenance,
  saveTrainerCheckpoint,
  trainRun,
  UsageError,
} from '@grassflow/training';
import type { OpenedRun, RunControl, RunStart } from '@grassflow/training';
import type { RunOutcome as GenericRunOutcome } from '@grassflow/training';
import type { FeatureTable } from '../data/batches.js';
import { headCheckpointExtra, loadHeadTrainerCheckpoint } from '../model/head-checkpoint.js';
import { writeRunReport } from './report.js';
import type { RunConfig, TrainingConfig } from './config.js';
import { countParams, SnliModel, type HeadKind, type SnliModelConfig } from '../model/snli-model.js';
import { SnliTrainTask, type SnliDataState } from './task.js';

/** Encoded pairs (and frozen-backbone features, if any) a run trains and validates on. */
export interface RunData {
  train: EncodedSnli;
  valid: EncodedSnli;
  trainFeatures: FeatureTable | null;
  validFeatures: FeatureTable | null;
}

/** How a run ended, with its config. */
export type RunOutcome = GenericRunOutcome<RunConfig>;

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
  checkNewRunFolder(args.out);
  const batchesPerEpoch = Math.floor(args.data.train.count / args.training.batch);
  if (batchesPerEpoch < 1)
    throw new UsageError(
      `--batch ${args.training.batch} is more than the ${args.data.train.count} training pairs`,
      'batch',
    );
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
    ...runProvenance(args.backend),
  };
  const run = await createRun(args.out, config);
  const model = new SnliModel(args.model, args.training.seed);
  return train({
    opened: { run, config },
    model: model,
    data: args.data,
    start: { quiet: args.quiet, stopAtStep: args.stopAtStep },
  });
}

/** Continue the run (opened by openRunToResume) from checkpoints/latest: weights, moments, RNG, data position. */
export async function resumeRun(
  { run, config }: OpenedRun<RunConfig>,
  data: RunData,
  opts: RunControl,
): Promise<RunOutcome> {
  const ck = await loadHeadTrainerCheckpoint(run.latestCheckpoint);
  return train({ opened: { run, config }, model: ck.model, data: data, start: { ...opts, resume: ck } });
}

/** One run's pieces: the folder and its config, the model, the data, and how it starts. */
type RunParts = { opened: OpenedRun<RunConfig>; model: SnliModel; data: RunData; start: RunStart };

async function train({ opened: { run, config }, model, data, start }: RunParts): Promise<RunOutcome> {
  const t = config.training;
  const task = new SnliTrainTask(model, data.train, data.valid, {
    batch: t.batch,
    seed: t.seed,
    trainFeatures: data.trainFeatures,
    validFeatures: data.validFeatures,
  });
  const p = config.params;
  const extra = headCheckpointExtra({ backbone: config.backbone, seqLen: t.seqLen });
  const o = await trainRun<SnliDataState>(task, {
    run,
    params: model.namedParams(),
    optimizer: t,
    totalSteps: config.totalSteps,
    seed: t.seed,
    evalEvery: t.evalEvery > 0 ? t.evalEvery : task.batchesPerEpoch,
    logEvery: t.logEvery,
    ...(start.stopAtStep === undefined ? {} : { stopAtStep: start.stopAtStep }),
    bestMetric: 'val_loss',
    save: (dir, state, optimizer) => saveTrainerCheckpoint(dir, model, optimizer, state, extra),
    ...(start.resume === undefined ? {} : { resume: start.resume }),
    quiet: start.quiet,
    describe:
      `${config.head} head (${p.head.toLocaleString('en-US')} params` +
      `${p.backbone > 0 ? ` + ${p.backbone.toLocaleString('en-US')} embedding encoder` : ''}), ` +
      `backbone ${config.backbone}, ${config.totalSteps} steps ` +
      `(${t.epochs} epochs of ${task.batchesPerEpoch} batches of ${t.batch} pairs), backend ${config.backend.name}`,
    report: () => writeRunReport(run, config),
    dispose: () => model.dispose(),
  });
  return { ...o, config };
}

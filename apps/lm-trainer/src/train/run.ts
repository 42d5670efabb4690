// One training run of a language model: fresh or resumed, in a run folder, with its report
// (on @grassflow/training's run lifecycle).
import { join } from 'node:path';
import {
  countParams,
  describeParams,
  createModel,
  frequencyOrder,
  type BackendInfo,
  type LanguageModel,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import {
  checkEarlyStopRule,
  checkNewRunFolder,
  createRun,
  lrSchedule,
  runProvenance,
  trainLanguageModel,
} from '@grassflow/training';
import { UsageError } from '@grassflow/training';
import { warmupSteps, writeJsonAtomic } from '@grassflow/training';
import { loadCheckpointToResume, saveTrainerCheckpoint } from '@grassflow/training';
import type { OpenedRun, RunControl, RunOutcome as GenericRunOutcome, RunStart } from '@grassflow/training';
import { WORD_VOCAB_FILE, type RunData } from '../shared/corpus.js';
import type { ModelKind } from '../shared/model-options.js';
import { writeRunReport } from './report.js';
import { checkpointExtra, defaultEvalTokens, evalCoverage, storedTrainingConfig, totalStepsOf } from './config.js';
import type { RunConfig, RunExtension, TrainingConfig } from './config.js';

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
  /**
   * What the evaluation covers when training.evalTokens is null: 'proportionate' ({@link defaultEvalTokens}, train's
   * default) or 'full' (all of wiki.valid: --full-eval, studies, and callers that do not say).
   */
  evalDefault?: 'proportionate' | 'full';
}

/** How a run ended, with its config. */
export type RunOutcome = GenericRunOutcome<RunConfig>;

function validSlice(valid: Int32Array, evalTokens: number | null): Int32Array {
  return evalTokens === null ? valid : valid.subarray(0, Math.min(valid.length, evalTokens));
}

/** Full batches of B rows of L + 1 tokens in the training ids (as LmTrainBatcher with dropLastBatch). */
function batchesPerEpochOf(trainIds: number, t: Pick<TrainingConfig, 'batch' | 'seqLen'>): number {
  return Math.floor(Math.floor(trainIds / (t.seqLen + 1)) / t.batch);
}

/**
 * A fresh run: write config.json, build the model from the seed, train. Refuses a folder that already holds a run,
 * and a batch larger than the training data (the one check of --batch against the data).
 */
export async function startRun(plan: FreshRun, data: RunData, backend: BackendInfo): Promise<RunOutcome> {
  checkNewRunFolder(plan.out);
  const { batch, seqLen } = plan.training;
  const chunks = Math.floor(data.train.length / (seqLen + 1)); // as LmTrainBatcher
  const batchesPerEpoch = batchesPerEpochOf(data.train.length, plan.training); // full batches only (dropLastBatch)
  if (batchesPerEpoch < 1) {
    throw new UsageError(
      `--batch ${batch} is more than the ${chunks} chunks of ${seqLen + 1} tokens in the training data`,
      'batch',
    );
  }
  const totalSteps = totalStepsOf(plan.training, batchesPerEpoch);
  const evalTokens =
    plan.training.evalTokens ??
    (plan.evalDefault === 'proportionate' ? defaultEvalTokens(totalSteps * batch * seqLen) : null);
  const valid = validSlice(data.valid, evalTokens);
  const config: RunConfig = {
    format: 'grassflow-lm-run',
    formatVersion: 1,
    command: plan.command,
    modelKind: plan.modelKind,
    preset: plan.preset,
    model: plan.model,
    params: countParams(plan.model),
    training: plan.training,
    totalSteps,
    data: {
      tokenizer: data.tok.kind,
      tokenizerId: data.tok.id,
      dataDir: data.dataDir,
      ...(data.source.kind === 'files'
        ? { trainFiles: data.source.train, ...(data.source.valid.length > 0 ? { validFiles: data.source.valid } : {}) }
        : {}),
      trainTokens: data.train.length,
      validTokens: data.valid.length,
      evalTokens: valid.length,
    },
    ...runProvenance(backend),
  };
  const run = await createRun(plan.out, { ...config, training: storedTrainingConfig(config.training) });
  // a word-level run carries its vocabulary, so that a browser (apps/playground) rebuilds the same ids without the data
  data.tok.saveVocab?.(join(run.dir, WORD_VOCAB_FILE));
  const model = createModel(plan.model, { seed: plan.training.seed });
  // an adaptive head's clusters are frequency ranks: rank the vocabulary by the training split (stored in checkpoints)
  model.adaptiveHead?.setVocabOrder(frequencyOrder(data.train, plan.model.vocabSize));
  return train({ opened: { run, config }, model: model, data: data, start: plan.control });
}

/**
 * Continue the run (opened by openRunToResume) from checkpoints/latest: same config, moments, RNG, data position.
 * With `extend` (--steps/--tokens/--epochs next to --resume) a new total at least the old one: see {@link extendRun}.
 */
export async function resumeRun(
  { run, config }: OpenedRun<RunConfig>,
  data: RunData,
  opts: RunControl,
  extend?: { length: TrainingConfig['length']; flag: string },
): Promise<RunOutcome> {
  if (data.tok.id !== config.data.tokenizerId) {
    throw new UsageError(
      `--resume ${run.dir}: the run used tokenizer ${config.data.tokenizerId}, the data folder gives ${data.tok.id}`,
      'resume',
    );
  }
  const newTotal = extend === undefined ? config.totalSteps : extendedTotal(run.dir, config, data, extend);
  const ck = await loadCheckpointToResume(run); // a corrupt latest says whether best is intact
  const { cfg, note } =
    newTotal === config.totalSteps
      ? { cfg: config, note: null }
      : await extendRun(run, config, newTotal, ck.state.step, (extend as { length: RunExtension['length'] }).length);
  return train({
    opened: { run, config: cfg },
    model: ck.model,
    data: data,
    start: { ...opts, resume: ck },
    ...(note === null ? {} : { notes: [note] }),
  });
}

/** The total steps of `extend` for the run's batch and data; refuses one below the run's total. */
function extendedTotal(
  dir: string,
  config: RunConfig,
  data: RunData,
  extend: { length: TrainingConfig['length']; flag: string },
): number {
  const t = { ...config.training, length: extend.length };
  const total = totalStepsOf(t, batchesPerEpochOf(data.train.length, t));
  if (total < config.totalSteps) {
    throw new UsageError(
      `--resume ${dir} --${extend.flag}: that is ${total} steps, fewer than the run's ${config.totalSteps}: a run can ` +
        `be extended to a larger total, not shortened; use the checkpoint of an earlier step, or train a new run`,
      extend.flag,
    );
  }
  return total;
}

/**
 * Extend a run to `newTotal` steps (as HF Trainer resumes to a new max_steps): config.json gets the new total and
 * length, the warmup it had (the automatic one is pinned, so the steps already warmed stay the warmup) and a
 * `history` entry; the cosine decay then runs over the new total, evaluated from the resumed step on (the rate
 * rises to where the longer schedule has it at that step). Returns the new config and the line that says so.
 */
async function extendRun(
  run: OpenedRun<RunConfig>['run'],
  config: RunConfig,
  newTotal: number,
  atStep: number,
  length: RunExtension['length'],
): Promise<{ cfg: RunConfig; note: string }> {
  const old = config.training;
  const training: TrainingConfig = { ...old, length, warmup: warmupSteps(old, config.totalSteps) };
  const entry: RunExtension = {
    time: new Date().toISOString(),
    fromSteps: config.totalSteps,
    toSteps: newTotal,
    atStep,
    length,
  };
  const cfg: RunConfig = { ...config, training, totalSteps: newTotal, history: [...(config.history ?? []), entry] };
  await writeJsonAtomic(run.configPath, { ...cfg, training: storedTrainingConfig(training) });
  const before = lrSchedule(old, config.totalSteps)(atStep);
  const after = lrSchedule(training, newTotal)(atStep);
  const note =
    `extending the run from ${config.totalSteps} to ${newTotal} steps at step ${atStep}: the cosine decay now runs ` +
    `over ${newTotal} steps (lr of the next step ${before.toExponential(2)} → ${after.toExponential(2)}, warmup ` +
    `${training.warmup} steps as before); recorded in config.json's history`;
  return { cfg, note };
}

/** One run's pieces: the folder and its config, the model, the data, and how it starts. */
type RunParts = {
  opened: OpenedRun<RunConfig>;
  model: LanguageModel;
  data: RunData;
  start: RunStart;
  notes?: string[];
};

async function train({ opened: { run, config }, model, data, start, notes }: RunParts): Promise<RunOutcome> {
  const t = config.training;
  const o = await trainLanguageModel({
    model,
    ids: data.train,
    // the tokens config.json records (the resolved --eval-tokens or default), so a resume scores the same ones
    validIds: validSlice(data.valid, config.data.evalTokens),
    steps: config.totalSteps,
    batch: t.batch,
    seqLen: t.seqLen,
    ...(t.microBatch === undefined ? {} : { microBatch: t.microBatch }),
    optimizer: t,
    seed: t.seed,
    evalEvery: t.evalEvery,
    logEvery: t.logEvery,
    ...(t.earlyStop === undefined ? {} : { earlyStop: checkEarlyStopRule(t.earlyStop) }),
    folder: {
      run,
      save: (dir, state, optimizer) => saveTrainerCheckpoint(dir, model, optimizer, state, checkpointExtra(config)),
      report: () => writeRunReport(run, config),
      describe:
        `${config.modelKind} (${describeParams(model.config)}), ` +
        `${config.totalSteps} steps of ${t.batch}×${t.seqLen} tokens, backend ${config.backend.name}`,
      notes: [evalCoverage(config), ...(notes ?? [])],
      ...(t.checkpointEvery === null ? {} : { checkpointEvery: t.checkpointEvery }),
      ...(start.stopAtStep === undefined ? {} : { stopAtStep: start.stopAtStep }),
      ...(start.resume === undefined ? {} : { resume: start.resume }),
      quiet: start.quiet,
    },
    dispose: () => model.dispose(),
  });
  return { run: o.run, result: o.result, reportPath: o.reportPath, config };
}

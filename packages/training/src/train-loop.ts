// The training loop shared by the apps: steps, logging, periodic eval, best/latest checkpoints, signals.
import type * as tf from '@tensorflow/tfjs-core';
import type { CheckpointJson } from '@grassflow/gpu-layers';
import type { AdamW } from './adamw.js';
import { earlyStopDecision, type EarlyStopDecision, type EarlyStopRule } from './early-stop.js';
import { formatDuration, formatTrainLine, type Progress, type ProgressUpdate } from './progress.js';
import type { TrainingRng } from './rng.js';
import type { MetricRecord, RunSink } from './run-folder.js';
import { StopSignal } from './stop-signal.js';
import { trainStep } from './train-step.js';
import type { TrainerState } from './trainer-checkpoint.js';

/** The task-specific half of training: data, loss and evaluation. */
export interface TrainTask {
  /**
   * Build the next training batch and return its loss function (run under tf.variableGrads) and token count; with
   * `microLosses` (equal-sized micro-batches whose mean loss is `loss`), trainStep accumulates their gradients instead.
   */
  nextBatch(): { loss: () => tf.Scalar; tokens: number; microLosses?: Array<() => tf.Scalar> };
  /** The data position after the batches handed out so far (JSON, restored by the task on resume). */
  dataState(): CheckpointJson;
  /**
   * Validation: named numbers, including the metric that selects the best checkpoint. `progress`, when the task
   * calls it, is told the targets scored so far and in all (the loop shows them on the bar with an ETA).
   */
  evaluate(progress?: EvalProgress): Promise<Record<string, number>>;
}

/** Called by an evaluation after each batch: targets scored so far, and in all. */
export type EvalProgress = (tokens: number, totalTokens: number) => void;

/**
 * Steps between the plain training lines printed without a bar (not a TTY, or --quiet) when none is given: 10% of
 * the run, at least 1 (ten lines a run; a line is also printed when 30 s have passed since the last one).
 */
export function defaultPrintEvery(totalSteps: number): number {
  return Math.max(1, Math.round(totalSteps / 10));
}

/** Options of {@link runTraining}. */
export interface TrainLoopOptions {
  optimizer: AdamW;
  rng: TrainingRng;
  /** Learning rate of the update with 0-based index s. */
  lr: (s: number) => number;
  totalSteps: number;
  clipNorm?: number;
  /** Evaluate every N steps and at the end (0: only at the end). */
  evalEvery: number;
  /** Log a train record every N steps (default 10). */
  logEvery?: number;
  /**
   * Without a bar (quiet progress): print a training line (step, loss, lr, tokens/s, elapsed, ETA) every N steps
   * (default {@link defaultPrintEvery}: 10% of the run) and whenever `printSeconds` have passed since the last one.
   */
  printEvery?: number;
  /** Without a bar: the longest wall time between two training lines, seconds (default 30). */
  printSeconds?: number;
  /** Write checkpoints/latest every N steps (default: at each eval) and always at the end. */
  checkpointEvery?: number;
  /** Stop (with a checkpoint) after this step, as if interrupted; resume continues. */
  stopAtStep?: number;
  /** Metric from evaluate() that selects checkpoints/best (lower is better). */
  bestMetric: string;
  /**
   * Stop early on `bestMetric` by this rule ({@link earlyStopDecision}, checked after each evaluation); absent: the
   * run goes to totalSteps. The evaluations it reads travel in the trainer state, so a resume stops where the run
   * would have.
   */
  earlyStop?: EarlyStopRule;
  run: RunSink;
  /** Told each step's loss and learning rate after the update (what the bar shows). */
  onStep?: (update: ProgressUpdate) => void;
  /** Write a checkpoint (model + optimizer + state) to a folder. */
  save: (dir: string, state: TrainerState) => Promise<void>;
  progress: Progress;
  signal?: StopSignal;
  /** State to continue from (resume); a fresh run starts at step 0. */
  start?: TrainerState;
}

/** How a call to {@link runTraining} ended. */
export interface TrainLoopResult {
  status: 'finished' | 'stopped' | 'interrupted';
  state: TrainerState;
  signal?: NodeJS.Signals;
  lastEval: Record<string, number> | null;
  /** When the early-stopping rule ended the run (status 'finished' before totalSteps): why. */
  stoppedEarly?: EarlyStopDecision;
  /** Wall seconds of this call (steps, evaluations, checkpoints). */
  wallSeconds: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Run optimizer steps start.step + 1 … totalSteps. After each: a metrics record every `logEvery` steps,
 * evaluation every `evalEvery` (checkpoints/best when `bestMetric` improves), checkpoints/latest every
 * `checkpointEvery`, at the end, at `stopAtStep` and on SIGINT/SIGTERM. A non-finite loss throws
 * NonFiniteLossError from trainStep before any update or checkpoint of that step.
 */
export async function runTraining(task: TrainTask, o: TrainLoopOptions): Promise<TrainLoopResult> {
  const logEvery = o.logEvery ?? 10;
  const printEvery = o.printEvery ?? defaultPrintEvery(o.totalSteps);
  const printMs = (o.printSeconds ?? 30) * 1000;
  const wall0 = performance.now();
  let lastPrint = wall0;
  const elapsed = (): number => (performance.now() - wall0) / 1000;
  const ckptEvery = o.checkpointEvery ?? (o.evalEvery > 0 ? o.evalEvery : 0);
  const state: TrainerState = o.start
    ? { ...o.start }
    : {
        step: 0,
        tokensSeen: 0,
        trainSeconds: 0,
        rng: o.rng.state,
        data: task.dataState(),
        optimizer: o.optimizer.state,
        best: null,
        ...(o.earlyStop === undefined ? {} : { evals: [] }),
      };
  let lastEval: Record<string, number> | null = null;
  const startStep = state.step;
  let runSec = 0; // this process's training seconds (ETA)
  let windowTokens = 0; // since the last metrics record (tokens/s)
  let windowSec = 0;
  const snapshot = (): TrainerState => ({
    ...state,
    rng: o.rng.state,
    data: task.dataState(),
    optimizer: o.optimizer.state,
  });
  const saveLatest = async (): Promise<void> => o.save(o.run.latestCheckpoint, snapshot());

  const evaluate = async (): Promise<void> => {
    const t0 = performance.now();
    const metrics = await task.evaluate((tokens, totalTokens) =>
      o.progress.updateEval({ tokens, totalTokens, elapsedSec: (performance.now() - t0) / 1000 }),
    );
    const evalSec = (performance.now() - t0) / 1000;
    lastEval = metrics;
    const value = metrics[o.bestMetric];
    if (value === undefined) throw new Error(`evaluate() did not return the best-checkpoint metric '${o.bestMetric}'`);
    const improved = Number.isFinite(value) && (state.best === null || value < state.best.value);
    if (improved) state.best = { value, step: state.step };
    if (o.earlyStop !== undefined) {
      state.evals = [...(state.evals ?? []), [state.step, value]];
      const decision = earlyStopDecision(state.evals, o.earlyStop);
      if (decision !== null) state.stoppedEarly = decision;
    }
    const record: MetricRecord = {
      type: 'eval',
      step: state.step,
      ...metrics,
      eval_seconds: evalSec,
    };
    await o.run.appendMetric(record);
    const shown = Object.entries(metrics)
      .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(4)}`)
      .join(' ');
    o.progress.log(
      `step ${state.step}/${o.totalSteps} eval ${shown}${improved ? ' (best)' : ''} in ${formatDuration(evalSec)}`,
    );
    if (improved) await o.save(o.run.bestCheckpoint, snapshot());
    const stop = state.stoppedEarly;
    if (stop !== undefined && stop.step === state.step) {
      await o.run.appendMetric(earlyStopMetric(stop));
      o.progress.log(
        `step ${state.step}: early stop, ${o.bestMetric} ${stop.best.value.toFixed(4)} (step ${stop.best.step}) is ` +
          `${(stop.improvement * 100).toFixed(2)}% below ${stop.before.value.toFixed(4)} (step ${stop.before.step})`,
      );
    }
  };

  while (state.step < o.totalSteps && state.stoppedEarly === undefined) {
    const s = state.step; // 0-based index of this update
    const lr = o.lr(s);
    const t0 = performance.now();
    const batch = task.nextBatch();
    const { loss, gradNorm } = await trainStep(batch.microLosses ?? batch.loss, o.optimizer, {
      lr,
      clipNorm: o.clipNorm ?? 1.0,
      randomSeed: o.rng.nextUint32(),
      step: s + 1,
    });
    const dt = (performance.now() - t0) / 1000;
    state.step = s + 1;
    state.tokensSeen += batch.tokens;
    state.trainSeconds += dt;
    runSec += dt;
    windowTokens += batch.tokens;
    windowSec += dt;
    const tokensPerSec = windowTokens / Math.max(windowSec, 1e-9);
    const stepsDone = state.step - startStep;
    const etaSec = stepsDone > 0 ? ((o.totalSteps - state.step) * runSec) / stepsDone : null;
    const update = { step: state.step, loss, lr, tokensPerSec, etaSec, elapsedSec: elapsed() };
    o.progress.update(update);
    o.onStep?.(update);
    if (state.step % logEvery === 0 || state.step === o.totalSteps || state.step === startStep + 1) {
      await o.run.appendMetric({
        type: 'train',
        step: state.step,
        loss,
        lr,
        grad_norm: gradNorm,
        tokens: state.tokensSeen,
        tokens_per_s: tokensPerSec,
      });
      windowTokens = 0;
      windowSec = 0;
    }
    const now = performance.now();
    if (o.progress.quiet && (state.step % printEvery === 0 || now - lastPrint >= printMs)) {
      o.progress.log(formatTrainLine(update, o.totalSteps));
      lastPrint = now;
    }
    if (state.step === o.totalSteps || (o.evalEvery > 0 && state.step % o.evalEvery === 0)) await evaluate();
    const last = state.step === o.totalSteps || state.stoppedEarly !== undefined;
    await yieldToEventLoop(); // lets SIGINT/SIGTERM handlers run
    const sig = o.signal?.requested ?? null;
    if (last || sig !== null || state.step === o.stopAtStep || (ckptEvery > 0 && state.step % ckptEvery === 0))
      await saveLatest();
    if (sig !== null) {
      o.progress.done();
      return { status: 'interrupted', state: snapshot(), signal: sig, lastEval, wallSeconds: elapsed() };
    }
    if (!last && state.step === o.stopAtStep) {
      o.progress.done();
      return { status: 'stopped', state: snapshot(), lastEval, wallSeconds: elapsed() };
    }
  }
  o.progress.done();
  const stoppedEarly = state.stoppedEarly === undefined ? {} : { stoppedEarly: state.stoppedEarly };
  return { status: 'finished', state: snapshot(), lastEval, ...stoppedEarly, wallSeconds: elapsed() };
}

/** The metrics record of an early stop (metrics.jsonl `type: 'early_stop'`). */
function earlyStopMetric(d: EarlyStopDecision): MetricRecord {
  return {
    type: 'early_stop',
    step: d.step,
    best_step: d.best.step,
    best_value: d.best.value,
    before_step: d.before.step,
    before_value: d.before.value,
    improvement: d.improvement,
  };
}

/** Exit code for how a run ended: 0 when finished or stopped at --stop-at-step, 128 + signal when interrupted. */
export function runExitCode(result: TrainLoopResult): number {
  return result.status === 'interrupted' && result.signal !== undefined ? StopSignal.exitCode(result.signal) : 0;
}

/**
 * One line for stderr on how a run ended: where its checkpoint is and how to continue, or, when finished,
 * the best value of `metric` (e.g. 'val PPL', formatted by `format`) and where the report is.
 */
export function describeRunEnd(
  result: TrainLoopResult,
  run: { dir: string; latestCheckpoint: string },
  done: { metric: string; format: (value: number) => string; reportPath: string | null },
): string {
  const s = result.state;
  if (result.status === 'interrupted')
    return `interrupted by ${result.signal} at step ${s.step}: checkpoint ${run.latestCheckpoint}; continue with --resume ${run.dir}`;
  if (result.status === 'stopped')
    return `stopped at step ${s.step} (--stop-at-step): checkpoint ${run.latestCheckpoint}; continue with --resume ${run.dir}`;
  const best = s.best === null ? '?' : done.format(s.best.value);
  const early = result.stoppedEarly === undefined ? '' : ' (stopped early: validation no longer improving)';
  const took = `${formatDuration(result.wallSeconds)} wall time (${formatDuration(s.trainSeconds)} in training steps)`;
  const bestAt = `best ${done.metric} ${best} at step ${s.best?.step ?? '?'}`;
  return `done: ${s.step} steps${early} in ${took}, ${bestAt}; report ${done.reportPath}`;
}

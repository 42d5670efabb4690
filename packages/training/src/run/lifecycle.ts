// One training run from start to end, shared by the apps: the run folder and its provenance, the optimizer from a
// config, restore on --resume, progress, the stop signal, the training loop and the report.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type * as tf from '@tensorflow/tfjs-core';
import { describeAdapter, type BackendInfo } from '@grassflow/gpu-layers';
import { AdamW, defaultDecayFilter, type NamedVariable } from '../adamw.js';
import { UsageError, type FlagSpecs, type ParsedFlags } from '../flags.js';
import { warmupCosineLr } from '../lr-schedule.js';
import { Progress, type ProgressStream, type ProgressUpdate } from '../progress.js';
import { TrainingRng } from '../rng.js';
import { gitCommit, RunFolder, type RunSink } from '../run-folder.js';
import { isRunLockFile, lockedByOther, lockRunFolder } from './lock.js';
import { refuseOutputPlace } from './out-folder.js';
import { StopSignal } from '../stop-signal.js';
import type { EarlyStopRule } from '../early-stop.js';
import { runTraining, type TrainLoopResult, type TrainTask } from '../train-loop.js';
import { TrainerCheckpointError, type TrainerState } from '../trainer-checkpoint.js';

/** Flags of argv that were written explicitly (`--name` or `--name=value`), without the dashes. */
export function explicitFlags(argv: readonly string[]): Set<string> {
  return new Set(argv.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')[0] as string));
}

/** Flags that may accompany --resume in every app: the run's config.json fixes all others. */
export const RESUME_FLAGS: readonly string[] = ['resume', 'quiet', 'backend', 'data-dir', 'stop-at-step'];

/** Refuse a flag other than `allowed` next to --resume (a UsageError naming the first one). */
export function checkResumeFlags(argv: readonly string[], allowed: readonly string[] = RESUME_FLAGS): void {
  const extra = [...explicitFlags(argv)].filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw new UsageError(`--${extra[0]} cannot be combined with --resume: the run's config.json fixes it`, extra[0]);
  }
}

/** AdamW with linear warmup, cosine decay and global-norm clipping: what every training run records. */
export interface OptimizerConfig {
  /** Peak learning rate. */
  lr: number;
  /** Floor of the cosine decay. */
  minLr: number;
  /** Linear warmup steps; absent: {@link autoWarmup} of the run's length. */
  warmup?: number;
  /** Decoupled weight decay λ (matrices only, see defaultDecayFilter). */
  weightDecay: number;
  /** Global gradient-norm clip. */
  clip: number;
  beta1: number;
  beta2: number;
}

/** Warmup of a run of T steps when none is given: 10% of the run, at most 100 steps, at least 1. */
export function autoWarmup(totalSteps: number): number {
  return Math.max(1, Math.min(100, Math.round(totalSteps / 10)));
}

/** The warmup steps of a run: the given ones, else {@link autoWarmup} of its length. */
export function warmupSteps(c: Pick<OptimizerConfig, 'warmup'>, totalSteps: number): number {
  return c.warmup ?? autoWarmup(totalSteps);
}

/**
 * The optimizer's flags, with the app's defaults of the peak learning rate and the warmup ('auto': scaled with the
 * run's length by {@link autoWarmup}, so a short run does not spend half of itself warming up).
 */
export function optimizerFlagSpecs(defaults: { lr: number; warmup: number | 'auto' }) {
  const warmupHelp =
    defaults.warmup === 'auto' ? 'linear warmup steps (default: 10% of the run, at most 100)' : 'linear warmup steps';
  return {
    lr: { type: 'float', min: 0, exclusiveMin: true, default: defaults.lr, help: 'peak learning rate' },
    'min-lr': { type: 'float', min: 0, help: 'floor of the cosine decay (default lr/10)' },
    warmup: {
      type: 'int',
      min: 0,
      ...(defaults.warmup === 'auto' ? {} : { default: defaults.warmup }),
      help: warmupHelp,
    },
    'weight-decay': {
      type: 'float',
      min: 0,
      default: 0.01,
      help: 'AdamW decoupled weight decay (matrices only, not embeddings)',
    },
    clip: { type: 'float', min: 0, exclusiveMin: true, default: 1.0, help: 'clip the global gradient norm' },
  } as const satisfies FlagSpecs;
}

/** The optimizer flags with the language-model defaults (lr 5e-4, warmup scaled with the run). */
export const OPTIMIZER_FLAG_SPECS = optimizerFlagSpecs({ lr: 5e-4, warmup: 'auto' });

/** Parsed values of {@link optimizerFlagSpecs}. */
export type OptimizerFlags = ParsedFlags<typeof OPTIMIZER_FLAG_SPECS>;

/** β₁ 0.9 and β₂ 0.98 (the middle of the reproductions' 0.98–0.999, steadier early on small batches). */
const BETAS = { beta1: 0.9, beta2: 0.98 } as const;

/** The optimizer config of parsed flags: --min-lr defaults to lr/10 and must not exceed --lr. */
export function optimizerConfigFrom(f: OptimizerFlags): OptimizerConfig {
  const minLr = f['min-lr'] ?? f.lr / 10;
  if (minLr > f.lr) throw new UsageError(`--min-lr ${minLr} must not exceed --lr ${f.lr}`, 'min-lr');
  const warmup = f.warmup === undefined ? {} : { warmup: f.warmup };
  return { lr: f.lr, minLr, ...warmup, weightDecay: f['weight-decay'], clip: f.clip, ...BETAS };
}

/** AdamW over `params` with the config's betas and weight decay (matrices only, not embeddings). */
export function createOptimizer(params: readonly NamedVariable[], c: OptimizerConfig): AdamW {
  return new AdamW(params, { beta1: c.beta1, beta2: c.beta2, weightDecay: c.weightDecay, decay: defaultDecayFilter() });
}

/** Learning rate of update s (0-based): linear warmup to `lr`, cosine decay to `minLr` at `totalSteps`. */
export function lrSchedule(c: OptimizerConfig, totalSteps: number): (s: number) => number {
  const W = warmupSteps(c, totalSteps);
  return (s) => warmupCosineLr(s, { peakLr: c.lr, warmupSteps: W, totalSteps, minLr: c.minLr });
}

/**
 * The warning of a schedule that cannot reach its peak: an explicit warmup of W ≥ T steps ends at or after the run's
 * last update (the s-th update has lr·(s+1)/W), so the rate tops out at lr·T/W (W = T: the peak only at the last
 * update) and never decays. Null when the peak is reached before the end, and for the automatic warmup (10% of T).
 */
export function warmupWarning(c: OptimizerConfig, totalSteps: number): string | null {
  const W = c.warmup;
  if (W === undefined || W < totalSteps) return null;
  const reach =
    W === totalSteps
      ? `reaches its peak ${c.lr} only at the last step`
      : `never reaches its peak ${c.lr} (at most ${((c.lr * totalSteps) / W).toPrecision(3)})`;
  return (
    `warning: --warmup ${W} is not shorter than the run's ${totalSteps} steps: the learning rate ${reach} and never ` +
    `decays; give --warmup below ${totalSteps}, or leave it out for 10% of the run`
  );
}

/** Where and with what a run was made: written into config.json so the run can be repeated. */
export interface RunProvenance {
  backend: {
    name: string;
    simd?: boolean;
    threads?: number;
    /** wasm: what the matrix products ran on ('openblas 0.3.21, 2 threads', or why XNNPACK's). */
    blas?: string;
    tfjsCore: string;
    /** webgpu: the adapter, one line (describeAdapter). */
    adapter?: string;
    /** webgpu on a software (fallback) adapter such as lavapipe: speeds are the CPU's, not a GPU's. */
    softwareRendering?: boolean;
  };
  /** Commit of the working tree (`-dirty` with changes), null without git. */
  git: string | null;
  node: string;
  /** ISO time of the start. */
  created: string;
}

/** The provenance of a run started now on `backend`. */
export function runProvenance(backend: BackendInfo): RunProvenance {
  const { name, simd, threads, blas, tfjsCore, adapter } = backend;
  const device =
    adapter === undefined ? {} : { adapter: describeAdapter(adapter), softwareRendering: adapter.fallback };
  return {
    backend: { name, simd, threads, ...(blas === undefined ? {} : { blas }), tfjsCore, ...device },
    git: gitCommit(),
    node: process.version,
    created: new Date().toISOString(),
  };
}

/**
 * The backend of a run for its report: the name, on webgpu the adapter, and on a software adapter a warning that the
 * run's speeds are the CPU's.
 */
export function backendLine(backend: RunProvenance['backend']): string {
  const on = backend.adapter === undefined ? backend.name : `${backend.name} on ${backend.adapter}`;
  return backend.softwareRendering === true ? `${on} (software rendering: its tokens/s are not GPU numbers)` : on;
}

/**
 * Refuse `out` when it already holds a run (config.json or a checkpoint), or when it is a folder with anything else in
 * it (as `git clone` refuses a non-empty destination: a run writes report.md, metrics.jsonl and charts there), before
 * any slow work. Its own lock file does not count.
 */
export function checkNewRunFolder(out: string): RunFolder {
  refuseOutputPlace(resolve(out), 'out');
  const run = new RunFolder(out);
  const owner = lockedByOther(out);
  if (owner !== null) {
    throw new UsageError(
      `${run.dir} is being written by pid ${owner.pid} on ${owner.host} since ${owner.since}: wait for that run to ` +
        'end (or stop it), or choose another --out',
      'out',
    );
  }
  if (restartable(run)) return run; // createRun clears it and starts again
  if (run.exists() && !hasAnyCheckpoint(run)) {
    throw new UsageError(
      `${run.dir} holds a run that stopped before its first checkpoint, and files it did not write ` +
        `(${others(run).join(', ')}): move them away and run the command again, or choose another --out`,
      'out',
    );
  }
  if (run.exists() || run.hasCheckpoint()) {
    throw new UsageError(
      `${run.dir} already holds a run: continue it with --resume ${out}, or choose another --out`,
      'out',
    );
  }
  const names = entries(run.dir);
  if (names.length > 0) {
    throw new UsageError(
      `${run.dir} is not empty (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}) and holds no run: ` +
        'give --out a new or empty folder',
      'out',
    );
  }
  return run;
}

/** What a run writes before its first checkpoint (`word-vocab.json`: a word-level run's vocabulary). */
const BEFORE_FIRST_CHECKPOINT = new Set([
  'config.json',
  'metrics.jsonl',
  'metrics.csv',
  'word-vocab.json',
  'checkpoints',
]);

/** The entries of folder `dir` (none when missing), without its lock, sorted. */
function entries(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => !isRunLockFile(n))
        .sort()
    : [];
}

/** Whether the run folder holds a checkpoint, checkpoints/best, or anything a save left in checkpoints/. */
function hasAnyCheckpoint(run: RunFolder): boolean {
  return entries(join(run.dir, 'checkpoints')).length > 0;
}

/** The entries of the run folder that a run does not write before its first checkpoint. */
function others(run: RunFolder): string[] {
  return entries(run.dir).filter((n) => !BEFORE_FIRST_CHECKPOINT.has(n));
}

/**
 * Whether `run` holds a run stopped before its first checkpoint (killed, out of memory) and nothing else: nothing to
 * resume and nothing to lose, so the same command starts it again there.
 */
function restartable(run: RunFolder): boolean {
  return run.exists() && !hasAnyCheckpoint(run) && others(run).length === 0;
}

/**
 * A fresh run folder at `out` with `config` in config.json; refuses a folder that already holds a run, and starts
 * again in one whose run stopped before its first checkpoint (its files removed, with a line on stderr).
 */
export async function createRun(out: string, config: object): Promise<RunFolder> {
  lockRunFolder(out, 'out'); // before the check: of two processes starting on one folder, only one passes
  const run = checkNewRunFolder(out);
  if (restartable(run)) {
    process.stderr.write(`${run.dir}: its run stopped before its first checkpoint; starting it again\n`);
    for (const n of entries(run.dir)) rmSync(join(run.dir, n), { recursive: true, force: true });
  }
  await run.init(config);
  return run;
}

/** A run folder and its config.json, as read once on --resume. */
export interface OpenedRun<C> {
  run: RunFolder;
  config: C;
}

/** How a run is driven from the command line: quietly or with a bar, and where it stops early. */
export interface RunControl {
  quiet: boolean;
  stopAtStep?: number | undefined;
}

/**
 * The run in `dir` and its config.json (read once), for --resume: refuses a folder without config.json or one
 * whose `format` is not `format`.
 */
export async function openRunToResume<C extends { format: string }>(
  dir: string,
  format: C['format'],
): Promise<OpenedRun<C>> {
  const run = new RunFolder(dir);
  if (!run.exists()) {
    throw new UsageError(
      `--resume ${dir}: no config.json there; pass the run folder that train --out created`,
      'resume',
    );
  }
  lockRunFolder(dir, 'resume');
  const config = await run.readConfig<C>();
  if (config.format !== format) {
    throw new UsageError(`--resume ${dir}: config.json is not a ${format.replace(/-run$/, '')} run`, 'resume');
  }
  return { run, config };
}

/** Whether a missing checkpoint folder `dir` has a `<dir>.old-*` sibling left by a save that crashed mid-swap. */
function halfSwapped(dir: string): boolean {
  const parent = dirname(dir);
  const base = basename(dir);
  try {
    return readdirSync(parent).some((n) => n.startsWith(base) && /^\.old-\d+-[0-9a-f]{12}$/.test(n.slice(base.length)));
  } catch {
    return false;
  }
}

/**
 * The checkpoint folder that --checkpoint DIR names: DIR itself, or, when DIR is a run folder of `runFormat`, its
 * checkpoints/best (else checkpoints/latest). A config.json that is not JSON is left for the checkpoint loader to
 * report.
 */
export function resolveCheckpointDir(dir: string, runFormat: string): string {
  if (!existsSync(dir)) {
    // a save that crashed between its two renames leaves the complete previous checkpoint at <dir>.old-*: the loader
    // reads that (locateCheckpoint), so every command does, not only --resume
    if (halfSwapped(dir)) return dir;
    throw new UsageError(`--checkpoint ${dir} does not exist`, 'checkpoint');
  }
  const cfg = join(dir, 'config.json');
  if (!existsSync(cfg)) return dir;
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(cfg, 'utf8')) as { format?: unknown }).format;
  } catch {
    return dir;
  }
  if (format !== runFormat) return dir;
  for (const c of ['best', 'latest']) if (existsSync(join(dir, 'checkpoints', c))) return join(dir, 'checkpoints', c);
  throw new UsageError(`--checkpoint ${dir} is a run folder without checkpoints yet`, 'checkpoint');
}

/** What a resume continues from: the trainer state and the optimizer's moment tensors (disposed by the run). */
export interface ResumePoint {
  state: TrainerState;
  optimizerTensors: Map<string, tf.Tensor>;
}

/** How a run starts: fresh, or from a checkpoint's trainer state and moments (e.g. a LoadedTrainerCheckpoint). */
export interface RunStart extends RunControl {
  resume?: ResumePoint;
}

/** A training task whose data position can be set back to a checkpoint's (`TrainerState.data`). */
export interface ResumableTask<D> extends TrainTask {
  restore(data: D): void;
  /**
   * The optimizer steps and training tokens that the batches up to data position `data` make (from step 0), or null
   * where no whole number of steps ends there. When given, a resume refuses a checkpoint whose step and tokensSeen are
   * not these (its counters edited, or taken from another run).
   */
  consumed?(data: D): { steps: number; tokens: number } | null;
}

/**
 * Refuse a resume point whose counters disagree with its data position (see {@link ResumableTask.consumed}): the
 * step, the optimizer's step (loadTrainerCheckpoint checks those two agree) and tokensSeen must be where the data is.
 */
function checkResumeCounters<D>(task: ResumableTask<D>, state: TrainerState, dir: string): void {
  if (task.consumed === undefined) return;
  const at = task.consumed(state.data as unknown as D);
  if (at !== null && at.steps === state.step && at.tokens === state.tokensSeen) return;
  const where =
    at === null ? 'a data position that no whole number of steps ends at' : `the data position of step ${at.steps}`;
  throw new TrainerCheckpointError(
    `${dir}: its trainer state says step ${state.step} and ${state.tokensSeen} tokens seen, but it holds ${where}` +
      `${at === null ? '' : ` (${at.tokens} tokens)`}: config.json's extra.trainer was edited or mixed with another ` +
      "checkpoint's, and resuming it would train on with the moments and data of another step; restore the " +
      'checkpoint, or resume from checkpoints/best (copy it to checkpoints/latest), or start the run again',
  );
}

/** Everything {@link trainRun} needs besides the task. */
export interface TrainRunOptions<R extends RunSink = RunFolder> {
  run: R;
  /** The model's trainable variables under their checkpoint names. */
  params: readonly NamedVariable[];
  optimizer: OptimizerConfig;
  totalSteps: number;
  /** Seed of the dropout RNG stream of a fresh run. */
  seed: number;
  evalEvery: number;
  logEvery: number;
  checkpointEvery?: number;
  stopAtStep?: number;
  /** Metric of evaluate() that selects checkpoints/best (lower is better). */
  bestMetric: string;
  /** Stop early on `bestMetric` by this rule (see runTraining); absent: train to totalSteps. */
  earlyStop?: EarlyStopRule;
  /** Write model + optimizer + trainer state to a checkpoint folder. */
  save: (dir: string, state: TrainerState, optimizer: AdamW) => Promise<void>;
  /** Continue from this checkpoint; absent: a fresh run from step 0. */
  resume?: ResumePoint;
  quiet: boolean;
  /** No progress lines at all (a library caller that follows `onStep`); default false. */
  silent?: boolean;
  /** Told each step's loss and learning rate (see runTraining). */
  onStep?: (update: ProgressUpdate) => void;
  /** What the first progress line says about the run after `run DIR:` (model, size, steps, backend). */
  describe: string;
  /** Lines printed after the first one (e.g. what the evaluation covers, how a run was extended). */
  notes?: readonly string[];
  /** Plain training lines without a bar: every N steps (default: 10% of the run) and at least every 30 s. */
  printEvery?: number;
  /** Write the report of a finished run; returns its path. */
  report: () => Promise<string>;
  /** Free the model at the end (after the last checkpoint). */
  dispose: () => void;
}

/** Where a silent run's progress lines go. */
const DISCARD: ProgressStream = { isTTY: false, write: () => true };

/** How a run ended, and its report (null unless finished). */
export interface TrainRunOutcome<R extends RunSink = RunFolder> {
  run: R;
  result: TrainLoopResult;
  reportPath: string | null;
}

/** How a run ended, with its config.json. */
export interface RunOutcome<C> extends TrainRunOutcome {
  config: C;
}

/**
 * Train `task` in the run folder: AdamW from the config; on resume the optimizer moments, data position and RNG
 * stream of the checkpoint (and metrics.jsonl cut back to its step); the warmup-cosine schedule; a progress bar;
 * SIGINT/SIGTERM stop with a checkpoint; report.md when finished. The optimizer and the model are disposed at the end.
 */
export async function trainRun<D, R extends RunSink = RunFolder>(
  task: ResumableTask<D>,
  o: TrainRunOptions<R>,
): Promise<TrainRunOutcome<R>> {
  let optimizer: AdamW | null = null;
  const signal = new StopSignal();
  try {
    optimizer = createOptimizer(o.params, o.optimizer);
    let rng = new TrainingRng(o.seed);
    const start = o.resume?.state;
    if (o.resume !== undefined && start !== undefined) {
      checkResumeCounters(task, start, o.run.latestCheckpoint); // before metrics.jsonl is cut back to its step
      optimizer.loadState(o.resume.optimizerTensors, start.optimizer);
      task.restore(start.data as unknown as D);
      rng = new TrainingRng(start.rng);
      await o.run.truncateMetricsAfter(start.step);
    }
    const progress = new Progress(
      o.totalSteps,
      o.silent === true ? { quiet: true, stream: DISCARD } : { quiet: o.quiet },
    );
    progress.log(
      `${start === undefined ? `run ${o.run.dir}` : `resuming ${o.run.dir} at step ${start.step}`}: ${o.describe}`,
    );
    for (const line of o.notes ?? []) progress.log(line);
    const warning = warmupWarning(o.optimizer, o.totalSteps);
    if (warning !== null) progress.log(warning);
    signal.install();
    const opt = optimizer;
    const result = await runTraining(task, {
      optimizer: opt,
      rng,
      lr: lrSchedule(o.optimizer, o.totalSteps),
      totalSteps: o.totalSteps,
      clipNorm: o.optimizer.clip,
      evalEvery: o.evalEvery,
      logEvery: o.logEvery,
      ...(o.printEvery === undefined ? {} : { printEvery: o.printEvery }),
      ...(o.checkpointEvery === undefined ? {} : { checkpointEvery: o.checkpointEvery }),
      ...(o.stopAtStep === undefined ? {} : { stopAtStep: o.stopAtStep }),
      bestMetric: o.bestMetric,
      ...(o.earlyStop === undefined ? {} : { earlyStop: o.earlyStop }),
      run: o.run,
      save: (dir, state) => o.save(dir, state, opt),
      progress,
      ...(o.onStep === undefined ? {} : { onStep: o.onStep }),
      signal,
      ...(start === undefined ? {} : { start }),
    });
    const reportPath = result.status === 'finished' ? await o.report() : null;
    return { run: o.run, result, reportPath };
  } finally {
    for (const t of o.resume?.optimizerTensors.values() ?? []) t.dispose();
    signal.uninstall();
    optimizer?.dispose();
    o.dispose();
  }
}

// One run of a study: planned from its flags, trained (or resumed) in its run folder, turned into a ledger record.
// The in-process queue and a queue worker's child process both run a study run through trainStudyRun.
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RunFolder, UsageError } from '@grassflow/training';
import { planTrain, runTrainPlan, type TrainPlan } from '../train/command.js';
import type { StoredRunConfig } from '../train/config.js';
import { resolvedOfStored, resolvedRunConfig, runKey, type ResolvedRunConfig } from './key.js';
import { thisMachine, type HeldOutScore, type LedgerRecord } from './ledger.js';
import { loadModelAndTokenizer } from '../shared/checkpoint-dir.js';
import { loadSplitIds } from '../shared/corpus.js';
import { evaluatePerplexity } from '../shared/lm-task.js';
import { flagsToArgv, type StudyEntry } from './spec.js';

/** One run of a study, planned: its train flags, the fresh train plan they resolve to, and its key. */
export interface PlannedRun {
  entry: StudyEntry;
  argv: string[];
  config: ResolvedRunConfig;
  key: string;
  plan: Extract<TrainPlan, { kind: 'fresh' }>;
}

/** A study entry through `train`'s own planning (every check that needs no data), with the sitting's flags. */
export async function planRun(entry: StudyEntry, file: string, sitting: readonly string[]): Promise<PlannedRun> {
  const argv = flagsToArgv(entry.flags);
  let plan: TrainPlan;
  try {
    plan = await planTrain([...argv, ...sitting]);
  } catch (e) {
    if (e instanceof UsageError) throw new UsageError(`${file}: ${entry.where}: ${e.message}`, e.flag);
    throw e;
  }
  if (plan.kind !== 'fresh') throw new Error('a study run is a fresh train plan');
  // without --eval-tokens a study's runs validate on all of wiki.valid, as they always have (their keys say null)
  plan = { ...plan, run: { ...plan.run, evalDefault: 'full' } };
  const { modelKind, model, training } = plan.run;
  const config = resolvedRunConfig(modelKind, plan.tok.kind, model, training);
  return { entry, argv, config, key: runKey(config), plan };
}

/** trainSeconds of the trainer state in checkpoints/latest (summed over resumes), null when unreadable. */
function trainSecondsOf(run: RunFolder): number | null {
  try {
    const c = JSON.parse(readFileSync(join(run.latestCheckpoint, 'config.json'), 'utf8')) as {
      extra?: { trainer?: { trainSeconds?: unknown } };
    };
    const s = c.extra?.trainer?.trainSeconds;
    return typeof s === 'number' ? s : null;
  } catch {
    return null;
  }
}

/** The ledger record of a finished run folder (an error when it has not reached its last step's evaluation). */
export async function ledgerRecord(
  study: string,
  p: PlannedRun,
  run: RunFolder,
  timing: { wallSeconds: number; resumed: boolean },
): Promise<LedgerRecord> {
  const cfg = await run.readConfig<StoredRunConfig>();
  const evals = (await run.readMetrics()).filter((r) => r.type === 'eval' && typeof r['val_ppl'] === 'number');
  const last = evals[evals.length - 1];
  if (last === undefined || last.step !== cfg.totalSteps) {
    throw new Error(`${run.dir}: the run has not finished (no evaluation at step ${cfg.totalSteps})`);
  }
  const perStep = cfg.training.batch * cfg.training.block; // tokens of one step, B·L
  const curve = evals.map((r): [number, number] => [r.step * perStep, r['val_ppl'] as number]);
  const best = evals.reduce((b, r) => ((r['val_ppl'] as number) < (b['val_ppl'] as number) ? r : b));
  return {
    format: 'grassflow-lm-study-run',
    formatVersion: 1,
    study,
    key: p.key,
    config: p.config,
    flags: p.entry.flags,
    command: ['grassflow-lm', 'train', ...p.argv].join(' '),
    code: cfg.git,
    backend: cfg.backend,
    machine: thisMachine(),
    params: cfg.params,
    totalSteps: cfg.totalSteps,
    tokens: cfg.totalSteps * perStep,
    finalValPpl: last['val_ppl'] as number,
    bestValPpl: best['val_ppl'] as number,
    bestStep: best.step,
    curve,
    timing: {
      trainSeconds: trainSecondsOf(run),
      wallSeconds: timing.wallSeconds,
      resumed: timing.resumed,
      finished: new Date().toISOString(),
    },
  };
}

/**
 * The run's final checkpoint (checkpoints/latest) scored on the whole of wiki.valid and wiki.test: every target once
 * in windows of its seqLen, with the mean NLL at each window position.
 */
export async function scoreHeldOut(
  run: RunFolder,
  dataDir: string,
): Promise<{ valid: HeldOutScore; test: HeldOutScore }> {
  const { model, tok } = await loadModelAndTokenizer(run.latestCheckpoint, dataDir, undefined);
  try {
    const score = async (split: 'valid' | 'test'): Promise<HeldOutScore> => {
      const ids = await loadSplitIds(split, tok, dataDir);
      // ≈ 4,096 targets a forward pass: short windows in few, large batches (a pass has a fixed cost)
      const batch = Math.max(1, Math.floor(4096 / model.config.maxLen));
      const r = await evaluatePerplexity(model, ids, { seqLen: model.config.maxLen, batch });
      return { ...r, nllByPosition: r.nllByPosition.map((v) => Math.round(v * 1e4) / 1e4) };
    };
    return { valid: await score('valid'), test: await score('test') };
  } finally {
    model.dispose();
  }
}

/** What a planned run's folder holds: nothing (or a start without a checkpoint), or a checkpoint to resume from. */
export function folderState(run: RunFolder): 'new' | 'partial' | 'resumable' {
  if (run.exists() && run.hasCheckpoint()) return 'resumable';
  return existsSync(run.dir) ? 'partial' : 'new';
}

/** How a study run's training ended: its ledger record, or the exit code of a run that stopped (signal, stop step). */
export type StudyRunOutcome = { record: LedgerRecord } | { stopped: number };

/**
 * Train one planned run in `runs/<key>`: resumed from its checkpoint when the folder has one (its config.json must
 * resolve to the same key), else started afresh (a folder without a checkpoint is started again). `head` starts the
 * progress lines; `trainArgv` are the sitting's train flags (--quiet, --backend, --data-dir).
 */
export async function trainStudyRun(
  study: string,
  p: PlannedRun,
  runs: string,
  trainArgv: readonly string[],
  head: string,
  heldOut = true,
): Promise<StudyRunOutcome> {
  const run = new RunFolder(join(runs, p.key));
  const state = folderState(run);
  const t0 = performance.now();
  let code: number;
  if (state === 'resumable') {
    const stored = resolvedOfStored(await run.readConfig<StoredRunConfig>());
    if (runKey(stored) !== p.key) {
      throw new Error(
        `${run.dir}: its config.json resolves to key ${runKey(stored)}, not ${p.key}; move the folder away`,
      );
    }
    process.stderr.write(`${head}: resuming from its checkpoint\n`);
    code = await runTrainPlan(await planTrain(['--resume', run.dir, ...trainArgv]));
  } else {
    if (state === 'partial') {
      process.stderr.write(`${head}: ${run.dir} has no checkpoint yet; starting it again\n`);
      await rm(run.dir, { recursive: true, force: true });
    } else process.stderr.write(`${head}\n`);
    const command = ['grassflow-lm', 'train', ...p.argv, '--out', run.dir].join(' ');
    code = await runTrainPlan({ ...p.plan, run: { ...p.plan.run, out: run.dir, command } });
  }
  if (code !== 0) return { stopped: code };
  const record = await ledgerRecord(study, p, run, { wallSeconds: 0, resumed: state === 'resumable' });
  let scores: Pick<LedgerRecord, 'heldOut'> = {};
  if (heldOut) {
    process.stderr.write(`${head}: scoring the final checkpoint on all of wiki.valid and wiki.test\n`);
    scores = { heldOut: await scoreHeldOut(run, p.plan.dataDir) };
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  return { record: { ...record, ...scores, timing: { ...record.timing, wallSeconds } } };
}

// grassflow-lm's trainer of study runs (@grassflow/studies' StudyTrainer): a run planned from its flags by `train`'s
// own planning, trained (or resumed) in its run folder, turned into a ledger record, scored on wiki.valid and
// wiki.test. The in-process queue and a queue worker's child process both run a study run through it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunFolder } from '@grassflow/training';
import {
  flagsToArgv,
  runKey,
  thisMachine,
  type PlannedRun as AnyPlannedRun,
  type RecordArgs,
  type StudyEntry,
  type StudyTrainer,
} from '@grassflow/studies';
import { planTrain, runTrainPlan, type TrainPlan } from '../train/command.js';
import type { StoredRunConfig } from '../train/config.js';
import { resolvedOfStored, resolvedRunConfig, type ResolvedRunConfig } from './key.js';
import { LM_LEDGER, type HeldOutScore, type LedgerRecord } from './ledger.js';
import { loadModelAndTokenizer } from '../shared/checkpoint-dir.js';
import { heldOutMetric } from '../shared/held-out.js';
import { loadSplitIds } from '../shared/corpus.js';
import { evaluatePerplexity } from '../shared/lm-task.js';
import { LM_STUDY_FLAGS } from './spec.js';
import { writeLmStudyReport } from './report.js';

/** One run of a study, planned: its train flags, the fresh train plan they resolve to, and its key. */
export interface PlannedRun extends AnyPlannedRun {
  config: ResolvedRunConfig;
  plan: Extract<TrainPlan, { kind: 'fresh' }>;
}

/** A study entry through `train`'s own planning (every check that needs no data), with the sitting's flags. */
async function planRun(entry: StudyEntry, sitting: readonly string[]): Promise<PlannedRun> {
  const argv = flagsToArgv(entry.flags);
  let plan = await planTrain([...argv, ...sitting]);
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
async function ledgerRecord(
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
  const config = JSON.parse(readFileSync(join(run.latestCheckpoint, 'config.json'), 'utf8')) as {
    extra?: { trainer?: { step?: number } };
  };
  try {
    const score = async (split: 'valid' | 'test'): Promise<HeldOutScore> => {
      const ids = await loadSplitIds(split, tok, dataDir);
      // ≈ 4,096 targets a forward pass: short windows in few, large batches (a pass has a fixed cost)
      const batch = Math.max(1, Math.floor(4096 / model.config.maxLen));
      const r = await evaluatePerplexity(model, ids, { seqLen: model.config.maxLen, batch });
      return { ...r, nllByPosition: r.nllByPosition.map((v) => Math.round(v * 1e4) / 1e4) };
    };
    const scores = { valid: await score('valid'), test: await score('test') };
    // the run's own record too, where `export --from latest` finds it for the model card
    const step = config.extra?.trainer?.step;
    if (step !== undefined) {
      await run.appendMetric(heldOutMetric(step, scores.valid, scores.test, 'grassflow-lm study', true));
    }
    return scores;
  } finally {
    model.dispose();
  }
}

/** The record of a finished run, scored on all of wiki.valid and wiki.test when the study asks for it. */
async function recordOf(a: RecordArgs<PlannedRun>): Promise<LedgerRecord> {
  const run = new RunFolder(a.runDir);
  const record = await ledgerRecord(a.study, a.planned, run, { wallSeconds: 0, resumed: a.resumed });
  let scores: Pick<LedgerRecord, 'heldOut'> = {};
  if (a.heldOut) {
    process.stderr.write(`${a.head}: scoring the final checkpoint on all of wiki.valid and wiki.test\n`);
    scores = { heldOut: await scoreHeldOut(run, a.planned.plan.dataDir) };
  }
  const wallSeconds = (performance.now() - a.started) / 1000;
  return { ...record, ...scores, timing: { ...record.timing, wallSeconds } };
}

/** grassflow-lm's trainer: each study run exactly a `train` run in its own folder (runs/<key>). */
export const lmTrainer: StudyTrainer<PlannedRun, LedgerRecord> = {
  program: 'grassflow-lm',
  flags: LM_STUDY_FLAGS,
  ledger: LM_LEDGER,
  plan: planRun,
  storedKey: async (runDir) => runKey(resolvedOfStored(await new RunFolder(runDir).readConfig<StoredRunConfig>())),
  start: (p, runDir) => {
    const command = ['grassflow-lm', 'train', ...p.argv, '--out', runDir].join(' ');
    return runTrainPlan({ ...p.plan, run: { ...p.plan.run, out: runDir, command } });
  },
  resume: async (_p, runDir, sitting) => runTrainPlan(await planTrain(['--resume', runDir, ...sitting])),
  record: recordOf,
  asStudyRecord: (r, p, study) => ({
    ...r,
    study,
    config: p.config,
    flags: p.entry.flags,
    command: ['grassflow-lm', 'train', ...p.argv].join(' '),
  }),
  describe: (r) => `final val PPL ${r.finalValPpl.toFixed(2)}, best ${r.bestValPpl.toFixed(2)}`,
  report: writeLmStudyReport,
};

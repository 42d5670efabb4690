// grassflow-lm's trainer of study runs (@grassflow/studies' StudyTrainer): a run planned from its flags by `train`'s
// own planning, trained (or resumed) in its run folder, turned into a ledger record, scored on wiki.valid and
// wiki.test. The in-process queue and a queue worker's child process both run a study run through it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunFolder, type EarlyStopDecision, type MetricRecord } from '@grassflow/training';
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
import { LM_LEDGER, type HeldOutScore, type LedgerRecord, type RunStop, type ScoredCheckpoint } from './ledger.js';
import { encodeWindowNll } from './windows.js';
import { loadModelAndTokenizer } from '../shared/checkpoint-dir.js';
import { heldOutMetric } from '../shared/held-out.js';
import { loadSplitIds } from '../shared/corpus.js';
import { evaluatePerplexity, positionBandEdges } from '@grassflow/training';
import { LM_STUDY_FLAGS } from './spec.js';
import { writeLmStudyReport } from './report.js';

/** One run of a study, planned: its train flags, the fresh train plan they resolve to, and its key. */
export interface PlannedRun extends AnyPlannedRun {
  config: ResolvedRunConfig;
  plan: Extract<TrainPlan, { kind: 'fresh' }>;
}

/** A study entry through `train`'s own planning (every check that needs no data), with the sitting's flags. */
async function planRun(entry: StudyEntry, sitting: readonly string[]): Promise<PlannedRun> {
  // a run that names no preset is the paper's model, as studies' runs always have been (train's own default is small)
  const argv = flagsToArgv({ preset: 'paper-6l', ...entry.flags });
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

/** The early stop of a run folder (metrics.jsonl's `early_stop` record), or null when it ran to its budget. */
function earlyStopOf(metrics: readonly MetricRecord[]): EarlyStopDecision | null {
  const r = metrics.find((m) => m.type === 'early_stop');
  if (r === undefined) return null;
  const num = (k: string): number => r[k] as number;
  return {
    step: r.step,
    before: { value: num('before_value'), step: num('before_step') },
    best: { value: num('best_value'), step: num('best_step') },
    improvement: num('improvement'),
  };
}

/** The ledger record of a finished run folder (an error when it has not reached its last step's evaluation). */
async function ledgerRecord(
  study: string,
  p: PlannedRun,
  run: RunFolder,
  timing: { wallSeconds: number; resumed: boolean },
): Promise<LedgerRecord> {
  const cfg = await run.readConfig<StoredRunConfig>();
  const metrics = await run.readMetrics();
  const evals = metrics.filter((r) => r.type === 'eval' && typeof r['val_ppl'] === 'number');
  const last = evals[evals.length - 1];
  const early = earlyStopOf(metrics);
  const lastStep = early?.step ?? cfg.totalSteps;
  if (last === undefined || last.step !== lastStep) {
    throw new Error(`${run.dir}: the run has not finished (no evaluation at step ${cfg.totalSteps}, no early stop)`);
  }
  const perStep = cfg.training.batch * cfg.training.block; // tokens of one step, B·L
  const curve = evals.map((r): [number, number] => [r.step * perStep, r['val_ppl'] as number]);
  const best = evals.reduce((b, r) => ((r['val_ppl'] as number) < (b['val_ppl'] as number) ? r : b));
  const rule = cfg.training.earlyStop;
  const stop: RunStop = {
    reason: early === null ? 'budget' : 'early-stop',
    step: lastStep,
    ...(rule === undefined ? {} : { rule }),
    ...(early === null ? {} : { decision: early }),
  };
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
    stop,
    curve,
    timing: {
      trainSeconds: trainSecondsOf(run),
      wallSeconds: timing.wallSeconds,
      resumed: timing.resumed,
      finished: new Date().toISOString(),
    },
  };
}

/** New targets per window of the sliding-window scoring (each target with ≥ seqLen − 64 tokens of context). */
export const SLIDING_STRIDE = 64;

/**
 * Which checkpoint a run's held-out scores are taken of: `asked` when given; else checkpoints/best for a run the
 * early-stopping rule ended (the model selected on valid), checkpoints/latest (the final one) for a run that reached
 * its budget.
 */
export function checkpointToScore(
  stoppedEarly: boolean,
  asked?: 'latest' | 'best',
): { checkpoint: 'latest' | 'best'; why: string } {
  if (asked !== undefined) return { checkpoint: asked, why: `asked for (--checkpoint ${asked})` };
  return stoppedEarly
    ? { checkpoint: 'best', why: 'the run stopped early: the checkpoint best on valid' }
    : { checkpoint: 'latest', why: 'the run reached its budget: the final checkpoint' };
}

/**
 * A run's checkpoint (see {@link checkpointToScore}) scored on the whole of wiki.valid and wiki.test: every target
 * once in non-overlapping windows of its seqLen, with the mean NLL at each window position, and again in sliding
 * windows (stride {@link SLIDING_STRIDE}); test keeps its per-window NLL sums by position band (and sliding, per
 * window) for the paired bootstrap over windows.
 */
export async function scoreHeldOut(
  run: RunFolder,
  dataDir: string,
  asked?: 'latest' | 'best',
): Promise<{ valid: HeldOutScore; test: HeldOutScore; scored: ScoredCheckpoint }> {
  const choice = checkpointToScore(earlyStopOf(await run.readMetrics()) !== null, asked);
  const dir = choice.checkpoint === 'best' ? run.bestCheckpoint : run.latestCheckpoint;
  const { model, tok } = await loadModelAndTokenizer(dir, dataDir, undefined);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
    extra?: { trainer?: { step?: number } };
  };
  const step = config.extra?.trainer?.step;
  try {
    const L = model.config.maxLen;
    // ≈ 4,096 targets a forward pass: short windows in few, large batches (a pass has a fixed cost)
    const batch = Math.max(1, Math.floor(4096 / L));
    const round = (xs: number[]) => xs.map((v) => Math.round(v * 1e4) / 1e4);
    const score = async (split: 'valid' | 'test'): Promise<HeldOutScore> => {
      const ids = await loadSplitIds(split, tok, dataDir);
      const keep = split === 'test';
      const bandEdges = positionBandEdges(L);
      const r = await evaluatePerplexity(model, ids, { seqLen: L, batch, ...(keep ? { bandEdges } : {}) });
      const stride = Math.min(SLIDING_STRIDE, L);
      const sl = await evaluatePerplexity(model, ids, {
        seqLen: L,
        batch,
        stride,
        ...(keep ? { bandEdges: [L] } : {}),
      });
      const windows = (w: Float64Array | undefined, layout: { stride: number; bandEdges: number[] }) =>
        w === undefined ? {} : { windows: encodeWindowNll(w, { seqLen: L, ...layout }) };
      return {
        tokens: r.tokens,
        nll: r.nll,
        ppl: r.ppl,
        nllByPosition: round(r.nllByPosition),
        ...windows(r.windowSums, { stride: L, bandEdges }),
        sliding: {
          stride,
          tokens: sl.tokens,
          nll: sl.nll,
          ppl: sl.ppl,
          nllByPosition: round(sl.nllByPosition),
          ...windows(sl.windowSums, { stride, bandEdges: [L] }),
        },
      };
    };
    const scores = { valid: await score('valid'), test: await score('test') };
    if (step === undefined) throw new Error(`${dir}: config.json has no trainer step`);
    // the run's own record too, where `export --from latest` finds it for the model card
    await run.appendMetric(heldOutMetric(step, scores.valid, scores.test, 'grassflow-lm study', true));
    return { ...scores, scored: { ...choice, step } };
  } finally {
    model.dispose();
  }
}

/** The record of a finished run, scored on all of wiki.valid and wiki.test when the study asks for it. */
async function recordOf(a: RecordArgs<PlannedRun>): Promise<LedgerRecord> {
  const run = new RunFolder(a.runDir);
  const record = await ledgerRecord(a.study, a.planned, run, { wallSeconds: 0, resumed: a.resumed });
  let scores: Pick<LedgerRecord, 'heldOut' | 'scored'> = {};
  if (a.heldOut) {
    const { checkpoint, why } = checkpointToScore(record.stop?.reason === 'early-stop');
    process.stderr.write(`${a.head}: scoring checkpoints/${checkpoint} (${why}) on all of wiki.valid and wiki.test\n`);
    const { scored, ...heldOut } = await scoreHeldOut(run, a.planned.plan.dataDir);
    scores = { heldOut, scored };
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

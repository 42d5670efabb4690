// grassflow-snli's trainer of study runs (@grassflow/studies' StudyTrainer): each run exactly a `grassflow-snli train`
// run in its own folder (runs/<key>), its ledger record the validation numbers of the run and, with heldOut, the final
// checkpoint scored on all of dev and test.
import { RunFolder } from '@grassflow/training';
import {
  flagsToArgv,
  runKey,
  thisMachine,
  writeSeedReport,
  type Machine,
  type PlannedRun,
  type RecordArgs,
  type ReportArgs,
  type RunFlags,
  type StudyEntry,
  type StudyTrainer,
} from '@grassflow/studies';
import { evaluateCheckpoint } from '../eval/command.js';
import type { HeadKind } from '../model/snli-model.js';
import type { RunConfig, TrainingConfig } from '../train/config.js';
import { planTrain, runTrainPlan, TRAIN_FLAGS, type SnliTrainPlan } from '../train/command.js';

/**
 * What a run trains, resolved from its flags: the head (also as model.kind, what a study pairs across), the backbone,
 * the embedding encoder's width (backbone 'none'), the data files as given and the training config. Left out:
 * logEvery (bookkeeping).
 */
export interface SnliRunConfig {
  head: HeadKind;
  backbone: string;
  model: { kind: HeadKind; embedDim: number | null };
  data: { trainFile: string | null; devFile: string | null; validPairs: number };
  training: Omit<TrainingConfig, 'logEvery'>;
}

/** A study run, planned: its flags, the fresh train plan they resolve to, its config and key. */
export interface SnliPlannedRun extends PlannedRun {
  config: SnliRunConfig;
  plan: Extract<SnliTrainPlan, { kind: 'fresh' }>;
}

/** A split of the data folder scored whole by the final checkpoint. */
export interface SnliHeldOutScore {
  pairs: number;
  accuracy: number;
  loss: number;
}

/** One finished run in the ledger. */
export interface SnliLedgerRecord {
  format: 'grassflow-snli-study-run';
  formatVersion: 1;
  study: string;
  key: string;
  config: SnliRunConfig;
  /** The study file's flags of the run. */
  flags: RunFlags;
  /** Equivalent command (run folder aside). */
  command: string;
  code: string | null;
  backend: RunConfig['backend'];
  machine: Machine;
  params: RunConfig['params'];
  totalSteps: number;
  /** Validation (the first --valid-pairs of dev) at the last step. */
  finalValAcc: number;
  finalValLoss: number;
  /** The evaluation with the lowest validation loss (that of checkpoints/best): its loss, accuracy and step. */
  bestValLoss: number;
  bestValAcc: number;
  bestStep: number;
  /** The final checkpoint on every pair of dev and test (a study with heldOut). */
  heldOut?: { dev: SnliHeldOutScore; test: SnliHeldOutScore };
  /** Validation accuracy against training steps: [step, accuracy] of every evaluation. */
  curve: Array<[number, number]>;
  timing: { wallSeconds: number; resumed: boolean; finished: string };
}

function resolvedConfig(plan: Extract<SnliTrainPlan, { kind: 'fresh' }>): SnliRunConfig {
  const r = plan.run;
  const { logEvery: _l, ...training } = r.training;
  return {
    head: r.head,
    backbone: r.backbone,
    model: { kind: r.head, embedDim: r.backbone === 'none' ? r.embedDim : null },
    data: { trainFile: r.trainFile ?? null, devFile: r.devFile ?? null, validPairs: r.validPairs },
    training,
  };
}

async function planRun(entry: StudyEntry, sitting: readonly string[]): Promise<SnliPlannedRun> {
  const argv = flagsToArgv(entry.flags);
  const plan = await planTrain([...argv, ...sitting]);
  if (plan.kind !== 'fresh') throw new Error('a study run is a fresh train plan');
  const config = resolvedConfig(plan);
  return { entry, argv, config, key: runKey(config), plan };
}

/**
 * The key of a run folder: its config.json's command planned again (config.json keeps the data files resolved, the
 * key has them as the study gave them; a study run's command is `grassflow-snli train <its flags> --out DIR`).
 */
async function storedKey(runDir: string, sitting: readonly string[]): Promise<string> {
  const cfg = await new RunFolder(runDir).readConfig<RunConfig>();
  const argv = cfg.command.split(' ').slice(2);
  const out = argv.indexOf('--out');
  if (out >= 0) argv.splice(out, 2);
  const plan = await planTrain([...argv, ...sitting]);
  if (plan.kind !== 'fresh') throw new Error(`${runDir}: its command is not that of a study run`);
  return runKey(resolvedConfig(plan));
}

const positive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** What is wrong with a parsed record (the fields the report reads), or null. */
function recordProblem(r: SnliLedgerRecord): string | null {
  const c = r.config as unknown as { model?: { kind?: unknown }; training?: { seed?: unknown } } | undefined;
  if (typeof c !== 'object' || c === null || typeof c.model?.kind !== 'string' || !Number.isInteger(c.training?.seed))
    return '"config" lacks model.kind or training.seed';
  for (const f of ['finalValAcc', 'finalValLoss', 'bestValLoss'] as const)
    if (!positive(r[f])) return `"${f}" is ${JSON.stringify(r[f])}, not a number ≥ 0`;
  if (!Array.isArray(r.curve)) return '"curve" is not a list of [step, accuracy] pairs';
  return null;
}

async function recordOf(a: RecordArgs<SnliPlannedRun>): Promise<SnliLedgerRecord> {
  const run = new RunFolder(a.runDir);
  const cfg = await run.readConfig<RunConfig>();
  const evals = (await run.readMetrics()).filter((r) => r.type === 'eval' && typeof r['val_loss'] === 'number');
  const last = evals[evals.length - 1];
  if (last === undefined || last.step !== cfg.totalSteps) {
    throw new Error(`${run.dir}: the run has not finished (no evaluation at step ${cfg.totalSteps})`);
  }
  const best = evals.reduce((b, r) => ((r['val_loss'] as number) < (b['val_loss'] as number) ? r : b));
  let heldOut: Pick<SnliLedgerRecord, 'heldOut'> = {};
  if (a.heldOut) {
    process.stderr.write(`${a.head}: scoring the final checkpoint on all of dev and test\n`);
    const score = async (split: 'dev' | 'test'): Promise<SnliHeldOutScore> => {
      const r = await evaluateCheckpoint({
        dir: run.latestCheckpoint,
        split,
        file: undefined,
        batch: 128,
        dataDir: a.planned.plan.dataDir,
      });
      return { pairs: r.pairs, accuracy: r.accuracy, loss: r.loss };
    };
    heldOut = { heldOut: { dev: await score('dev'), test: await score('test') } };
  }
  return {
    format: 'grassflow-snli-study-run',
    formatVersion: 1,
    study: a.study,
    key: a.planned.key,
    config: a.planned.config,
    flags: a.planned.entry.flags,
    command: ['grassflow-snli', 'train', ...a.planned.argv].join(' '),
    code: cfg.git,
    backend: cfg.backend,
    machine: thisMachine(),
    params: cfg.params,
    totalSteps: cfg.totalSteps,
    finalValAcc: last['val_acc'] as number,
    finalValLoss: last['val_loss'] as number,
    bestValLoss: best['val_loss'] as number,
    bestValAcc: best['val_acc'] as number,
    bestStep: best.step,
    ...heldOut,
    curve: evals.map((r): [number, number] => [r.step, r['val_acc'] as number]),
    timing: {
      wallSeconds: (performance.now() - a.started) / 1000,
      resumed: a.resumed,
      finished: new Date().toISOString(),
    },
  };
}

/** report.md: the heads over seeds, and Grassmann − Transformer paired by seed. */
function report(a: ReportArgs<SnliLedgerRecord>): Promise<string> {
  const scored = a.records.every((r) => r.heldOut !== undefined);
  const codes = [...new Set(a.records.map((r) => r.code ?? 'unknown'))];
  return writeSeedReport(a.dir, {
    title: `Study ${a.study}`,
    intro: [
      `${a.records.length} finished run${a.records.length === 1 ? '' : 's'} of \`grassflow-snli train\` from ` +
        `\`${a.source}\`, grouped over seeds (runs that agree in every resolved field but the seed). Code: ` +
        `${codes.join(', ')}.`,
      'val acc and val loss: the validation (the first --valid-pairs of dev) at the last step' +
        (scored ? '; dev and test acc: the final checkpoint on every pair of those splits.' : '.') +
        ' A positive Δ acc means the Grassmann head is better.',
    ],
    records: a.records,
    kindColumn: 'head',
    kinds: ['grassmann', 'transformer'],
    pairAcross: a.spec?.pairAcross ?? [],
    metrics: [
      { name: 'val acc', of: (r) => r.finalValAcc },
      { name: 'val loss', of: (r) => r.finalValLoss },
      ...(scored
        ? [
            { name: 'dev acc', of: (r: SnliLedgerRecord) => r.heldOut?.dev.accuracy },
            { name: 'test acc', of: (r: SnliLedgerRecord) => r.heldOut?.test.accuracy },
          ]
        : []),
    ],
    curve: {
      of: (r) => r.curve,
      title: 'Validation accuracy',
      xLabel: 'training step',
      yLabel: 'val accuracy (mean over seeds)',
    },
  });
}

/** grassflow-snli's trainer. */
export const snliTrainer: StudyTrainer<SnliPlannedRun, SnliLedgerRecord> = {
  program: 'grassflow-snli',
  flags: {
    flags: TRAIN_FLAGS,
    sitting: ['out', 'resume', 'stop-at-step', 'quiet', 'backend', 'data-dir'],
    pairable: ['lr', 'minLr', 'warmup', 'weightDecay', 'clip', 'batch', 'epochs'],
  },
  ledger: { format: 'grassflow-snli-study-run', what: 'grassflow-snli study record', problem: recordProblem },
  plan: planRun,
  storedKey,
  start: (p, runDir) => {
    const command = ['grassflow-snli', 'train', ...p.argv, '--out', runDir].join(' ');
    return runTrainPlan({ ...p.plan, run: { ...p.plan.run, out: runDir, command } });
  },
  resume: async (_p, runDir, sitting) => runTrainPlan(await planTrain(['--resume', runDir, ...sitting])),
  record: recordOf,
  asStudyRecord: (r, p, study) => ({ ...r, study, config: p.config, flags: p.entry.flags }),
  describe: (r) => `final val acc ${r.finalValAcc.toFixed(3)}, val loss ${r.finalValLoss.toFixed(4)}`,
  report,
};

// `grassflow-lm study run|report|status`: a study file's runs, each exactly a `train` run with a resolved plan in its
// own run folder (runs/<key>), remembered in ledger.jsonl so that a study grows over sittings and machines.
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseFlags, RunFolder, UsageError, wantsHelp, type CliCommand, type FlagSpecs } from '@grassflow/training';
import { dataDirOrThrow } from '../shared/corpus.js';
import { planTrain, runTrainPlan, type TrainPlan } from '../train/command.js';
import type { StoredRunConfig } from '../train/run.js';
import { resolvedOfStored, resolvedRunConfig, runKey, type ResolvedRunConfig } from './key.js';
import { appendLedger, readLedger, thisMachine, type LedgerRecord } from './ledger.js';
import { validationBaselines } from '../baselines/report.js';
import { writeStudyReport, type BaselinesOf } from './report.js';
import { expandStudy, flagsToArgv, parseStudy, type StudyEntry, type StudySpec } from './spec.js';

/** One run of a study, planned: its train flags, the fresh train plan they resolve to, and its key. */
export interface PlannedRun {
  entry: StudyEntry;
  argv: string[];
  config: ResolvedRunConfig;
  key: string;
  plan: Extract<TrainPlan, { kind: 'fresh' }>;
}

/** Read and check a study file. */
export async function readStudy(path: string): Promise<StudySpec> {
  if (!existsSync(path)) throw new UsageError(`study file ${path} does not exist`);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`${path} is not JSON: ${(e as Error).message}`);
  }
  return parseStudy(json, path);
}

/**
 * Each run's flags through `train`'s own planning (every check that needs no data); runs resolving to the same config
 * (e.g. a Transformer given Grassmann-only flags) are one run.
 */
export async function planStudy(spec: StudySpec, file: string, sitting: readonly string[]): Promise<PlannedRun[]> {
  const out = new Map<string, PlannedRun>();
  for (const entry of expandStudy(spec)) {
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
    const key = runKey(config);
    const same = out.get(key);
    if (same === undefined) out.set(key, { entry, argv, config, key, plan });
    else
      process.stderr.write(`study ${spec.name}: ${entry.where} resolves to the run of ${same.entry.where} (${key})\n`);
  }
  return [...out.values()];
}

const SITTING_FLAGS = {
  out: { type: 'string', metavar: 'DIR', help: "folder of ledger.jsonl and report.md (default: the study file's)" },
  runs: { type: 'string', metavar: 'DIR', help: 'folder of the run folders <key>/ (default runs/study-<name>)' },
  backend: { type: 'string', help: 'tfjs backend (default: the first that loads)' },
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder (default GRASSFLOW_DATA_DIR)' },
  quiet: { type: 'boolean', help: 'no progress bars: one line per evaluation' },
} as const satisfies FlagSpecs;

type Sitting = {
  study: string;
  spec: StudySpec;
  ledger: string;
  runs: string;
  trainArgv: string[];
};

/** The study file (the first argument) and the flags after it. */
function fileAndFlags(argv: readonly string[], what: string): [string, string[]] {
  const [file, ...flags] = argv;
  if (file === undefined || file.startsWith('-')) throw new UsageError(`give the ${what} first, then the flags`);
  return [file, flags];
}

async function sittingOf(argv: readonly string[]): Promise<Sitting> {
  const [study, flags] = fileAndFlags(argv, 'study file');
  const f = parseFlags(flags, SITTING_FLAGS);
  const spec = await readStudy(study);
  const trainArgv = [
    ...(f.quiet ? ['--quiet'] : []),
    ...(f.backend === undefined ? [] : ['--backend', f.backend]),
    ...(f['data-dir'] === undefined ? [] : ['--data-dir', f['data-dir']]),
  ];
  return {
    study,
    spec,
    ledger: join(f.out ?? dirname(study), 'ledger.jsonl'),
    runs: resolve(f.runs ?? join('runs', `study-${spec.name}`)),
    trainArgv,
  };
}

/** The ledger's records of this study; records of another study in the same file are an error. */
async function studyLedger(path: string, name: string): Promise<LedgerRecord[]> {
  const { records, warnings } = await readLedger(path);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const other = records.find((r) => r.study !== name);
  if (other !== undefined) {
    throw new UsageError(`${path} holds runs of study '${other.study}', not '${name}': give this study its own --out`);
  }
  return records;
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

/** What a planned run's folder holds: nothing (or a start without a checkpoint), or a checkpoint to resume from. */
function folderState(run: RunFolder): 'new' | 'partial' | 'resumable' {
  if (run.exists() && run.hasCheckpoint()) return 'resumable';
  return existsSync(run.dir) ? 'partial' : 'new';
}

/** `study run`: every run not in the ledger, resumed from its folder's checkpoint where one exists. */
export async function studyRunCommand(argv: readonly string[]): Promise<number> {
  const s = await sittingOf(argv);
  const planned = await planStudy(s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(s.ledger, s.spec.name)).map((r) => r.key));
  const todo = planned.filter((p) => !done.has(p.key));
  process.stderr.write(
    `study ${s.spec.name}: ${planned.length} runs, ${planned.length - todo.length} in ${s.ledger}, ${todo.length} to run (folders ${s.runs})\n`,
  );
  for (const [i, p] of todo.entries()) {
    const run = new RunFolder(join(s.runs, p.key));
    const state = folderState(run);
    const head = `study ${s.spec.name}: run ${i + 1}/${todo.length} ${p.key} (${p.entry.where}: ${p.argv.join(' ')})`;
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
      code = await runTrainPlan(await planTrain(['--resume', run.dir, ...s.trainArgv]));
    } else {
      if (state === 'partial') {
        process.stderr.write(`${head}: ${run.dir} has no checkpoint yet; starting it again\n`);
        await rm(run.dir, { recursive: true, force: true });
      } else process.stderr.write(`${head}\n`);
      const command = ['grassflow-lm', 'train', ...p.argv, '--out', run.dir].join(' ');
      code = await runTrainPlan({ ...p.plan, run: { ...p.plan.run, out: run.dir, command } });
    }
    if (code !== 0) {
      process.stderr.write(`study ${s.spec.name} stopped; run it again to continue (${p.key} resumes)\n`);
      return code;
    }
    const wallSeconds = (performance.now() - t0) / 1000;
    const record = await ledgerRecord(s.spec.name, p, run, { wallSeconds, resumed: state === 'resumable' });
    await appendLedger(s.ledger, record);
    process.stderr.write(
      `study ${s.spec.name}: ${p.key} final val PPL ${record.finalValPpl.toFixed(2)}, best ${record.bestValPpl.toFixed(2)} → ${s.ledger}\n`,
    );
  }
  process.stderr.write(`study ${s.spec.name}: all ${planned.length} runs in ${s.ledger}\n`);
  return 0;
}

/** `study status`: each planned run, its key and whether it is in the ledger, resumable, or not started. */
export async function studyStatusCommand(argv: readonly string[]): Promise<number> {
  const s = await sittingOf(argv);
  const planned = await planStudy(s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(s.ledger, s.spec.name)).map((r) => r.key));
  for (const p of planned) {
    const state = done.has(p.key) ? 'done' : folderState(new RunFolder(join(s.runs, p.key)));
    const word = { done: 'done', resumable: 'interrupted', partial: 'not started', new: 'not started' }[state];
    process.stdout.write(`${p.key}  ${word.padEnd(11)}  ${p.entry.where}: ${p.argv.join(' ')}\n`);
  }
  process.stdout.write(`${planned.filter((p) => done.has(p.key)).length}/${planned.length} runs in ${s.ledger}\n`);
  return 0;
}

/** `study report <study.json|ledger.jsonl> [--out DIR]`: report.md of the ledger (beside it unless --out). */
export async function studyReportCommand(argv: readonly string[]): Promise<number> {
  const [source, flags] = fileAndFlags(argv, 'study file or ledger');
  const f = parseFlags(flags, { out: SITTING_FLAGS.out, 'data-dir': SITTING_FLAGS['data-dir'] });
  const isLedger = source.endsWith('.jsonl');
  const ledger = isLedger ? source : join(f.out ?? dirname(source), 'ledger.jsonl');
  const name = isLedger ? undefined : (await readStudy(source)).name;
  if (!existsSync(ledger))
    throw new UsageError(`no ledger at ${ledger}: run \`grassflow-lm study run ${source}\` first`);
  const { records, warnings } = await readLedger(ledger);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const study = name ?? records[0]?.study ?? basename(ledger, '.jsonl');
  const mine = records.filter((r) => r.study === study);
  if (mine.length === 0) throw new UsageError(`${ledger} holds no finished run of study '${study}'`);
  let dataDir: string | undefined;
  try {
    dataDir = dataDirOrThrow(f['data-dir']);
  } catch (e) {
    process.stderr.write(`n-gram baselines left out of the report: ${(e as Error).message}\n`);
  }
  const baselines: BaselinesOf = async (tokenizer, evalTokens) =>
    dataDir === undefined
      ? undefined
      : validationBaselines({ tokenizer, dataDir, evalTokens: evalTokens ?? Number.MAX_SAFE_INTEGER });
  const dir = f.out ?? dirname(ledger);
  const path = await writeStudyReport(dir, study, mine, relative(resolve(dir), resolve(ledger)), baselines);
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

const USAGE = 'grassflow-lm study run|status|report <study.json> [--out DIR] [--runs DIR]';
const DESCRIPTION =
  'A study file lists train runs ({ "name", "base": {flags}, "grid": {flag: [values]} or a list of grids, "runs": ' +
  '[{flags}] }). `run` trains each run not yet in ledger.jsonl (a run is keyed by the hash of its resolved config; an ' +
  'interrupted one resumes from its checkpoint), `status` lists them, `report` aggregates the ledger over seeds.';

/** `grassflow-lm study`. */
export const studyCli: CliCommand = {
  help: 'run a study file of train runs (resumable, a ledger of results) and report it over seeds',
  run: async (argv) => {
    const [sub, ...rest] = argv;
    if (sub === undefined || ['--help', '-h', 'help'].includes(sub) || rest.includes('--help') || rest.includes('-h')) {
      wantsHelp(['--help'], USAGE, DESCRIPTION, SITTING_FLAGS);
      return sub === undefined ? 2 : 0;
    }
    if (sub === 'run') return studyRunCommand(rest);
    if (sub === 'status') return studyStatusCommand(rest);
    if (sub === 'report') return studyReportCommand(rest);
    throw new UsageError(`unknown study command '${sub}': run, status or report`);
  },
};

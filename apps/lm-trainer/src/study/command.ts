// `grassflow-lm study run|report|status`: a study file's runs, each exactly a `train` run with a resolved plan in its
// own run folder (runs/<key>), remembered in ledger.jsonl so that a study grows over sittings and machines.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import {
  lockRunFolder,
  parseFlags,
  RunFolder,
  startBackend,
  UsageError,
  wantsHelp,
  writeJsonAtomic,
} from '@grassflow/training';
import type { CliCommand, FlagSpecs } from '@grassflow/training';
import { dataDirOrThrow } from '../shared/corpus.js';
import { appendLedger, readLedger, type LedgerRecord } from './ledger.js';
import { validationBaselines } from '../baselines/report.js';
import { writeStudyReport, type BaselinesOf } from './report.js';
import { expandStudy, parseStudy, type StudySpec } from './spec.js';
import { folderState, planRun, scoreHeldOut, trainStudyRun, type PlannedRun } from './run.js';
import { InProcessQueue, type RunQueue } from './queue.js';
import { describeJob, RedisRunQueue } from '../queue/coordinator.js';
import type { StudyJobData } from '../queue/jobs.js';
import { QUEUE_ENV, queueUrlOf } from '../queue/redis.js';

export { type PlannedRun } from './run.js';

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
    const p = await planRun(entry, file, sitting);
    const same = out.get(p.key);
    if (same === undefined) out.set(p.key, p);
    else
      process.stderr.write(
        `study ${spec.name}: ${entry.where} resolves to the run of ${same.entry.where} (${p.key})\n`,
      );
  }
  return [...out.values()];
}

const SITTING_FLAGS = {
  out: { type: 'string', metavar: 'DIR', help: "folder of ledger.jsonl and report.md (default: the study file's)" },
  runs: { type: 'string', metavar: 'DIR', help: 'folder of the run folders <key>/ (default runs/study-<name>)' },
  backend: { type: 'string', help: 'tfjs backend (default: the first that loads)' },
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder (default GRASSFLOW_DATA_DIR)' },
  quiet: { type: 'boolean', help: 'no progress bars: one line per evaluation' },
  queue: {
    type: 'string',
    metavar: 'URL',
    help: `run on workers through Redis, redis://[user:password@]host:port/db (default ${QUEUE_ENV}; neither: in this process)`,
  },
  'retry-failed': { type: 'boolean', help: 'queue the runs that failed in an earlier sitting again (with --queue)' },
} as const satisfies FlagSpecs;

type Sitting = {
  study: string;
  spec: StudySpec;
  ledger: string;
  runs: string;
  trainArgv: string[];
  queue: string | undefined;
  retryFailed: boolean;
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
    queue: f.queue,
    retryFailed: f['retry-failed'],
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

/** The queue of a sitting: Redis with --queue (or GRASSFLOW_QUEUE), else in-process. */
async function queueOf(flag: string | undefined, retryFailed: boolean): Promise<RunQueue> {
  const q = queueUrlOf(flag);
  if (q === undefined) {
    if (retryFailed) throw new UsageError('--retry-failed is for a Redis queue (--queue)', 'retry-failed');
    return new InProcessQueue();
  }
  return RedisRunQueue.open(q, { retryFailed });
}

/**
 * `study run`: every run not in the ledger, through the sitting's queue (in-process: one after another, each resumed
 * from its folder's checkpoint where one exists; Redis: jobs for workers). This process alone writes the ledger.
 */
export async function studyRunCommand(argv: readonly string[]): Promise<number> {
  const s = await sittingOf(argv);
  const planned = await planStudy(s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(s.ledger, s.spec.name)).map((r) => r.key));
  const todo = planned.filter((p) => !done.has(p.key));
  const queue = await queueOf(s.queue, s.retryFailed);
  try {
    process.stderr.write(
      `study ${s.spec.name}: ${planned.length} runs, ${planned.length - todo.length} in ${s.ledger}, ${todo.length} to run (folders ${s.runs}; queue ${queue.where})\n`,
    );
    // one sitting per ledger, in process or queued: it alone writes the ledger and touches the run folders of its
    // study (a second sitting would take a live run without a checkpoint yet for a partial one and start it again)
    lockRunFolder(dirname(s.ledger), 'out');
    if (queue instanceof RedisRunQueue) await queue.forget(done);
    const sitting = { study: s.spec.name, runs: s.runs, trainArgv: s.trainArgv, heldOut: s.spec.heldOut };
    const outcome = await queue.run(sitting, todo, async (record) => {
      if (done.has(record.key)) return; // never recorded twice
      await appendLedger(s.ledger, record);
      done.add(record.key);
      process.stderr.write(
        `study ${s.spec.name}: ${record.key} final val PPL ${record.finalValPpl.toFixed(2)}, best ${record.bestValPpl.toFixed(2)} → ${s.ledger}\n`,
      );
    });
    if (outcome.stopped !== undefined) {
      const how = queue instanceof InProcessQueue ? 'the interrupted run resumes' : 'queued runs go on on the workers';
      process.stderr.write(`study ${s.spec.name} stopped; run it again to continue (${how})\n`);
      return outcome.stopped;
    }
    if (outcome.failed.length > 0) {
      process.stderr.write(
        `study ${s.spec.name}: ${outcome.failed.length} of ${planned.length} runs failed (${outcome.failed.map((f) => f.key).join(', ')}; ` +
          `\`study status\` shows their errors; the others are in ${s.ledger}): fix them and run again with --retry-failed\n`,
      );
      return 1;
    }
    process.stderr.write(`study ${s.spec.name}: all ${planned.length} runs in ${s.ledger}\n`);
    return 0;
  } finally {
    await queue.close();
  }
}

/**
 * `study status`: each planned run, its key and where it is: in the ledger (done), or, with --queue, its job (queued,
 * running on which worker at which step, failed with its error), else its folder (interrupted, not started).
 */
export async function studyStatusCommand(argv: readonly string[]): Promise<number> {
  const s = await sittingOf(argv);
  const planned = await planStudy(s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(s.ledger, s.spec.name)).map((r) => r.key));
  const q = queueUrlOf(s.queue);
  const queue = q === undefined ? undefined : await RedisRunQueue.open(q);
  const counts = new Map<string, number>();
  try {
    for (const p of planned) {
      let word: string;
      if (done.has(p.key)) word = 'done';
      else {
        const job = await queue?.job(p.key);
        if (queue !== undefined && job !== undefined) word = describeJob(await job.getState(), job);
        else {
          const state = folderState(new RunFolder(join(s.runs, p.key)));
          word = { resumable: 'interrupted', partial: 'not started', new: 'not started' }[state];
        }
      }
      const head = word.startsWith('not started') ? 'not started' : (word.split(/[ :]/)[0] as string);
      counts.set(head, (counts.get(head) ?? 0) + 1);
      const [shown, error] = word.startsWith('failed: ') ? ['failed', word.slice(8)] : [word, undefined];
      process.stdout.write(`${p.key}  ${shown.padEnd(11)}  ${p.entry.where}: ${p.argv.join(' ')}\n`);
      if (error !== undefined) process.stdout.write(`    error: ${error}\n`);
    }
  } finally {
    await queue?.close();
  }
  const others = [...counts].filter(([w]) => w !== 'done').map(([w, n]) => `${n} ${w}`);
  process.stdout.write(
    `${planned.filter((p) => done.has(p.key)).length}/${planned.length} runs in ${s.ledger}` +
      `${others.length > 0 ? ` (${others.join(', ')})` : ''}${queue === undefined ? '' : `; queue ${queue.where}`}\n`,
  );
  return 0;
}

/**
 * `study job <job.json> --result FILE [--runs DIR]`: what a worker runs in a child process for one job: the run's
 * flags planned on this machine (the key must come out as the coordinator's), trained in DIR/<key>, and its ledger
 * record written to FILE. Not for people: `grassflow-lm worker` starts it.
 */
export async function studyJobCommand(argv: readonly string[]): Promise<number> {
  const [file, flags] = fileAndFlags(argv, 'job file');
  const f = parseFlags(flags, {
    result: { type: 'string', metavar: 'FILE', help: 'where the ledger record goes' },
    runs: SITTING_FLAGS.runs,
    backend: SITTING_FLAGS.backend,
    'data-dir': SITTING_FLAGS['data-dir'],
    quiet: SITTING_FLAGS.quiet,
  });
  if (f.result === undefined || f.runs === undefined) throw new UsageError('give --result FILE and --runs DIR');
  const job = JSON.parse(await readFile(file, 'utf8')) as StudyJobData;
  const trainArgv = [
    ...(f.quiet ? ['--quiet'] : []),
    ...(f.backend === undefined ? [] : ['--backend', f.backend]),
    ...(f['data-dir'] === undefined ? [] : ['--data-dir', f['data-dir']]),
  ];
  const p = await planRun(job.entry, `study ${job.study}`, trainArgv);
  if (p.key !== job.key) {
    throw new Error(
      `${job.entry.where} resolves to key ${p.key} here, not ${job.key} as on the coordinator: run the coordinator's ` +
        `code commit (${job.code ?? 'unknown'}) on this worker`,
    );
  }
  const head = `study ${job.study}: ${p.key} (${p.entry.where}: ${p.argv.join(' ')})`;
  const o = await trainStudyRun(job.study, p, resolve(f.runs), trainArgv, head, job.heldOut ?? true);
  if ('stopped' in o) return o.stopped;
  await writeJsonAtomic(f.result, o.record);
  return 0;
}

/** `study report <study.json|ledger.jsonl> [--out DIR]`: report.md of the ledger (beside it unless --out). */
export async function studyReportCommand(argv: readonly string[]): Promise<number> {
  const [source, flags] = fileAndFlags(argv, 'study file or ledger');
  const f = parseFlags(flags, { out: SITTING_FLAGS.out, 'data-dir': SITTING_FLAGS['data-dir'] });
  const isLedger = source.endsWith('.jsonl');
  const ledger = isLedger ? source : join(f.out ?? dirname(source), 'ledger.jsonl');
  const spec = isLedger ? undefined : await readStudy(source);
  const name = spec?.name;
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
  const source_ = relative(resolve(dir), resolve(ledger));
  const path = await writeStudyReport(dir, study, mine, source_, baselines, spec?.pairAcross ?? []);
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

/**
 * `study rescore <study.json> [--runs DIR] [--data-dir DIR]`: score every ledger run without held-out scores whose
 * checkpoint still exists (runs/<key>/checkpoints/latest) on all of wiki.valid and wiki.test, and write the ledger back
 * (atomically, after each run). Runs whose folder is gone are listed and left as they are.
 */
export async function studyRescoreCommand(argv: readonly string[]): Promise<number> {
  const s = await sittingOf(argv);
  const dataDir = dataDirOrThrow(
    s.trainArgv.includes('--data-dir') ? s.trainArgv[s.trainArgv.indexOf('--data-dir') + 1] : undefined,
  );
  lockRunFolder(dirname(s.ledger), 'out'); // it rewrites the ledger: not beside a sitting that appends to it
  const records = await studyLedger(s.ledger, s.spec.name);
  const todo = records.filter((r) => r.heldOut === undefined);
  if (todo.length === 0) {
    process.stderr.write(`study ${s.spec.name}: every run of ${s.ledger} has held-out scores\n`);
    return 0;
  }
  await startBackend(s.trainArgv.includes('--backend') ? s.trainArgv[s.trainArgv.indexOf('--backend') + 1] : undefined);
  let missing = 0;
  for (const [i, r] of todo.entries()) {
    const run = new RunFolder(join(s.runs, r.key));
    if (!existsSync(join(run.latestCheckpoint, 'config.json'))) {
      process.stderr.write(
        `[${i + 1}/${todo.length}] ${r.key}: no checkpoint in ${run.dir}; left without held-out scores\n`,
      );
      missing += 1;
      continue;
    }
    const heldOut = await scoreHeldOut(run, dataDir);
    await appendLedger(s.ledger, { ...r, heldOut });
    process.stderr.write(
      `[${i + 1}/${todo.length}] ${r.key}: valid PPL ${heldOut.valid.ppl.toFixed(2)}, test PPL ${heldOut.test.ppl.toFixed(2)}\n`,
    );
  }
  process.stderr.write(`study ${s.spec.name}: ${todo.length - missing} rescored, ${missing} without a checkpoint\n`);
  return 0;
}

const USAGE =
  'grassflow-lm study run|status|report|rescore <study.json> [--out DIR] [--runs DIR] [--queue redis://host:port/db]';
const DESCRIPTION =
  'A study file lists train runs ({ "name", "base": {flags}, "grid": {flag: [values]} or a list of grids, "runs": ' +
  '[{flags}] }). `run` trains each run not yet in ledger.jsonl (a run is keyed by the hash of its resolved config; an ' +
  'interrupted one resumes from its checkpoint) and scores its final checkpoint on all of wiki.valid and wiki.test, ' +
  '`status` lists them, `report` aggregates the ledger over seeds, `rescore` adds the held-out scores to ledger runs ' +
  'from before them whose checkpoints still exist. ' +
  'With --queue (or GRASSFLOW_QUEUE), `run` queues the runs in Redis for `grassflow-lm worker` processes on any ' +
  'machine and records their results; `status` shows queued, running (worker, step) and failed runs.';

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
    if (sub === 'rescore') return studyRescoreCommand(rest);
    if (sub === 'job') return studyJobCommand(rest);
    throw new UsageError(`unknown study command '${sub}': run, status, report or rescore`);
  },
};

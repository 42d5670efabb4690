// `<program> study run|status|report|job`, on any trainer: a study file's runs, each exactly a run of the trainer in
// its own run folder (runs/<key>), remembered in ledger.jsonl so that a study grows over sittings and machines.
// Each subcommand resolves its flags once into a plan (planCommand), then runs it.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import {
  checkWritableFolder,
  gitCommit,
  lockRunFolder,
  parseFlags,
  planCommand,
  UsageError,
  wantsHelp,
  writeJsonAtomic,
} from '@grassflow/training';
import type { CliCommand, FlagSpecs } from '@grassflow/training';
import { appendLedger, readLedger, type StudyRecord } from './ledger.js';
import { InProcessQueue, type RunQueue } from './queue.js';
import { folderState, planRun, runDirOf, trainStudyRun } from './run.js';
import { expandStudy, parseStudy, type StudyFlags, type StudySpec } from './spec.js';
import type { PlannedRun, StudyTrainer } from './trainer.js';
import { describeJob, RedisRunQueue } from './queue/coordinator.js';
import type { StudyJobData } from './queue/jobs.js';
import { QUEUE_ENV, queueUrlOf } from './queue/redis.js';

/** The largest study file read: the project's longest is a few KiB; a larger one is not a study file. */
const STUDY_FILE_MAX_BYTES = 1 << 20;

/** Read and check a study file against a trainer's flags. */
export async function readStudy(path: string, flags: StudyFlags): Promise<StudySpec> {
  if (!existsSync(path)) throw new UsageError(`study file ${path} does not exist`);
  // looked at before it is read: a device (/dev/full, /dev/zero) or a huge file would be read whole into memory
  const st = statSync(path);
  if (!st.isFile()) {
    throw new UsageError(`study file ${path} is not a regular file (${st.isDirectory() ? 'a folder' : 'a device'})`);
  }
  if (st.size > STUDY_FILE_MAX_BYTES) {
    throw new UsageError(
      `study file ${path} is ${(st.size / 2 ** 20).toFixed(1)} MiB; a study file is JSON of at most 1 MiB`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`${path} is not JSON: ${(e as Error).message}`);
  }
  return parseStudy(json, path, flags);
}

/**
 * Each run's flags through the trainer's own planning (every check that needs no data); runs resolving to the same
 * config (e.g. a Transformer given Grassmann-only flags) are one run.
 */
export async function planStudy<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  spec: StudySpec,
  file: string,
  sitting: readonly string[],
): Promise<P[]> {
  const out = new Map<string, P>();
  for (const entry of expandStudy(spec)) {
    const p = await planRun(trainer, entry, file, sitting);
    const same = out.get(p.key);
    if (same === undefined) out.set(p.key, p);
    else
      process.stderr.write(
        `study ${spec.name}: ${entry.where} resolves to the run of ${same.entry.where} (${p.key})\n`,
      );
  }
  return [...out.values()];
}

/** The flags of a sitting (`study run|status|report`). */
const SITTING_FLAGS = {
  out: { type: 'string', metavar: 'DIR', help: "folder of ledger.jsonl and report.md (default: the study file's)" },
  runs: { type: 'string', metavar: 'DIR', help: 'folder of the run folders <key>/ (default runs/study-<name>)' },
  backend: { type: 'string', help: 'tfjs backend (default: the first that loads)' },
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder (default GRASSFLOW_DATA_DIR)' },
  quiet: { type: 'boolean', help: 'no progress bars: one line per evaluation' },
  'allow-dirty': {
    type: 'boolean',
    help: 'study run: train from a checkout with uncommitted changes (its records say so: their code ends in -dirty)',
  },
} as const satisfies FlagSpecs;

/** And where the program has workers: the Redis queue. */
const QUEUE_FLAGS = {
  ...SITTING_FLAGS,
  queue: {
    type: 'string',
    metavar: 'URL',
    help: `run on workers through Redis, redis://[user:password@]host:port/db (default ${QUEUE_ENV}; neither: in this process)`,
  },
  'retry-failed': { type: 'boolean', help: 'queue the runs that failed in an earlier sitting again (with --queue)' },
} as const satisfies FlagSpecs;

/** A sitting, resolved once from the flags: the study, where its ledger and run folders are, its train flags. */
export interface Sitting {
  /** The study file. */
  study: string;
  spec: StudySpec;
  ledger: string;
  runs: string;
  /** The sitting's train flags (--quiet, --backend, --data-dir), given to every run. */
  trainArgv: string[];
  /** --data-dir and --backend as given. */
  dataDir: string | undefined;
  backend: string | undefined;
  queue: string | undefined;
  retryFailed: boolean;
  /** The commit of the code that runs (gitCommit: `-dirty` with uncommitted changes), null outside a git checkout. */
  code: string | null;
  /** --allow-dirty: run from a checkout with uncommitted changes. */
  allowDirty: boolean;
}

/** The study file (the first argument) and the flags after it. */
function fileAndFlags(argv: readonly string[], what: string): [string, string[]] {
  const [file, ...flags] = argv;
  if (file === undefined || file.startsWith('-')) throw new UsageError(`give the ${what} first, then the flags`);
  return [file, flags];
}

/** The sitting's train flags, passed to each run (and to a worker's child). */
function trainArgvOf(f: { quiet: boolean; backend?: string | undefined; 'data-dir'?: string | undefined }): string[] {
  return [
    ...(f.quiet ? ['--quiet'] : []),
    ...(f.backend === undefined ? [] : ['--backend', f.backend]),
    ...(f['data-dir'] === undefined ? [] : ['--data-dir', f['data-dir']]),
  ];
}

/** What the study commands of a program need: its trainer, whether it has workers (--queue), its help. */
export interface StudyCommandOptions<P extends PlannedRun, R extends StudyRecord> {
  trainer: StudyTrainer<P, R>;
  /** Whether `study run|status` take --queue (the program has a `worker` command). */
  queue: boolean;
  usage: string;
  description: string;
  /** One line for the program's help. */
  help: string;
  /** More subcommands of the program's `study` (e.g. grassflow-lm's `rescore`), by name. */
  more?: Readonly<Record<string, CliCommand>>;
}

/** The flags of `study run|status` as a plan: the sitting (the study file read and checked). */
export async function planSitting(argv: readonly string[], flags: StudyFlags, queue: boolean): Promise<Sitting> {
  const [study, rest] = fileAndFlags(argv, 'study file');
  const f = queue
    ? parseFlags(rest, QUEUE_FLAGS)
    : { ...parseFlags(rest, SITTING_FLAGS), queue: undefined, 'retry-failed': false };
  const spec = await readStudy(study, flags);
  return {
    study,
    spec,
    ledger: join(f.out ?? dirname(study), 'ledger.jsonl'),
    runs: resolve(f.runs ?? join('runs', `study-${spec.name}`)),
    trainArgv: trainArgvOf(f),
    dataDir: f['data-dir'],
    backend: f.backend,
    queue: f.queue,
    retryFailed: f['retry-failed'],
    code: gitCommit(),
    allowDirty: f['allow-dirty'],
  };
}

/** The ledger's records of this study; records of another study in the same file are an error. */
export async function studyLedger<R extends StudyRecord>(
  trainer: StudyTrainer<PlannedRun, R>,
  path: string,
  name: string,
): Promise<R[]> {
  const { records, warnings } = await readLedger(path, trainer.ledger, name); // another study's line is refused
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  return records;
}

/** The queue of a sitting: Redis with --queue (or GRASSFLOW_QUEUE), else in-process. */
async function queueOf<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  s: Sitting,
  workers: boolean,
): Promise<{ queue: RunQueue<P, R>; redis?: RedisRunQueue }> {
  const q = workers ? queueUrlOf(s.queue) : undefined;
  if (q === undefined) {
    if (s.retryFailed) throw new UsageError('--retry-failed is for a Redis queue (--queue)', 'retry-failed');
    return { queue: new InProcessQueue(trainer) };
  }
  const redis = await RedisRunQueue.open(q, { program: trainer.program, retryFailed: s.retryFailed });
  return { queue: redis.studyQueue(trainer), redis };
}

/**
 * `study run`: every run not in the ledger, through the sitting's queue (in-process: one after another, each resumed
 * from its folder's checkpoint where one exists; Redis: jobs for workers). This process alone writes the ledger.
 */
export async function runSitting<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  s: Sitting,
  workers: boolean,
): Promise<number> {
  // a study's records name the code that made them; a record from uncommitted code names none that can be checked out
  if (s.code !== null && s.code.endsWith('-dirty') && !s.allowDirty) {
    throw new UsageError(
      `this checkout has uncommitted changes (${s.code}): commit them (or stash them) and run the study again, ` +
        'or give --allow-dirty (its records then say -dirty)',
      'allow-dirty',
    );
  }
  const planned = await planStudy(trainer, s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(trainer, s.ledger, s.spec.name)).map((r) => r.key));
  const todo = planned.filter((p) => !done.has(p.key));
  const { queue, redis } = await queueOf(trainer, s, workers);
  try {
    process.stderr.write(
      `study ${s.spec.name}: ${planned.length} runs, ${planned.length - todo.length} in ${s.ledger}, ${todo.length} to run (folders ${s.runs}; queue ${queue.where})\n`,
    );
    // one sitting per ledger, in process or queued: it alone writes the ledger and touches the run folders of its
    // study (a second sitting would take a live run without a checkpoint yet for a partial one and start it again)
    lockRunFolder(dirname(s.ledger), 'out');
    // in process, the run folders are this machine's: a file in the way or a read-only disk is refused now, not
    // after planning and loading (on a queue they are the workers', which check them on their machines)
    if (redis === undefined) checkWritableFolder(s.runs, 'runs');
    if (redis !== undefined) await redis.forget(done);
    const sitting = { study: s.spec.name, runs: s.runs, trainArgv: s.trainArgv, heldOut: s.spec.heldOut };
    const outcome = await queue.run(sitting, todo, async (record) => {
      if (done.has(record.key)) return; // never recorded twice
      await appendLedger(s.ledger, record, trainer.ledger);
      done.add(record.key);
      process.stderr.write(`study ${s.spec.name}: ${record.key} ${trainer.describe(record)} → ${s.ledger}\n`);
    });
    if (outcome.stopped !== undefined) {
      const how = redis === undefined ? 'the interrupted run resumes' : 'queued runs go on on the workers';
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
export async function statusOfSitting<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  s: Sitting,
  workers: boolean,
): Promise<number> {
  const planned = await planStudy(trainer, s.spec, s.study, s.trainArgv);
  const done = new Set((await studyLedger(trainer, s.ledger, s.spec.name)).map((r) => r.key));
  const q = workers ? queueUrlOf(s.queue) : undefined;
  const queue = q === undefined ? undefined : await RedisRunQueue.open(q, { program: trainer.program });
  const counts = new Map<string, number>();
  try {
    for (const p of planned) {
      let word: string;
      if (done.has(p.key)) word = 'done';
      else {
        const found = await queue?.job(p.key);
        if (found !== undefined) word = describeJob(found.state, found.job);
        else {
          const state = folderState(runDirOf(s.runs, p.key));
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

/** `study job` as a plan: the job, where its result goes, the worker's run folders and train flags. */
interface JobPlan {
  job: StudyJobData;
  result: string;
  runs: string;
  trainArgv: string[];
}

async function planJob(argv: readonly string[]): Promise<JobPlan> {
  const [file, rest] = fileAndFlags(argv, 'job file');
  const s = SITTING_FLAGS;
  const f = parseFlags(rest, {
    result: { type: 'string', metavar: 'FILE', help: 'where the ledger record goes' },
    runs: s.runs,
    backend: s.backend,
    'data-dir': s['data-dir'],
    quiet: s.quiet,
  });
  if (f.result === undefined || f.runs === undefined) throw new UsageError('give --result FILE and --runs DIR');
  const job = JSON.parse(await readFile(file, 'utf8')) as StudyJobData;
  return { job, result: f.result, runs: resolve(f.runs), trainArgv: trainArgvOf(f) };
}

/**
 * `study job <job.json> --result FILE [--runs DIR]`: what a worker runs in a child process for one job: the run's
 * flags planned on this machine (the key must come out as the coordinator's), trained in DIR/<key>, and its ledger
 * record written to FILE. Not for people: `<program> worker` starts it.
 */
async function runJob<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  { job, result, runs, trainArgv }: JobPlan,
): Promise<number> {
  const p = await planRun(trainer, job.entry, `study ${job.study}`, trainArgv);
  if (p.key !== job.key) {
    throw new Error(
      `${job.entry.where} resolves to key ${p.key} here, not ${job.key} as on the coordinator: run the coordinator's ` +
        `code commit (${job.code ?? 'unknown'}) on this worker`,
    );
  }
  const head = `study ${job.study}: ${p.key} (${p.entry.where}: ${p.argv.join(' ')})`;
  const o = await trainStudyRun(trainer, job.study, p, runs, trainArgv, head, job.heldOut ?? true);
  if ('stopped' in o) return o.stopped;
  await writeJsonAtomic(result, o.record);
  return 0;
}

/** `study report` as a plan: the ledger, the study (by its file, else the ledger), where the report goes. */
interface ReportPlan {
  source: string;
  ledger: string;
  spec: StudySpec | undefined;
  out: string | undefined;
  dataDir: string | undefined;
}

async function planReport(argv: readonly string[], program: string, flags: StudyFlags): Promise<ReportPlan> {
  const [source, rest] = fileAndFlags(argv, 'study file or ledger');
  // --runs as the usage lists it for every subcommand: a report reads the ledger only, so it changes nothing here
  const f = parseFlags(rest, {
    out: SITTING_FLAGS.out,
    runs: SITTING_FLAGS.runs,
    'data-dir': SITTING_FLAGS['data-dir'],
  });
  const isLedger = source.endsWith('.jsonl');
  const ledger = isLedger ? source : join(f.out ?? dirname(source), 'ledger.jsonl');
  const spec = isLedger ? undefined : await readStudy(source, flags);
  if (!existsSync(ledger)) throw new UsageError(`no ledger at ${ledger}: run \`${program} study run ${source}\` first`);
  return { source, ledger, spec, out: f.out, dataDir: f['data-dir'] };
}

/** `study report <study.json|ledger.jsonl> [--out DIR]`: the trainer's report of the ledger (beside it, or --out). */
async function runReport<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  r: ReportPlan,
): Promise<number> {
  // a ledger given alone is the study of its first record; every line must be of that study, as in `status`
  const first = r.spec === undefined ? (await readLedger(r.ledger, trainer.ledger)).records[0]?.study : undefined;
  const { records, warnings } = await readLedger(r.ledger, trainer.ledger, r.spec?.name ?? first);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const study = r.spec?.name ?? first ?? basename(r.ledger, '.jsonl');
  if (records.length === 0) throw new UsageError(`${r.ledger} holds no finished run of study '${study}'`);
  const mine = records;
  const dir = r.out ?? dirname(r.ledger);
  checkWritableFolder(dir, 'out');
  const source = relative(resolve(dir), resolve(r.ledger));
  const path = await trainer.report({ dir, study, records: mine, source, spec: r.spec, dataDir: r.dataDir });
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

/** `<program> study`: run, status, report and job (and the program's own subcommands), each flags → plan → run. */
export function studyCli<P extends PlannedRun, R extends StudyRecord>(o: StudyCommandOptions<P, R>): CliCommand {
  const t = o.trainer;
  const flags = o.queue ? QUEUE_FLAGS : SITTING_FLAGS;
  const sub = (help: string, run: (s: Sitting) => Promise<number>): CliCommand =>
    planCommand({
      usage: o.usage,
      description: o.description,
      flags,
      help,
      plan: (argv) => planSitting(argv, t.flags, o.queue),
      run,
    });
  const commands: Record<string, CliCommand> = {
    run: sub('train the runs not in the ledger', (s) => runSitting(t, s, o.queue)),
    status: sub('where each run is', (s) => statusOfSitting(t, s, o.queue)),
    report: planCommand({
      usage: o.usage,
      description: o.description,
      flags,
      help: 'the report of the ledger',
      plan: (argv) => planReport(argv, t.program, t.flags),
      run: (r) => runReport(t, r),
    }),
    ...o.more,
    job: planCommand({
      usage: o.usage,
      description: o.description,
      flags,
      help: "a queued run, in a worker's child process",
      plan: planJob,
      run: (j) => runJob(t, j),
    }),
  };
  const names = Object.keys(commands).filter((k) => k !== 'job');
  return {
    help: o.help,
    run: async (argv) => {
      const [name, ...rest] = argv;
      if (
        name === undefined ||
        ['--help', '-h', 'help'].includes(name) ||
        rest.includes('--help') ||
        rest.includes('-h')
      ) {
        wantsHelp(['--help'], o.usage, o.description, flags);
        return name === undefined ? 2 : 0;
      }
      const c = commands[name];
      if (c === undefined) {
        const list = `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] ?? ''}`;
        throw new UsageError(`unknown study command '${name}': ${list}`);
      }
      return c.run(rest);
    },
  };
}

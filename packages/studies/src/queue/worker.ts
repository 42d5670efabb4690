// `<program> worker --queue URL`: take jobs (study runs, and whatever else a program queues, e.g. grassflow-lm's ladder
// rungs) from the Redis queue and train each in a child process (`study job`, …), so that this process's event loop
// stays free to renew the job's lock while a training step blocks the child's.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readSync, closeSync, fstatSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Job } from 'bullmq';
import { checkWritableFolder, gitCommit, parseFlags, SUPERVISED_ENV, UsageError, wantsHelp } from '@grassflow/training';
import type { CliCommand, FlagSpecs } from '@grassflow/training';
import { queueModules } from './deps.js';
import { workerName, type StudyJobData, type StudyJobProgress } from './jobs.js';
import { probeRedis, QUEUE_ENV, QUEUE_NAME, QUEUE_PREFIX, queueUrlOf, redisConnection, RedisOutage } from './redis.js';

const WORKER_FLAGS = {
  queue: { type: 'string', metavar: 'URL', help: `the study queue, redis://host:port/db (default ${QUEUE_ENV})` },
  concurrency: {
    type: 'int',
    min: 1,
    max: 64,
    default: 1,
    help: 'runs trained at the same time, each in its own process',
  },
  runs: {
    type: 'string',
    metavar: 'DIR',
    help: "folder of this worker's run folders <key>/ (default: the coordinator's --runs, right where workers share its file system at the same path)",
  },
  'stall-seconds': {
    type: 'int',
    min: 1,
    default: 30,
    help: "a job whose worker stops renewing its lock for this long (killed, machine gone) is taken back and retried (BullMQ's lockDuration and stalledInterval)",
  },
  backend: { type: 'string', help: 'tfjs backend of the runs (default: the first that loads)' },
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder on this machine (default GRASSFLOW_DATA_DIR)' },
} as const satisfies FlagSpecs;

/**
 * How long a job this machine cannot run (its run folder cannot be written here) waits before a worker takes it
 * again: time for another worker to take it first.
 */
const HAND_BACK_MS = 10_000;

/** How often a running job's progress (the last step in its metrics.jsonl) is sent to Redis. */
const PROGRESS_MS = 2000;

/** The last `step` of a metrics.jsonl (its last 4 KiB read), or null. */
function lastStep(path: string): number | null {
  if (!existsSync(path)) return null;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const n = Math.min(size, 4096);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    const lines = buf.toString('utf8').split('\n').reverse();
    for (const line of lines) {
      try {
        const r = JSON.parse(line) as { step?: unknown };
        if (typeof r.step === 'number') return r.step;
      } catch {
        // a cut first line or a torn last one
      }
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

function totalStepsOf(runDir: string): number | null {
  try {
    const c = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as { totalSteps?: unknown };
    return typeof c.totalSteps === 'number' ? c.totalSteps : null;
  } catch {
    return null;
  }
}

/** The error line the CLI prints last (`<program> study: Name: message`), without the command's prefix. */
function errorOf(program: string, stderr: string): string | undefined {
  const lines = stderr.split('\n').filter((l) => l.startsWith(`${program} `));
  return lines[lines.length - 1]?.replace(new RegExp(`^${program} \\w+:? `), '');
}

/** What a worker is given to start a job's child process. */
export interface JobContext {
  /** Where the job's data is written (the child reads it) and where the child writes its result. */
  jobFile: string;
  resultFile: string;
  /** The worker's --runs, if given (else the coordinator's folder of run folders). */
  runs: string | undefined;
  /** --backend B and --data-dir DIR of the worker, to pass on (empty when not given). */
  backendArgs: string[];
  dataArgs: string[];
}

/** A job's child: its command line after the program, its run folder (if it has one), how to name it. */
export interface JobChild {
  args: string[];
  runDir?: string;
  label: string;
  /** What queued it (warnings name it) and that coordinator's code commit. */
  what: string;
  code: string | null;
}

/** How a worker runs a kind of job (by BullMQ job name): the child process of its data. */
export type JobKind = (data: unknown, ctx: JobContext) => JobChild;

/** A study run's child: `<program> study job <job.json> --result FILE --runs DIR --quiet …`. */
export const studyJobKind: JobKind = (data, ctx) => {
  const d = data as StudyJobData;
  const runs = ctx.runs === undefined ? d.runs : resolve(ctx.runs);
  return {
    args: [
      'study',
      'job',
      ctx.jobFile,
      '--result',
      ctx.resultFile,
      '--runs',
      runs,
      '--quiet',
      ...ctx.backendArgs,
      ...ctx.dataArgs,
    ],
    runDir: join(runs, d.key),
    label: `study ${d.study}, ${d.entry.where}`,
    what: `study ${d.study}`,
    code: d.code,
  };
};

/** A program's worker: its name, its help, and the kinds of job it runs by job name (study runs: studyJobKind). */
export interface WorkerOptions {
  program: string;
  usage: string;
  description: string;
  /** One line for the program's help. */
  help: string;
  jobs: Readonly<Record<string, JobKind>>;
}

/** `<program> worker`. */
export async function workerCommand(argv: readonly string[], w: WorkerOptions): Promise<number> {
  if (wantsHelp(argv, w.usage, w.description, WORKER_FLAGS)) return 0;
  const f = parseFlags(argv, WORKER_FLAGS);
  const q = queueUrlOf(f.queue);
  if (q === undefined) throw new UsageError(`give --queue redis://host:port/db or set ${QUEUE_ENV}`, 'queue');
  // refused before any job is taken: a worker that cannot write its run folders would fail every job it takes
  if (f.runs !== undefined) checkWritableFolder(f.runs, 'runs');
  await probeRedis(q);
  const { DelayedError, UnrecoverableError, WaitingError, Worker } = queueModules().bullmq;
  const name = workerName();
  const cliFile = resolve(process.argv[1] ?? '');
  const code = gitCommit(dirname(cliFile));
  const children = new Set<ChildProcess>();
  const warned = new Set<string>();
  let stopping: NodeJS.Signals | null = null;
  const say = (line: string): boolean => process.stderr.write(`worker ${name}: ${line}\n`);
  const tmp = await mkdtemp(join(tmpdir(), 'grassflow-worker-'));

  const warnCode = (what: string, queuedFrom: string | null): void => {
    if (queuedFrom === code || warned.has(`${queuedFrom}`)) return;
    warned.add(`${queuedFrom}`);
    say(
      `warning: ${what} was queued from code ${queuedFrom ?? '(no git)'}, this worker runs ${code ?? '(no git)'}: ` +
        'every machine should run the same commit (a run whose flags resolve differently fails; other changes go unnoticed)',
    );
  };
  const backendArgs = f.backend === undefined ? [] : ['--backend', f.backend];
  const dataArgs = f['data-dir'] === undefined ? [] : ['--data-dir', f['data-dir']];

  /** A job's child command line (after the program), its run folder (a study run's) and how to name it. */
  const childOf = (
    job: Job,
    jobFile: string,
    resultFile: string,
  ): { args: string[]; runDir?: string; label: string } => {
    const kind = w.jobs[job.name];
    if (kind === undefined) {
      throw new UnrecoverableError(`this worker knows no job '${job.name}' (run the coordinator's code commit here)`);
    }
    const c = kind(job.data, { jobFile, resultFile, runs: f.runs, backendArgs, dataArgs });
    warnCode(c.what, c.code);
    return c;
  };

  /** Whether the queue still holds `job` as taken with `token` (a Redis restart can lose or expire its lock). */
  const holdsLock = async (job: Job, token: string | undefined): Promise<boolean> =>
    token !== undefined && (await connection.get(`${QUEUE_PREFIX}:${QUEUE_NAME}:${job.id ?? ''}:lock`)) === token;

  const processor = async (job: Job, token?: string): Promise<unknown> => {
    const key = job.id ?? 'job';
    const kept = (job.data as { result?: unknown }).result;
    if (kept !== undefined) {
      say(`${key}: finished by an earlier worker whose lock the queue lost; its result handed on`);
      return kept;
    }
    const jobFile = join(tmp, `${key}.json`);
    const resultFile = join(tmp, `${key}.result.json`);
    const { args: command, runDir, label } = childOf(job, jobFile, resultFile);
    if (runDir !== undefined) {
      try {
        checkWritableFolder(dirname(runDir), 'runs');
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        // a fault of this machine, not of the run: handed back without using an attempt, for a worker that can
        // (BullMQ counts an attempt for a thrown error, none for a job moved to delayed before DelayedError)
        say(`${key}: ${e.message}; handed back to the queue for another worker (give this one a --runs it can write)`);
        await job.moveToDelayed(Date.now() + HAND_BACK_MS, token);
        throw new DelayedError();
      }
    }
    await writeFile(jobFile, JSON.stringify(job.data));
    await rm(resultFile, { force: true });
    const args = [...process.execArgv, cliFile, ...command];
    const retry = job.attemptsMade + job.stalledCounter > 0 ? ' (a retry)' : '';
    say(`${key} (${label})${runDir === undefined ? '' : ` → ${runDir}`}${retry}`);
    // the child is "supervised" by this process: it runs the command itself and stops (checkpoint after its step)
    // when this process dies (its parent changes), or on the SIGTERM passed on below. In its own process group, so
    // that a terminal's Ctrl-C reaches it once, through this process (a second signal would stop it at once).
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'inherit', 'pipe'],
      env: { ...process.env, [SUPERVISED_ENV]: '1' },
      detached: true,
    });
    children.add(child);
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      const text = b.toString();
      stderr = (stderr + text).slice(-16_384);
      process.stderr.write(text.replace(/^(?=.)/gm, `[${key}] `));
    });
    let totalSteps: number | null = null;
    const progress = setInterval(() => {
      if (runDir === undefined) return; // a ladder rung: no run folder to follow
      totalSteps ??= totalStepsOf(runDir);
      const step = lastStep(join(runDir, 'metrics.jsonl'));
      if (step === null) return;
      const p: StudyJobProgress = { worker: name, step, totalSteps, runDir };
      job.updateProgress(p).catch(() => undefined); // progress is best effort; the lock is what matters
    }, PROGRESS_MS);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
      child.on('exit', (c, s) => res({ code: c, signal: s }));
      child.on('error', (e) => {
        stderr += `\n${w.program} study: could not start the run: ${e.message}`;
        res({ code: 1, signal: null });
      });
    });
    clearInterval(progress);
    children.delete(child);
    await rm(jobFile, { force: true });
    if (exit.code === 0 && existsSync(resultFile)) {
      const result = JSON.parse(await readFile(resultFile, 'utf8')) as unknown;
      await rm(resultFile, { force: true });
      if (!(await holdsLock(job, token))) {
        // BullMQ would drop the result ("Missing lock … moveToFinished"): it is kept on the job the queue holds now
        // (queued again after a Redis restart), and the worker that takes that job hands it on without training
        try {
          await job.updateData({ ...(job.data as object), result });
          say(`${key} finished; the queue lost this worker's lock, so the result waits on the job for the next taker`);
        } catch {
          say(
            `${key} finished, but the queue no longer holds the job: the next sitting records it from its run folder`,
          );
        }
        throw new DelayedError(); // nothing for BullMQ to move: the job is not this worker's any more
      }
      say(`${key} finished`);
      return result;
    }
    const message = errorOf(w.program, stderr) ?? `the run exited with ${exit.code ?? exit.signal}`;
    if (stopping === null && exit.signal === 'SIGKILL') {
      // this worker sends SIGKILL only once it is stopping: the kernel's OOM killer does it when memory runs out. A
      // retry uses an attempt (JOB_OPTIONS), so a run too large for every machine ends failed, not in a loop.
      const why =
        `its training process was killed by SIGKILL, not by this worker: most likely the kernel's OOM killer (out of ` +
        `memory; \`dmesg\` says), try a smaller --batch or model, or a machine with more memory`;
      say(`${key}: ${why}; retried (attempt ${job.attemptsMade + 1} of ${job.opts.attempts ?? 1})`);
      throw new Error(why);
    }
    if (stopping !== null || exit.signal !== null || (exit.code ?? 0) > 128) {
      // stopped, not failed: back to the queue without using an attempt (another worker resumes its checkpoint)
      say(`${key} stopped (${stopping ?? exit.signal ?? exit.code}); back in the queue`);
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (message.includes('is being written by pid')) {
      // a job queued again (a Redis restart lost or expired the lock) while another process still trains its run:
      // not a failure of the run. Handed back without using an attempt, as often as it takes: once that process ends,
      // the run folder is free and the job resumes its finished (or stopped) run instead of training it again.
      say(`${key}: ${message}; handed back to the queue until that process ends`);
      await job.moveToDelayed(Date.now() + HAND_BACK_MS, token);
      throw new DelayedError();
    }
    say(`${key} failed: ${message}`);
    throw new UnrecoverableError(message); // deterministic (bad config, NaN, data missing here): fail once
  };

  const outage = new RedisOutage(q, (line) => void say(line));
  const connection = redisConnection(q, outage);
  const worker = new Worker(QUEUE_NAME, processor, {
    connection,
    prefix: QUEUE_PREFIX,
    name,
    concurrency: f.concurrency,
    lockDuration: f['stall-seconds'] * 1000,
    stalledInterval: f['stall-seconds'] * 1000,
    maxStalledCount: 3, // a job may lose its worker 3 times before it is failed as such
    autorun: false,
  });
  worker.on('error', (e) => outage.error(e)); // its other clients' errors: one line per outage, as the connection's
  worker.on('stalled', (id) => say(`${id}: its worker stopped renewing the lock; back in the queue`));
  const done = new Promise<void>((res) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping !== null) {
        say(`${signal} again: stopping at once`);
        for (const c of children) c.kill('SIGKILL');
        return;
      }
      stopping = signal;
      say(
        `${signal}: no new jobs; the running ones checkpoint and go back to the queue (send it again to stop at once)`,
      );
      for (const c of children) c.kill('SIGTERM');
      void worker.close().then(res);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  say(`taking jobs from ${q.shown} (concurrency ${f.concurrency}, code ${code ?? '(no git)'})`);
  void worker.run();
  await done;
  connection.disconnect(); // BullMQ leaves a connection it was given open
  await rm(tmp, { recursive: true, force: true });
  say('stopped');
  return 0;
}

/** `<program> worker` in the program's command table. */
export function workerCli(w: WorkerOptions): CliCommand {
  return {
    run: (argv) => workerCommand(argv, w),
    help: w.help,
  };
}

// The coordinator's side of the Redis queue: `study run --queue` (and any other command with jobs, e.g. grassflow-lm's
// `ladder --queue`) enqueue each unfinished run as a BullMQ job (job id = the run's key), wait for the workers and
// hand each result on; `study status` reads job states.
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { gitCommit, StopSignal } from '@grassflow/training';
import type { StudyRecord } from '../ledger.js';
import type { QueueOutcome, RunQueue, StudySitting } from '../queue.js';
import type { PlannedRun, StudyTrainer } from '../trainer.js';
import { queueModules } from './deps.js';
import { JOB_OPTIONS, STUDY_JOB, type StudyJobData, type StudyJobProgress } from './jobs.js';
import { probeRedis, QUEUE_NAME, QUEUE_PREFIX, redisConnection, RedisOutage, type QueueUrl } from './redis.js';

/** How often the coordinator looks at its jobs (states are read, not pushed: a restart loses nothing). */
const POLL_MS = 1000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A job's state as `study status` names it. */
export type JobWord = 'queued' | 'running' | 'finished' | 'failed';

export function jobWord(state: string): JobWord {
  if (state === 'active') return 'running';
  if (state === 'completed') return 'finished';
  if (state === 'failed') return 'failed';
  return 'queued'; // waiting, delayed (a retry's backoff), prioritized, waiting-children
}

/** A job to run: its id (the run's key), BullMQ name, data, and how messages name it. */
export interface QueuedJob<D> {
  key: string;
  name: string;
  data: D;
  where: string;
}

/** The Redis queue every study run (and any other job, e.g. a ladder rung) goes through. */
export class RedisRunQueue {
  readonly where: string;
  private constructor(
    private readonly connection: Redis,
    readonly queue: Queue,
    where: string,
    private readonly retryFailed: boolean,
    private readonly program: string,
  ) {
    this.where = where;
  }

  /**
   * Connect (a clear error when Redis does not answer). `program` is the one whose workers take the jobs
   * (`<program> worker`); `retryFailed` queues the jobs that failed in an earlier sitting again.
   */
  static async open(q: QueueUrl, opts: { program: string; retryFailed?: boolean }): Promise<RedisRunQueue> {
    await probeRedis(q);
    const outage = new RedisOutage(q);
    const connection = redisConnection(q, outage);
    const queue = new (queueModules().bullmq.Queue)(QUEUE_NAME, { connection, prefix: QUEUE_PREFIX });
    // without a listener BullMQ prints each of the Queue's errors with its stack (dozens in an outage of seconds)
    queue.on('error', (e: Error) => outage.error(e));
    await queue.waitUntilReady();
    return new RedisRunQueue(connection, queue, q.shown, opts.retryFailed ?? false, opts.program);
  }

  /**
   * The job of a run key with its state, if the queue holds one. State first: BullMQ writes a job's return value (or
   * failure reason) in the same script that moves it to completed (failed), so a job read after its state holds what
   * that state promises, where a job read before it may not (the worker finishing between the two reads; seen when
   * Redis came back after an outage and both sides' commands went out at once).
   */
  async job<D = unknown, R = unknown>(key: string): Promise<{ job: Job<D, R>; state: string } | undefined> {
    const state = await this.queue.getJobState(key);
    if (state === 'unknown') return undefined;
    const job = await queueModules().bullmq.Job.fromId<D, R>(this.queue, key);
    return job === undefined ? undefined : { job, state };
  }

  /** Remove the jobs of runs already recorded (a coordinator stopped between its write and the removal). */
  async forget(keys: Iterable<string>): Promise<void> {
    for (const key of keys) {
      const found = await this.job(key);
      if (found?.state === 'completed') await this.remove(found.job);
    }
  }

  /**
   * Remove a recorded job. BullMQ refuses while a lock is still on it (a worker that lost its lock under load and
   * took the job again); that is no error here: the job is recorded, and the next sitting's forget() removes it.
   */
  private async remove(job: Job): Promise<void> {
    try {
      await job.remove();
    } catch (e) {
      process.stderr.write(`warning: job ${job.id ?? '?'} stays in the queue for now: ${(e as Error).message}\n`);
    }
  }

  /**
   * Queue each job that the queue does not hold yet (a failed one again with retryFailed), then wait: each result
   * goes to `onResult` (then the job is removed), each failure is collected. Resolves when every job has finished
   * or failed, or on SIGINT/SIGTERM (the jobs stay queued; a new call attaches to them).
   */
  async runJobs<D, R>(
    jobs: ReadonlyArray<QueuedJob<D>>,
    say: (line: string) => void,
    onResult: (job: QueuedJob<D>, result: R, worker: string) => Promise<void>,
  ): Promise<QueueOutcome> {
    const pending = new Map(jobs.map((j) => [j.key, j]));
    const failed: QueueOutcome['failed'] = [];
    const shownState = new Map<string, string>();
    const enqueue = async (j: QueuedJob<D>): Promise<void> => {
      await this.queue.add(j.name, j.data, { ...JOB_OPTIONS, jobId: j.key });
    };
    let queued = 0;
    let attached = 0;
    for (const j of jobs) {
      const found = await this.job(j.key);
      if (found === undefined) {
        await enqueue(j);
        queued++;
      } else if (found.state === 'failed' && this.retryFailed) {
        say(`${j.key} failed before (${found.job.failedReason}); queued again (--retry-failed)`);
        await found.job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        queued++;
      } else attached++;
    }
    say(
      `${queued} runs queued, ${attached} already in the queue, on ${this.where}; waiting for workers (${this.program} worker --queue …)`,
    );
    const signal = new StopSignal().install();
    try {
      while (pending.size > 0) {
        if (signal.requested !== null) {
          say(
            `stopped: ${pending.size} runs stay queued and go on on the workers; run the command again to record them`,
          );
          return { failed, stopped: StopSignal.exitCode(signal.requested) };
        }
        for (const [key, j] of pending) {
          const found = await this.job<D, R>(key);
          if (found === undefined) {
            // removed meanwhile (e.g. by another coordinator with the same run, once it had recorded it)
            await enqueue(j);
            continue;
          }
          const { job, state } = found;
          const worker = job.processedBy ?? 'a worker';
          if (state === 'completed') {
            await onResult(j, job.returnvalue, worker);
            pending.delete(key);
            await this.remove(job);
          } else if (state === 'failed') {
            failed.push({ key, message: job.failedReason });
            pending.delete(key);
            say(`${key} failed on ${worker}: ${job.failedReason}`);
          } else {
            const word = jobWord(state);
            const shown = word === 'running' ? `running on ${job.processedBy ?? '?'}` : word;
            if (shownState.get(key) !== shown) {
              shownState.set(key, shown);
              say(`${key} ${shown} (${j.where})`);
            }
          }
        }
        if (pending.size > 0) await sleep(POLL_MS);
      }
    } finally {
      signal.uninstall();
    }
    return { failed };
  }

  /** A study's runs as jobs on this queue; each result becomes the ledger record as this study names the run. */
  studyQueue<P extends PlannedRun, R extends StudyRecord>(trainer: StudyTrainer<P, R>): RunQueue<P, R> {
    return {
      where: this.where,
      run: (s, todo, record) => this.runStudy(trainer, s, todo, record),
      close: () => this.close(),
    };
  }

  private async runStudy<P extends PlannedRun, R extends StudyRecord>(
    trainer: StudyTrainer<P, R>,
    s: StudySitting,
    todo: P[],
    record: (r: R) => Promise<void>,
  ): Promise<QueueOutcome> {
    const code = gitCommit();
    const say = (line: string): void => void process.stderr.write(`study ${s.study}: ${line}\n`);
    const byKey = new Map(todo.map((p) => [p.key, p]));
    const jobs = todo.map((p): QueuedJob<StudyJobData> => ({
      key: p.key,
      name: STUDY_JOB,
      data: { study: s.study, key: p.key, entry: p.entry, runs: s.runs, code, heldOut: s.heldOut },
      where: p.entry.where,
    }));
    return this.runJobs<StudyJobData, R | null>(jobs, say, async (j, rv, worker) => {
      const p = byKey.get(j.key) as P;
      if (rv?.format !== trainer.ledger.format || rv.key !== j.key) {
        throw new Error(`job ${j.key} completed without a study record; remove it from the queue and run again`);
      }
      // the record as this study names the run (another study may have queued the same run)
      await record(trainer.asStudyRecord(rv, p, s.study));
      say(`${j.key} done on ${worker}`);
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}

/** One line of `study status` for a run that is not in the ledger but has a job. */
export function describeJob(state: string, job: Job): string {
  const word = jobWord(state);
  if (word === 'running') {
    const p = job.progress as Partial<StudyJobProgress> | number;
    const at =
      typeof p === 'object' && typeof p.step === 'number'
        ? `, step ${p.step}/${p.totalSteps ?? '?'}${p.runDir === undefined ? '' : ` in ${p.runDir}`}`
        : '';
    return `running on ${job.processedBy ?? '?'}${at}`;
  }
  if (word === 'failed') return `failed: ${job.failedReason}`;
  if (word === 'finished') return 'finished (not yet in the ledger: `study run` records it)';
  return job.attemptsMade > 0 || job.stalledCounter > 0 ? 'queued (a retry)' : 'queued';
}

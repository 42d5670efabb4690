// What travels through the queue: a study run's job data, its progress and its result, and the job options.
import { hostname } from 'node:os';
import type { JobsOptions } from 'bullmq';
import type { StudyEntry } from '../spec.js';

/** BullMQ's job name of a study run. */
export const STUDY_JOB = 'study-run';

/**
 * A study run as a job (its id is `key`, the hash of its resolved config, so a run is never queued twice): the
 * study file's flags of the run, replanned by the worker (its key must come out the same), where the coordinator
 * keeps run folders, and the coordinator's code commit.
 */
export interface StudyJobData {
  study: string;
  key: string;
  entry: StudyEntry;
  /** The coordinator's folder of run folders (absolute): a worker's unless it has --runs. */
  runs: string;
  /** The coordinator's code commit (gitCommit), null without git. */
  code: string | null;
  /** The study file's heldOut (absent in jobs queued before it: true). */
  heldOut?: boolean;
}

/** A running job's progress, as `study status` shows it. */
export interface StudyJobProgress {
  worker: string;
  step: number;
  totalSteps: number | null;
  /** Where the worker keeps the run folder (on its machine). */
  runDir: string;
}

/** A worker's name: host and pid (stored on each job it takes, never in the ledger). */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * Jobs are kept once finished: the coordinator removes a completed job after writing its record to the ledger, and
 * a failed one stays (with its error) for `study status` until `study run --retry-failed`. `attempts` counts
 * failures that are worth retrying (a worker stopped, a run folder still locked); a deterministic failure fails at
 * once (UnrecoverableError), and a stalled job (its worker died) goes back to the queue without using an attempt.
 */
export const JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'fixed', delay: 10_000 },
  removeOnComplete: false,
  removeOnFail: false,
};

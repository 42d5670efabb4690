// How `study run` gets its runs trained: a queue. In-process (the default: one run after another in this process)
// or Redis (BullMQ jobs that `<program> worker` processes on any machine; queue/coordinator.ts).
import type { StudyRecord } from './ledger.js';
import { trainStudyRun } from './run.js';
import type { PlannedRun, StudyTrainer } from './trainer.js';

/** What a queue is given: the study, its unfinished runs and the sitting. */
export interface StudySitting {
  study: string;
  /** Folder of the run folders <key>/ (absolute). */
  runs: string;
  /** The sitting's train flags (--quiet, --backend, --data-dir). */
  trainArgv: readonly string[];
  /** The study file's heldOut: score each finished run on its held-out data. */
  heldOut: boolean;
}

/** How a queue's sitting ended: runs that failed (with their error), or the exit code it was stopped with. */
export interface QueueOutcome {
  failed: Array<{ key: string; message: string }>;
  stopped?: number;
}

/**
 * A study's queue. `run` trains every planned run (none is in the ledger yet) and hands each finished run's record to
 * `record` as it comes (the caller writes the ledger: one writer, whatever the queue). It resolves when every run
 * has finished or failed, or when the sitting was stopped.
 */
export interface RunQueue<P extends PlannedRun, R extends StudyRecord> {
  /** How to name it in messages ('in-process', or the Redis URL without its password). */
  readonly where: string;
  run(sitting: StudySitting, todo: P[], record: (r: R) => Promise<void>): Promise<QueueOutcome>;
  close(): Promise<void>;
}

/** The default queue: each run in this process, one after another (what `study run` has always done). */
export class InProcessQueue<P extends PlannedRun, R extends StudyRecord> implements RunQueue<P, R> {
  readonly where = 'in-process';

  constructor(private readonly trainer: StudyTrainer<P, R>) {}

  async run(s: StudySitting, todo: P[], record: (r: R) => Promise<void>): Promise<QueueOutcome> {
    for (const [i, p] of todo.entries()) {
      const head = `study ${s.study}: run ${i + 1}/${todo.length} ${p.key} (${p.entry.where}: ${p.argv.join(' ')})`;
      const o = await trainStudyRun(this.trainer, s.study, p, s.runs, s.trainArgv, head, s.heldOut);
      if ('stopped' in o) return { failed: [], stopped: o.stopped };
      await record(o.record);
    }
    return { failed: [] };
  }

  async close(): Promise<void> {}
}

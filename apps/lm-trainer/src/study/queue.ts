// How `study run` gets its runs trained: a queue. In-process (the default: one run after another in this process)
// or Redis (BullMQ jobs that `grassflow-lm worker` processes on any machine; src/queue/coordinator.ts).
import type { LedgerRecord } from './ledger.js';
import { trainStudyRun, type PlannedRun } from './run.js';

/** What a queue is given: the study, its unfinished runs and the sitting. */
export interface StudySitting {
  study: string;
  /** Folder of the run folders <key>/ (absolute). */
  runs: string;
  /** The sitting's train flags (--quiet, --backend, --data-dir). */
  trainArgv: readonly string[];
  /** The study file's heldOut: score each finished run on all of wiki.valid and wiki.test. */
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
export interface RunQueue {
  /** How to name it in messages ('in-process', or the Redis URL without its password). */
  readonly where: string;
  run(sitting: StudySitting, todo: PlannedRun[], record: (r: LedgerRecord) => Promise<void>): Promise<QueueOutcome>;
  close(): Promise<void>;
}

/** The default queue: each run in this process, one after another (what `study run` has always done). */
export class InProcessQueue implements RunQueue {
  readonly where = 'in-process';

  async run(s: StudySitting, todo: PlannedRun[], record: (r: LedgerRecord) => Promise<void>): Promise<QueueOutcome> {
    for (const [i, p] of todo.entries()) {
      const head = `study ${s.study}: run ${i + 1}/${todo.length} ${p.key} (${p.entry.where}: ${p.argv.join(' ')})`;
      const o = await trainStudyRun(s.study, p, s.runs, s.trainArgv, head, s.heldOut);
      if ('stopped' in o) return { failed: [], stopped: o.stopped };
      await record(o.record);
    }
    return { failed: [] };
  }

  async close(): Promise<void> {}
}

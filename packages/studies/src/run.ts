// One run of a study, on any trainer: planned from its flags, trained (or resumed) in its run folder <runs>/<key>,
// turned into a ledger record. The in-process queue and a queue worker's child process both go through here.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lockedByOther, RunFolder, UsageError } from '@grassflow/training';
import type { StudyRecord } from './ledger.js';
import type { StudyEntry } from './spec.js';
import type { PlannedRun, StudyTrainer } from './trainer.js';

/** The run folder of a planned run: `<runs>/<key>`. */
export function runDirOf(runs: string, key: string): string {
  return join(runs, key);
}

/** A study entry through the trainer's own planning; a bad flag names the study file and the entry. */
export async function planRun<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  entry: StudyEntry,
  file: string,
  sitting: readonly string[],
): Promise<P> {
  try {
    return await trainer.plan(entry, sitting);
  } catch (e) {
    if (e instanceof UsageError) throw new UsageError(`${file}: ${entry.where}: ${e.message}`, e.flag);
    throw e;
  }
}

/** What a planned run's folder holds: nothing (or a start without a checkpoint), or a checkpoint to resume from. */
export function folderState(runDir: string): 'new' | 'partial' | 'resumable' {
  const run = new RunFolder(runDir);
  if (run.exists() && run.hasCheckpoint()) return 'resumable';
  return existsSync(runDir) ? 'partial' : 'new';
}

/**
 * Refuse a run folder whose config.json does not resolve to `key` (another run's folder placed at `<runs>/<key>`, or
 * its config.json edited): nothing is resumed into it or scored from it.
 */
export async function checkRunFolderKey<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  runDir: string,
  key: string,
  sitting: readonly string[],
): Promise<void> {
  const stored = await trainer.storedKey(runDir, sitting);
  if (stored !== key) {
    throw new UsageError(
      `${runDir}: its config.json resolves to key ${stored}, not ${key}: it is another run's folder (or its ` +
        `config.json was edited); move it away (to the folder of run ${stored}, or aside) and run the command again`,
    );
  }
}

/** How a study run's training ended: its ledger record, or the exit code of a run that stopped (signal, stop step). */
export type StudyRunOutcome<R> = { record: R } | { stopped: number };

/**
 * Train one planned run in `<runs>/<key>`: resumed from its checkpoint when the folder has one (its config must
 * resolve to the same key), else started afresh (a folder without a checkpoint is started again). `head` starts the
 * progress lines; `sitting` are the sitting's train flags (--quiet, --backend, --data-dir).
 */
export async function trainStudyRun<P extends PlannedRun, R extends StudyRecord>(
  trainer: StudyTrainer<P, R>,
  study: string,
  p: P,
  runs: string,
  sitting: readonly string[],
  head: string,
  heldOut = true,
): Promise<StudyRunOutcome<R>> {
  const runDir = runDirOf(runs, p.key);
  // Another live process trains this run (a worker that took the job before a queue restart re-queued it, or a
  // sitting on another ledger): its folder is not touched, neither deleted nor resumed into. The worker hands such a
  // job back to the queue (the message's "is being written by pid") instead of failing it.
  const owner = lockedByOther(runDir);
  if (owner !== null) {
    throw new UsageError(
      `${runDir} is being written by pid ${owner.pid} on ${owner.host} since ${owner.since}: another worker or ` +
        'sitting trains this run; it is left alone (it is handed back to the queue, or run the study again later)',
    );
  }
  const state = folderState(runDir);
  const started = performance.now();
  let code: number;
  if (state === 'resumable') {
    await checkRunFolderKey(trainer, runDir, p.key, sitting);
    process.stderr.write(`${head}: resuming from its checkpoint\n`);
    code = await trainer.resume(p, runDir, sitting);
  } else {
    if (state === 'partial') {
      process.stderr.write(`${head}: ${runDir} has no checkpoint yet; starting it again\n`);
      await rm(runDir, { recursive: true, force: true });
    } else process.stderr.write(`${head}\n`);
    code = await trainer.start(p, runDir);
  }
  if (code !== 0) return { stopped: code };
  const record = await trainer.record({
    study,
    planned: p,
    runDir,
    resumed: state === 'resumable',
    heldOut,
    head,
    started,
  });
  return { record };
}

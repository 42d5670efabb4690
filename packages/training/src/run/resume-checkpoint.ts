// The checkpoint a resume continues from, and what to do when it cannot be read.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { UsageError } from '../flags.js';
import type { RunFolder } from '../run-folder.js';
import { loadTrainerCheckpoint, type LoadedTrainerCheckpoint } from '../trainer-checkpoint.js';

/** A path as a person would type it here: relative to the working folder when inside it, else absolute. */
function shownPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

/** Errors of a checkpoint that exists but cannot be read (corrupt, truncated, not a trainer checkpoint). */
const UNREADABLE = ['CheckpointError', 'TrainerCheckpointError', 'SafetensorsError'];

/**
 * checkpoints/latest of a run folder, loaded to resume. When it cannot be read, the error also says whether
 * checkpoints/best loads (and at which step) and how to resume from it, since a corrupt `latest` need not end a run.
 */
export async function loadCheckpointToResume(run: RunFolder): Promise<LoadedTrainerCheckpoint> {
  const folder = dirname(run.latestCheckpoint);
  const anything = existsSync(folder) && readdirSync(folder).length > 0; // latest, best, or a save's half-swap
  if (!anything) {
    throw new UsageError(
      `${run.dir} has no checkpoint: the run stopped before its first save, so there is nothing to resume. ` +
        `Run the command that started it again (without --resume, --out ${shownPath(run.dir)}): ` +
        'it starts the run again there',
      'resume',
    );
  }
  try {
    return await loadTrainerCheckpoint(run.latestCheckpoint);
  } catch (err) {
    if (!(err instanceof Error) || !UNREADABLE.includes(err.name)) throw err;
    const rel = (p: string) => relative(process.cwd(), p) || '.';
    let best: string;
    try {
      const ck = await loadTrainerCheckpoint(run.bestCheckpoint);
      const step = ck.state.step;
      ck.model.dispose();
      tf.dispose([...ck.optimizerTensors.values()]);
      best =
        `${rel(run.bestCheckpoint)} (step ${step}) is intact: to resume from it, move ${rel(run.latestCheckpoint)} ` +
        `aside, copy ${rel(run.bestCheckpoint)} to ${rel(run.latestCheckpoint)} and run --resume again (the steps ` +
        `after ${step} are trained again)`;
    } catch {
      best = `${rel(run.bestCheckpoint)} cannot be read either: start the run again`;
    }
    err.message = `${err.message}\n${best}`;
    throw err;
  }
}

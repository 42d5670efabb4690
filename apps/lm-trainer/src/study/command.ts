// `grassflow-lm study run|status|report|rescore`: @grassflow/studies' study commands over grassflow-lm's trainer (each
// run exactly a `train` run with a resolved plan in its own run folder, runs/<key>, remembered in ledger.jsonl so
// that a study grows over sittings and machines), and `rescore`, which adds held-out scores to old records.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { lockRunFolder, planCommand, RunFolder, startBackend } from '@grassflow/training';
import { UsageError, type CliCommand, type FlagSpecs } from '@grassflow/training';
import {
  checkRunFolderKey,
  planSitting,
  runDirOf,
  studyCli as anyStudyCli,
  studyLedger,
  type Sitting,
} from '@grassflow/studies';
import { dataDirOrThrow } from '../shared/corpus.js';
import { appendLedger, type LedgerRecord } from './ledger.js';
import { checkpointToScore, lmTrainer, scoreHeldOut } from './run.js';
import { LM_STUDY_FLAGS } from './spec.js';

const RESCORE_FLAGS = {
  checkpoint: {
    type: 'string',
    choices: ['latest', 'best'],
    help:
      'score this checkpoint of every run whose scores are of the other one (default: only runs without scores, ' +
      'each of checkpoints/best when it stopped early, else of checkpoints/latest)',
  },
} as const satisfies FlagSpecs;

/** The trainer step and data seed of a checkpoint folder (config.json's extra.trainer), null where it has none. */
function checkpointCounters(dir: string): { step: number | null; seed: number | null } {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
    extra?: { trainer?: { step?: unknown; data?: { seed?: unknown } } };
  };
  const { step, data } = c.extra?.trainer ?? {};
  return { step: typeof step === 'number' ? step : null, seed: typeof data?.seed === 'number' ? data.seed : null };
}

/** The checkpoint a record's held-out scores are of (records from before `scored`: the final one). */
const scoredCheckpoint = (r: LedgerRecord): 'latest' | 'best' => r.scored?.checkpoint ?? 'latest';

/**
 * `study rescore <study.json> [--checkpoint latest|best] [--runs DIR] [--data-dir DIR]`: score every ledger run
 * without held-out scores (with --checkpoint: every run whose scores are of the other checkpoint) whose checkpoint
 * still exists on all of wiki.valid and wiki.test, and write the ledger back (atomically, after each run). Runs whose
 * folder is gone are listed and left as they are.
 */
async function rescore(s: Sitting, asked: 'latest' | 'best' | undefined): Promise<number> {
  const dataDir = dataDirOrThrow(s.dataDir);
  lockRunFolder(dirname(s.ledger), 'out'); // it rewrites the ledger: not beside a sitting that appends to it
  const records = await studyLedger(lmTrainer, s.ledger, s.spec.name);
  const todo = records.filter((r) => r.heldOut === undefined || (asked !== undefined && scoredCheckpoint(r) !== asked));
  if (todo.length === 0) {
    const what = asked === undefined ? 'held-out scores' : `held-out scores of checkpoints/${asked}`;
    process.stderr.write(`study ${s.spec.name}: every run of ${s.ledger} has ${what}\n`);
    return 0;
  }
  const checkpointOf = (r: LedgerRecord): { run: RunFolder; dir: string; step: number } => {
    const run = new RunFolder(runDirOf(s.runs, r.key));
    const best = checkpointToScore(r.stop?.reason === 'early-stop', asked).checkpoint === 'best';
    return { run, dir: best ? run.bestCheckpoint : run.latestCheckpoint, step: best ? r.bestStep : r.totalSteps };
  };
  // every folder is checked before any is scored: a record gets the scores of its own run or none
  for (const r of todo) {
    const { run, dir, step } = checkpointOf(r);
    if (!existsSync(join(dir, 'config.json'))) continue;
    await checkRunFolderKey(lmTrainer, run.dir, r.key, s.trainArgv);
    const at = checkpointCounters(dir);
    const seed = r.config.training.seed;
    if ((at.step !== step && !(dir === run.latestCheckpoint && at.step === r.stop?.step)) || at.seed !== seed) {
      throw new UsageError(
        `${dir} is a checkpoint of step ${String(at.step)} and seed ${String(at.seed)}, but the record of ${r.key} ` +
          `in ${s.ledger} is of step ${step} and seed ${seed}: it is another run's checkpoint; move it away (or ` +
          'restore this run’s) and run rescore again',
      );
    }
  }
  await startBackend(s.backend);
  let missing = 0;
  for (const [i, r] of todo.entries()) {
    const { run, dir } = checkpointOf(r);
    if (!existsSync(join(dir, 'config.json'))) {
      process.stderr.write(
        `[${i + 1}/${todo.length}] ${r.key}: no checkpoint in ${run.dir}; left without held-out scores\n`,
      );
      missing += 1;
      continue;
    }
    const { scored, ...heldOut } = await scoreHeldOut(run, dataDir, asked);
    await appendLedger(s.ledger, { ...r, heldOut, scored });
    process.stderr.write(
      `[${i + 1}/${todo.length}] ${r.key}: valid PPL ${heldOut.valid.ppl.toFixed(2)}, test PPL ${heldOut.test.ppl.toFixed(2)}\n`,
    );
  }
  process.stderr.write(`study ${s.spec.name}: ${todo.length - missing} rescored, ${missing} without a checkpoint\n`);
  return 0;
}

const USAGE =
  'grassflow-lm study run|status|report|rescore <study.json> [--out DIR] [--runs DIR] [--queue redis://host:port/db] ' +
  '[--checkpoint latest|best]';
const DESCRIPTION =
  'A study file lists train runs ({ "name", "base": {flags}, "grid": {flag: [values]} or a list of grids, "runs": ' +
  '[{flags}] }). `run` trains each run not yet in ledger.jsonl (a run is keyed by the hash of its resolved config; an ' +
  'interrupted one resumes from its checkpoint) and scores its final checkpoint on all of wiki.valid and wiki.test, ' +
  '`status` lists them, `report` aggregates the ledger over seeds, `rescore` adds the held-out scores to ledger runs ' +
  'from before them whose checkpoints still exist. ' +
  'With --queue (or GRASSFLOW_QUEUE), `run` queues the runs in Redis for `grassflow-lm worker` processes on any ' +
  'machine and records their results; `status` shows queued, running (worker, step) and failed runs.';

/** `grassflow-lm study`. */
export const studyCli: CliCommand = anyStudyCli({
  trainer: lmTrainer,
  queue: true,
  usage: USAGE,
  description: DESCRIPTION,
  help: 'run a study file of train runs (resumable, a ledger of results) and report it over seeds',
  more: {
    rescore: planCommand({
      usage: USAGE,
      description: DESCRIPTION,
      flags: RESCORE_FLAGS,
      help: 'add held-out scores to the ledger runs without them (or of another checkpoint: --checkpoint)',
      plan: async (argv) => {
        // --checkpoint is rescore's own; the rest are the sitting's
        const i = argv.indexOf('--checkpoint');
        const given = i < 0 ? undefined : argv[i + 1];
        if (i >= 0 && given !== 'latest' && given !== 'best')
          throw new UsageError(`--checkpoint takes latest or best, got ${given ?? 'nothing'}`, 'checkpoint');
        const value = given as 'latest' | 'best' | undefined;
        const rest = i < 0 ? argv : [...argv.slice(0, i), ...argv.slice(i + 2)];
        return { sitting: await planSitting(rest, LM_STUDY_FLAGS, true), asked: value };
      },
      run: ({ sitting, asked }) => rescore(sitting, asked),
    }),
  },
});

// `grassflow-lm worker --queue URL`: @grassflow/studies' worker over the two kinds of job grassflow-lm queues, study
// runs (`study job`) and ladder rungs (`ladder rung`), each trained in a child process.
import { STUDY_JOB, studyJobKind, workerCli as anyWorkerCli, type JobKind } from '@grassflow/studies';
import type { CliCommand } from '@grassflow/training';
import { LADDER_JOB, type LadderJobData } from '../ladder/queue.js';

/** A ladder rung's child: `grassflow-lm ladder rung <job.json> --result FILE [--backend B]`. */
const ladderJobKind: JobKind = (data, ctx) => {
  const d = data as LadderJobData;
  return {
    args: ['ladder', 'rung', ctx.jobFile, '--result', ctx.resultFile, ...ctx.backendArgs],
    label: `ladder ${d.ladder}, level ${d.spec.level} ${d.spec.model} seed ${d.spec.seed}`,
    what: `ladder ${d.ladder}`,
    code: d.code,
  };
};

const USAGE = 'grassflow-lm worker --queue redis://host:port/db [--concurrency N] [--runs DIR]';
const DESCRIPTION =
  'Take study runs queued by `grassflow-lm study run --queue URL` and ladder rungs queued by `grassflow-lm ladder ' +
  '--queue URL` (any machine with the same code commit and the ' +
  'data), train each in its own process (one at a time, or --concurrency N), and hand the ledger record back to the ' +
  'coordinator. A run folder with a checkpoint (workers sharing a file system) is resumed. SIGINT/SIGTERM: the ' +
  'running runs checkpoint and go back to the queue.';

/** `grassflow-lm worker` in the program's command table. */
export const workerCli: CliCommand = anyWorkerCli({
  program: 'grassflow-lm',
  usage: USAGE,
  description: DESCRIPTION,
  help: 'train the runs of studies and ladders from a Redis queue (BullMQ), on any machine',
  jobs: { [STUDY_JOB]: studyJobKind, [LADDER_JOB]: ladderJobKind },
});

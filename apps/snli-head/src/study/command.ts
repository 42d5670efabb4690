// `grassflow-snli study run|status|report`: @grassflow/studies' study commands over grassflow-snli's trainer, so that
// heads get seeds, intervals and paired differences. In this process only (the program has no queue worker).
import { studyCli as anyStudyCli } from '@grassflow/studies';
import type { CliCommand } from '@grassflow/training';
import { snliTrainer } from './trainer.js';

const USAGE = 'grassflow-snli study run|status|report <study.json> [--out DIR] [--runs DIR]';
const DESCRIPTION =
  'A study file lists `grassflow-snli train` runs ({ "name", "base": {flags}, "grid": {flag: [values]} or a list of ' +
  'grids, "runs": [{flags}], "heldOut": true|false }). `run` trains each run not yet in ledger.jsonl (a run is keyed ' +
  'by the hash of its resolved config; an interrupted one resumes from its checkpoint) and, with heldOut (default), ' +
  'scores its final checkpoint on all of dev and test; `status` lists them; `report` aggregates the ledger over ' +
  'seeds and pairs Grassmann − Transformer by seed (mean, sd, 95% t-interval).';

/** `grassflow-snli study`. */
export const studyCli: CliCommand = anyStudyCli({
  trainer: snliTrainer,
  queue: false,
  usage: USAGE,
  description: DESCRIPTION,
  help: 'run a study file of train runs (resumable, a ledger of results) and report it over seeds',
});

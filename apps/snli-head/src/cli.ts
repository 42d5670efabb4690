// grassflow-snli: train and evaluate Grassmann–Plücker and Transformer heads on SNLI, and studies of them over seeds.
import { cliMain, type CliCommand } from '@grassflow/training';
import { trainCli } from './train/command.js';
import { evalCli } from './eval/command.js';
import { paramsCli } from './params/command.js';
import { studyCli } from './study/command.js';

// train and study run under a supervisor, so that a second SIGINT/SIGTERM stops it even mid-step.
const COMMANDS: Record<string, CliCommand> = {
  train: { ...trainCli, supervised: true },
  eval: evalCli,
  params: paramsCli,
  study: { ...studyCli, supervised: true },
};

void cliMain({
  program: 'grassflow-snli',
  commands: COMMANDS,
  epilogue:
    'Data: GRASSFLOW_DATA_DIR or --data-dir (snli/*.jsonl, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND.',
  knownErrors: ['DistilBertError', 'LedgerError'],
});

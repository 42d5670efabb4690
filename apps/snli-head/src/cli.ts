// grassflow-snli: train and evaluate Grassmann–Plücker and Transformer heads on SNLI.
import { cliMain, type CliCommand } from '@grassflow/training';
import { evalCommand } from './eval/command.js';
import { trainCommand } from './train/command.js';
import { paramsCommand } from './params/command.js';

const COMMANDS: Record<string, CliCommand> = {
  train: { run: trainCommand, help: 'train a head into a run folder (--resume to continue one)' },
  eval: { run: evalCommand, help: 'accuracy and 3×3 confusion matrix of a checkpoint on dev or test, as one JSON line' },
  params: { run: paramsCommand, help: 'parameter counts of the two heads side by side' },
};

void cliMain({
  program: 'grassflow-snli',
  commands: COMMANDS,
  epilogue: 'Data: GRASSFLOW_DATA_DIR or --data-dir (snli/*.jsonl, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND.',
  knownErrors: ['DistilBertError'],
});

// grassflow-lm: train, eval, generate and compare language models on WikiText-2.
import { runCli, type CliCommand } from '@grassflow/training';
import { compareCommand } from './compare.js';
import { evalCommand, generateCommand, trainCommand } from './commands.js';

const COMMANDS: Record<string, CliCommand> = {
  train: { run: trainCommand, help: 'train a model into a run folder (--resume to continue one)' },
  eval: { run: evalCommand, help: 'perplexity over every token of a split, as one JSON line' },
  generate: { run: generateCommand, help: 'sample a continuation of a prompt' },
  compare: { run: compareCommand, help: 'train the three model kinds under one budget and write one report' },
};

runCli(process.argv.slice(2), {
  program: 'grassflow-lm',
  commands: COMMANDS,
  epilogue: 'Data: GRASSFLOW_DATA_DIR or --data-dir (wikitext-2/*.tokens, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND.',
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  },
);

// grassflow-lm: train, eval, generate and compare language models on WikiText-2; bench, ladder and inspect them.
import { cliMain, type CliCommand } from '@grassflow/training';
import { benchCommand } from './bench/command.js';
import { compareCommand } from './compare/command.js';
import { evalCommand } from './eval/command.js';
import { generateCommand } from './generate/command.js';
import { trainCommand } from './train/command.js';
import { inspectCommand } from './inspect/command.js';
import { ladderCommand } from './ladder/command.js';

const COMMANDS: Record<string, CliCommand> = {
  train: { run: trainCommand, help: 'train a model into a run folder (--resume to continue one)' },
  eval: { run: evalCommand, help: 'perplexity over every token of a split, as one JSON line' },
  generate: { run: generateCommand, help: 'sample a continuation of a prompt' },
  compare: { run: compareCommand, help: 'train the three model kinds under one budget and write one report' },
  bench: { run: benchCommand, help: 'training throughput (JSON line); --scaling: time per token against L; --generate: decoding speed and state memory' },
  ladder: { run: ladderCommand, help: 'DPA vs EA vs Grassmann on a ladder of synthetic tasks, one report' },
  inspect: { run: inspectCommand, help: 'the geometry inside a trained model: gates, Plücker pairs, subspace flow, attention entropy' },
};

void cliMain({
  program: 'grassflow-lm',
  commands: COMMANDS,
  epilogue: 'Data: GRASSFLOW_DATA_DIR or --data-dir (wikitext-2/*.tokens, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND.',
});

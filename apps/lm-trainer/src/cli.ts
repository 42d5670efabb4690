// grassflow-lm: train, eval, generate and compare language models on WikiText-2; bench, ladder and inspect them;
// studies of many runs, in this process or on workers through a Redis queue.
import { readFileSync } from 'node:fs';
import { version_core as tfjsCore } from '@tensorflow/tfjs-core';
import { cliMain, type CliCommand } from '@grassflow/training';
import { trainCli } from './train/command.js';
import { evalCli } from './eval/command.js';
import { generateCli } from './generate/command.js';
import { exportCli } from './export/command.js';
import { compareCli } from './compare/command.js';
import { benchCli } from './bench/command.js';
import { ladderCli } from './ladder/command.js';
import { inspectCli } from './inspect/command.js';
import { studyCli } from './study/command.js';
import { baselinesCli } from './baselines/command.js';
import { workerCli } from './queue/worker.js';

// The long commands run under a supervisor, so that a second SIGINT/SIGTERM stops them even mid-step.
const COMMANDS: Record<string, CliCommand> = {
  train: { ...trainCli, supervised: true },
  eval: evalCli,
  generate: generateCli,
  export: exportCli,
  compare: { ...compareCli, supervised: true },
  bench: benchCli,
  ladder: { ...ladderCli, supervised: true },
  inspect: inspectCli,
  study: { ...studyCli, supervised: true },
  baselines: baselinesCli,
  // not supervised: the worker trains in child processes and is their supervisor
  worker: workerCli,
};

/** The package's version (src/cli.ts and dist/cli.js both sit one folder below package.json), and tfjs-core's. */
function versionLine(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return `${pkg.version} (tfjs-core ${tfjsCore}, node ${process.version})`;
}

void cliMain({
  program: 'grassflow-lm',
  commands: COMMANDS,
  knownErrors: ['QueueUnreachableError', 'LedgerError'],
  version: versionLine(),
  epilogue:
    'Data: GRASSFLOW_DATA_DIR or --data-dir (wikitext-2/*.tokens, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND. ' +
    'Study queue: --queue or GRASSFLOW_QUEUE (redis://host:port/db).',
});

// grassflow-lm: train, eval, generate and compare language models on WikiText-2.
import { CheckpointError } from '@grassflow/gpu-layers';
import { NonFiniteLossError, UsageError } from '@grassflow/training';
import { compareCommand } from './compare.js';
import { evalCommand, generateCommand, trainCommand } from './commands.js';

const COMMANDS: Record<string, { run: (argv: readonly string[]) => Promise<number>; help: string }> = {
  train: { run: trainCommand, help: 'train a model into a run folder (--resume to continue one)' },
  eval: { run: evalCommand, help: 'perplexity over every token of a split, as one JSON line' },
  generate: { run: generateCommand, help: 'sample a continuation of a prompt' },
  compare: { run: compareCommand, help: 'train the three model kinds under one budget and write one report' },
};

const HELP = [
  'Usage: grassflow-lm <command> [flags]   (grassflow-lm <command> --help for its flags)',
  '',
  'Commands:',
  ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)}${c.help}`),
  '',
  'Data: GRASSFLOW_DATA_DIR or --data-dir (wikitext-2/*.tokens, bert-vocab/vocab.txt). Backend: --backend or GRASSFLOW_BACKEND.',
].join('\n');

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`grassflow-lm: unknown command '${name}'; commands: ${Object.keys(COMMANDS).join(', ')}\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`grassflow-lm ${name}: ${err.message}\n`);
      return 2;
    }
    const e = err as Error;
    const known = err instanceof NonFiniteLossError || err instanceof CheckpointError || ['DataDirError', 'DatasetError', 'TokenizerError', 'BackendUnavailableError', 'TrainerCheckpointError', 'ModelConfigError'].includes(e.name);
    process.stderr.write(`grassflow-lm ${name}: ${known ? `${e.name}: ${e.message}` : (e.stack ?? String(e))}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  },
);

// `grassflow-lm bench`: one entry point for the three benchmarks (training step, --scaling, --generate).
import { UsageError, type CliCommand } from '@grassflow/training';
import { generateBenchCommand } from './generate.js';
import { scalingBenchCommand } from './scaling.js';
import { trainBenchCommand } from './train.js';

/** Dispatch on --scaling / --generate (the flag stays in argv; each command's flag spec accepts it). */
export async function benchCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--scaling') && argv.includes('--generate'))
    throw new UsageError('give --scaling or --generate, not both', 'generate');
  if (argv.includes('--scaling')) return scalingBenchCommand(argv);
  if (argv.includes('--generate')) return generateBenchCommand(argv);
  return trainBenchCommand(argv);
}

/** `grassflow-lm bench` in the program's command table. */
export const benchCli: CliCommand = {
  run: benchCommand,
  help: 'training throughput (JSON line); --scaling: time per token against L; --generate: decoding speed and state memory',
};

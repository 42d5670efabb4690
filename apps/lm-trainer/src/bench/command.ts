// `grassflow-lm bench`: one entry point for the benchmarks (training step, --against pytorch, --profile, --scaling, --generate).
import { UsageError, type CliCommand } from '@grassflow/training';
import { againstPytorchCommand } from './against-pytorch.js';
import { generateBenchCommand } from './generate.js';
import { profileCommand } from './profile.js';
import { scalingBenchCommand } from './scaling.js';
import { trainBenchCommand } from './train.js';

/** Dispatch on --against / --scaling / --generate (the flag stays in argv; each command's flag spec accepts it). */
export async function benchCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--scaling') && argv.includes('--generate'))
    throw new UsageError('give --scaling or --generate, not both', 'generate');
  const steps = ['--against', '--profile'].filter((flag) => argv.includes(flag));
  if (steps.length > 0 && (steps.length > 1 || argv.includes('--scaling') || argv.includes('--generate')))
    throw new UsageError('give one of --against, --profile, --scaling, --generate', (steps[0] as string).slice(2));
  if (argv.includes('--against')) return againstPytorchCommand(argv);
  if (argv.includes('--profile')) return profileCommand(argv);
  if (argv.includes('--scaling')) return scalingBenchCommand(argv);
  if (argv.includes('--generate')) return generateBenchCommand(argv);
  return trainBenchCommand(argv);
}

/** `grassflow-lm bench` in the program's command table. */
export const benchCli: CliCommand = {
  run: benchCommand,
  help: 'training throughput (JSON line); --against pytorch: beside PyTorch, with the ratio; --profile: where a step spends its time; --scaling: time per token against L; --generate: decoding speed and state memory',
};

// `grassflow-lm bench`: one entry point for the benchmarks (training step, --against pytorch, --profile, --scaling, --generate).
import { UsageError, type CliCommand } from '@grassflow/training';
import { againstPytorchCli } from './against-pytorch.js';
import { generateBenchCli } from './generate.js';
import { profileBenchCli } from './profile.js';
import { scalingBenchCli } from './scaling.js';
import { trainBenchCli } from './train.js';

/** The benchmarks of `bench`, each its own flags, resolved once into its plan (planCommand). */
const BENCHMARKS = {
  train: trainBenchCli,
  against: againstPytorchCli,
  profile: profileBenchCli,
  scaling: scalingBenchCli,
  generate: generateBenchCli,
} as const satisfies Record<string, CliCommand>;

/**
 * The benchmark argv selects: --against / --profile / --scaling / --generate, none of them the training step. Only
 * picks which flag spec parses argv (the flag stays in argv; each benchmark's spec accepts it); two is an error.
 */
export function benchOf(argv: readonly string[]): keyof typeof BENCHMARKS {
  if (argv.includes('--scaling') && argv.includes('--generate'))
    throw new UsageError('give --scaling or --generate, not both', 'generate');
  const steps = ['--against', '--profile'].filter((flag) => argv.includes(flag));
  if (steps.length > 0 && (steps.length > 1 || argv.includes('--scaling') || argv.includes('--generate')))
    throw new UsageError('give one of --against, --profile, --scaling, --generate', (steps[0] as string).slice(2));
  if (argv.includes('--against')) return 'against';
  if (argv.includes('--profile')) return 'profile';
  if (argv.includes('--scaling')) return 'scaling';
  if (argv.includes('--generate')) return 'generate';
  return 'train';
}

/** `grassflow-lm bench` in the program's command table: the selected benchmark's `--help`, or its plan, then run. */
export const benchCli: CliCommand = {
  run: async (argv) => BENCHMARKS[benchOf(argv)].run(argv),
  help: 'training throughput (JSON line); --against pytorch: beside PyTorch, with the ratio; --profile: where a step spends its time; --scaling: time per token against L; --generate: decoding speed and state memory',
};

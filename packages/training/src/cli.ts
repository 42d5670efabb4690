// The command-line shell both apps share: subcommand dispatch, help, exit codes, and the backend banner.
import { describeAdapter, initBackend, type BackendInfo, type BackendName } from '@grassflow/gpu-layers';
import { formatHelp, UsageError, type FlagSpecs } from './flags.js';
import { isSupervised, superviseSelf, watchParent } from './supervise.js';

/** One subcommand: `run` gets the arguments after its name and returns the process exit code. */
export interface CliCommand {
  run: (argv: readonly string[]) => Promise<number>;
  /** One line for the program's help. */
  help: string;
  /**
   * Run in a supervised child process (see superviseSelf): for long commands (training), so that a second
   * SIGINT/SIGTERM stops them at once even in the middle of a step.
   */
  supervised?: boolean;
}

export interface CliOptions {
  /** Program name used in messages, e.g. 'grassflow-lm'. */
  program: string;
  commands: Record<string, CliCommand>;
  /** Lines printed after the command list (data folders, environment variables). */
  epilogue?: string;
  /**
   * Error names reported as `Name: message` without a stack trace: the ones that already say what to do.
   * Usage errors always are (exit 2); other errors exit 1.
   */
  knownErrors?: readonly string[];
  /** What `PROGRAM --version` prints after the program's name (its version, and those of what it runs on). */
  version?: string;
}

/** Set to 1 to print the stack trace of an unexpected error (by default one line, as for every other error). */
export const DEBUG_ENV = 'GRASSFLOW_DEBUG';

/** Errors of the shared packages whose messages say what to do: no stack trace needed. */
export const KNOWN_ERROR_NAMES: readonly string[] = [
  'NonFiniteLossError',
  'CheckpointError',
  'TrainerCheckpointError',
  'ModelConfigError',
  'BackendUnavailableError',
  'SafetensorsError',
  'DataDirError',
  'DatasetError',
  'TokenizerError',
];

/** The program's help text: usage, one line per command, the epilogue. */
export function cliHelp(options: CliOptions): string {
  const { program, commands, epilogue } = options;
  return [
    `Usage: ${program} <command> [flags]   (${program} <command> --help for its flags)`,
    ...(options.version === undefined ? [] : [`       ${program} --version`]),
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)}${c.help}`),
    ...(epilogue === undefined ? [] : ['', epilogue]),
  ].join('\n');
}

/**
 * Run the subcommand named by argv[0] and return the exit code: 0 on success (or what the command
 * returns), 2 for usage errors (unknown command or flag, invalid value), 1 for failures.
 */
export async function runCli(argv: readonly string[], options: CliOptions): Promise<number> {
  const { program, commands } = options;
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${cliHelp(options)}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    if (options.version === undefined) {
      process.stderr.write(`${program}: no version is recorded for this build\n`);
      return 2;
    }
    process.stdout.write(`${program} ${options.version}\n`);
    return 0;
  }
  const command = commands[name];
  if (command === undefined) {
    process.stderr.write(`${program}: unknown command '${name}'; commands: ${Object.keys(commands).join(', ')}\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${program} ${name}: ${err.message}\n`);
      return 2;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    const known = KNOWN_ERROR_NAMES.includes(e.name) || (options.knownErrors ?? []).includes(e.name);
    if (known || process.env[DEBUG_ENV] !== '1') {
      // an error the code did not foresee: one line, and how to get what a bug report needs
      const hint = known ? '' : `\n(an unexpected error: run again with ${DEBUG_ENV}=1 for its stack trace)`;
      process.stderr.write(`${program} ${name}: ${e.name}: ${e.message}${hint}\n`);
    } else {
      process.stderr.write(`${program} ${name}: ${e.stack ?? String(e)}\n`);
    }
    return 1;
  }
}

/**
 * Initialise the tfjs backend (forced by `name`, else GRASSFLOW_BACKEND, else the first that loads) and print it to
 * stderr.
 */
export async function startBackend(name: string | undefined, options: { threads?: number } = {}): Promise<BackendInfo> {
  const info = await initBackend({
    ...(name === undefined ? {} : { backend: name as BackendName }),
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  });
  const detail =
    info.name === 'wasm'
      ? ` (${info.simd === true ? 'SIMD' : 'no SIMD'}, ${info.threads ?? 1} thread${info.threads === 1 ? '' : 's'}; ` +
        `products: ${info.blas ?? 'XNNPACK'})`
      : info.adapter !== undefined
        ? ` on ${describeAdapter(info.adapter)}`
        : '';
  process.stderr.write(`backend: ${info.name}${detail}, tfjs-core ${info.tfjsCore}\n`);
  return info;
}

/** The program's entry point: run the CLI on process.argv and set process.exitCode (1 if the CLI itself fails). */
export function cliMain(options: CliOptions): Promise<void> {
  // `grassflow-lm study status | head -2`: the reader closed the pipe, which ends the output, not the program in error
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
  const argv = process.argv.slice(2);
  const command = argv[0] === undefined ? undefined : options.commands[argv[0]];
  const help = argv.includes('--help') || argv.includes('-h');
  if (command?.supervised === true && !help) {
    if (!isSupervised()) {
      return superviseSelf().then((code) => {
        process.exitCode = code;
      });
    }
    watchParent();
  }
  return runCli(argv, options).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

/** Print the command's help to stdout and return true when argv asks for it (`--help` or `-h`). */
export function wantsHelp(argv: readonly string[], usage: string, description: string, specs: FlagSpecs): boolean {
  if (!argv.includes('--help') && !argv.includes('-h')) return false;
  process.stdout.write(`${formatHelp(usage, description, specs)}\n`);
  return true;
}

/** A subcommand that resolves its flags once into a plan, then runs the plan. */
export interface PlanCommand<P> {
  /** Usage line and description of `--help`, and the flags. */
  usage: string;
  description: string;
  flags: FlagSpecs;
  /** One line for the program's help. */
  help: string;
  /** Parse and check argv into the plan (UsageError for bad input), before any slow work. */
  plan: (argv: readonly string[]) => P | Promise<P>;
  /** Run a plan; returns the exit code. */
  run: (plan: P) => Promise<number>;
}

/** The CliCommand of a {@link PlanCommand}: `--help` prints the flags, otherwise plan, then run. */
export function planCommand<P>(c: PlanCommand<P>): CliCommand {
  return {
    help: c.help,
    run: async (argv) => {
      if (wantsHelp(argv, c.usage, c.description, c.flags)) return 0;
      return c.run(await c.plan(argv));
    },
  };
}

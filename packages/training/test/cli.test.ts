import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli, UsageError, type CliOptions } from '@grassflow/training';

class DataDirError extends Error {
  override readonly name = 'DataDirError';
}
class WeirdError extends Error {
  override readonly name = 'WeirdError';
}

const options: CliOptions = {
  program: 'prog',
  epilogue: 'Data: somewhere.',
  knownErrors: ['AppError'],
  commands: {
    ok: { help: 'succeeds', run: (argv) => Promise.resolve(argv.length === 0 ? 0 : 3) },
    usage: {
      help: 'bad flag',
      run: () => Promise.reject(new UsageError('unknown flag --x')),
    },
    data: {
      help: 'known failure',
      run: () => Promise.reject(new DataDirError('no data in /nowhere: set GRASSFLOW_DATA_DIR')),
    },
    app: {
      help: 'app failure',
      run: () => {
        const e = new Error('app says what to do');
        e.name = 'AppError';
        return Promise.reject(e);
      },
    },
    crash: {
      help: 'bug',
      run: () => Promise.reject(new WeirdError('unexpected')),
    },
  },
};

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  return { out, err };
}

afterEach(() => vi.restoreAllMocks());

describe('runCli', () => {
  it('prints help for --help (exit 0) and for no command (exit 2), listing every command and the epilogue', async () => {
    const io = capture();
    expect(await runCli(['--help'], options)).toBe(0);
    expect(await runCli([], options)).toBe(2);
    const text = io.out.join('');
    for (const name of Object.keys(options.commands)) expect(text).toContain(`  ${name}`);
    expect(text).toContain('Data: somewhere.');
  });

  it('passes the remaining arguments to the command and returns its exit code', async () => {
    capture();
    expect(await runCli(['ok'], options)).toBe(0);
    expect(await runCli(['ok', '--flag'], options)).toBe(3);
  });

  it('an unknown command exits 2 naming it and the known ones', async () => {
    const io = capture();
    expect(await runCli(['nope'], options)).toBe(2);
    expect(io.err.join('')).toBe("prog: unknown command 'nope'; commands: ok, usage, data, app, crash\n");
  });

  it('a usage error exits 2 with its message and no stack', async () => {
    const io = capture();
    expect(await runCli(['usage'], options)).toBe(2);
    expect(io.err.join('')).toBe('prog usage: unknown flag --x\n');
  });

  it('known errors (shared and app-declared) exit 1 as "Name: message"; others too, their stack with GRASSFLOW_DEBUG=1', async () => {
    const io = capture();
    expect(await runCli(['data'], options)).toBe(1);
    expect(await runCli(['app'], options)).toBe(1);
    expect(await runCli(['crash'], options)).toBe(1);
    process.env['GRASSFLOW_DEBUG'] = '1';
    try {
      expect(await runCli(['crash'], options)).toBe(1);
    } finally {
      delete process.env['GRASSFLOW_DEBUG'];
    }
    const [data, app, crash, debug] = io.err;
    expect(data).toBe('prog data: DataDirError: no data in /nowhere: set GRASSFLOW_DATA_DIR\n');
    expect(app).toBe('prog app: AppError: app says what to do\n');
    expect(crash).toBe(
      'prog crash: WeirdError: unexpected\n(an unexpected error: run again with GRASSFLOW_DEBUG=1 for its stack trace)\n',
    );
    expect(debug).toMatch(/^prog crash: WeirdError: unexpected\n\s+at /);
  });
});

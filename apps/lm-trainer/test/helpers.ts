// Run the CLI from source (no build needed) against the shared data, with a private token-id cache.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCommand, type CommandResult } from '../../../tooling/run-command.mjs';

export { describeRun } from '../../../tooling/run-command.mjs';

export const APP_DIR = resolve(__dirname, '..');
export const DATA_DIR =
  process.env['GRASSFLOW_DATA_DIR'] === undefined
    ? undefined
    : resolve(APP_DIR, '../..', process.env['GRASSFLOW_DATA_DIR']);
const CACHE_DIR = join(tmpdir(), 'grassflow-lm-trainer-test-cache');

export function env(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GRASSFLOW_DATA_DIR: DATA_DIR,
    GRASSFLOW_CACHE_DIR: CACHE_DIR,
    GRASSFLOW_BACKEND: 'wasm',
    GRASSFLOW_OFFLINE: '1',
  };
}

const CLI = ['--import', 'tsx', join(APP_DIR, 'src/cli.ts')];

export type CliResult = CommandResult;

/**
 * Run `grassflow-lm ...args` to completion, killed after `timeoutMs` (default 200 s: below vitest's 240 s test timeout,
 * so a hung CLI fails with its output; a test whose command needs longer passes more and raises its own timeout).
 */
export function cli(args: readonly string[], timeoutMs = 200_000): CliResult {
  return runCommand(process.execPath, [...CLI, ...args], { cwd: APP_DIR, env: env(), timeoutMs });
}

/** Start `grassflow-lm ...args` without waiting (`extraEnv` over the test environment). */
export function cliAsync(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [...CLI, ...args], {
    cwd: APP_DIR,
    env: { ...env(), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `grassflow-lm ...args` in a child process, so that a server of this process can answer it meanwhile. */
export async function cliWhileServing(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = cliAsync(args, extraEnv);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
    child.on('close', (c, s) => done([c, s])),
  );
  return { code, signal, error: undefined, stdout, stderr };
}

export function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'grassflow-lm-test-'));
}

/** metrics.jsonl of a run folder as records. */
export function metrics(runDir: string): Array<Record<string, number | string>> {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, number | string>);
}

/** Tiny model flags shared by the tests: 2 layers, d 16, L 16, V 30,522 (WordPiece), 8 sequences a step. */
export const TINY = ['--preset', 'tiny', '--batch', '8', '--eval-tokens', '256', '--quiet', '--log-every', '1'];

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on the loopback address. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** A process and everything it wrote to stdout and stderr so far. */
export interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}
export function watch(child: ChildProcess): Proc {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

/** Stop a process: SIGTERM, then SIGKILL after `ms`. */
export async function stop(p: Proc | undefined, ms = 15_000): Promise<void> {
  if (p === undefined || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), ms);
  await p.exited;
  clearTimeout(t);
}

export async function until(what: string, ok: () => boolean, ms: number, log: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log()}`);
    await sleep(200);
  }
}

/**
 * A redis-server on a free loopback port, its files in `dir` (an append-only file: a restart on the same port keeps
 * the queue, as a real server's would); stop it with stop().
 */
export async function startRedis(dir: string, port?: number): Promise<{ redis: Proc; url: string; port: number }> {
  const p = port ?? (await freePort());
  const args = ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir];
  const redis = watch(spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  await until('redis-server to accept connections', () => redis.out().includes('Ready to accept'), 20_000, redis.out);
  return { redis, url: `redis://127.0.0.1:${p}/0`, port: p };
}

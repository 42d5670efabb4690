// Run the CLI from source (no build needed) against the shared data, with a private token-id cache.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `grassflow-lm ...args` to completion. */
export function cli(args: readonly string[]): CliResult {
  const r = spawnSync(process.execPath, [...CLI, ...args], {
    cwd: APP_DIR,
    env: env(),
    encoding: 'utf8',
    timeout: 200_000,
  }); // below vitest's 240 s test timeout, so a hung CLI fails with its output
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Start `grassflow-lm ...args` without waiting (`extraEnv` over the test environment). */
export function cliAsync(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [...CLI, ...args], {
    cwd: APP_DIR,
    env: { ...env(), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

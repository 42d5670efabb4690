// Run the CLI from source (no build needed) against small SNLI files cut from the shared data.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCommand, type CommandResult } from '../../../tooling/run-command.mjs';

export const APP_DIR = resolve(__dirname, '..');
export const DATA_DIR =
  process.env['GRASSFLOW_DATA_DIR'] === undefined
    ? undefined
    : resolve(APP_DIR, '../..', process.env['GRASSFLOW_DATA_DIR']);

export function env(): NodeJS.ProcessEnv {
  return { ...process.env, GRASSFLOW_DATA_DIR: DATA_DIR, GRASSFLOW_BACKEND: 'wasm', GRASSFLOW_OFFLINE: '1' };
}

const CLI = ['--import', 'tsx', join(APP_DIR, 'src/cli.ts')];

export type CliResult = CommandResult;

/** Run `grassflow-snli ...args` to completion. */
export function cli(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): CliResult {
  return runCommand(process.execPath, [...CLI, ...args], {
    cwd: APP_DIR,
    env: { ...env(), ...extraEnv },
    timeoutMs: 180_000,
  });
}

export function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'grassflow-snli-test-'));
}

/** The first `n` lines of an SNLI file of the data folder, written to `dir/name`. */
export function headOf(split: string, n: number, dir: string, name: string): string {
  const lines = readFileSync(join(DATA_DIR as string, 'snli', `snli_1.0_${split}.jsonl`), 'utf8')
    .split('\n')
    .slice(0, n);
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** metrics.jsonl of a run folder as records. */
export function metrics(runDir: string): Array<Record<string, number | string>> {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, number | string>);
}

// Running an example as its README says: `pnpm run <script>` in its folder (so its package.json scripts are what is
// tested), and the JSON line it prints last.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The folder of an example (examples/<name>). */
export const exampleDir = (name: string): string => join(import.meta.dirname, '..', '..', name);

/** Runs `pnpm run <script>` in examples/<name>; rejects with its output when it exits with an error. */
export async function pnpmRun(name: string, script: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await exec('pnpm', ['run', script], {
      cwd: exampleDir(name),
      encoding: 'utf8',
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${name}: pnpm run ${script} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** The last line of an example's output, parsed: each example ends by printing its result as one JSON line. */
export function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}

/** tsc's error lines of a compile that is expected to fail (tsc exits with 2 then). */
export async function tscErrors(name: string, args: readonly string[]): Promise<string[]> {
  const tsc = join(exampleDir(name), 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await exec(process.execPath, [tsc, ...args], { cwd: exampleDir(name), encoding: 'utf8' });
    return [];
  } catch (err) {
    const e = err as { stdout?: string };
    return (e.stdout ?? '').split('\n').filter((l) => /error TS\d+/.test(l));
  }
}

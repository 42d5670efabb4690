// Run a command to completion for a test, as spawnSync does, with what a failure report needs: the signal that
// ended it and the spawn error, beside the exit code and output.
import { spawnSync } from 'node:child_process';

/**
 * Run `file ...args` to completion. A process that dies of a signal the test did not send (the kernel's OOM killer,
 * or a crash of node itself under a loaded CI machine) or that could not be started at all says nothing about the
 * command under test: it is reported on stderr, with the signal, and run once more. A second such death is returned
 * as it is (code null, its signal), so the test fails with the cause in its message. A timeout, or output past maxBuffer, is never run again.
 *
 * @param {string} file
 * @param {readonly string[]} args
 * @param {{ cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number }} options
 * @returns {import('./run-command.d.mts').CommandResult}
 */
export function runCommand(file, args, { cwd, env, timeoutMs }) {
  for (let attempt = 1; ; attempt++) {
    const r = spawnSync(file, [...args], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
    const result = {
      code: r.status,
      signal: r.signal,
      error: r.error === undefined ? undefined : String(r.error),
      stdout: r.stdout ?? '',
      stderr: r.stderr ?? '',
    };
    // a timeout or output past maxBuffer: the test's own limits, which a second run would meet again
    const limit = ['ETIMEDOUT', 'ENOBUFS'].includes(/** @type {NodeJS.ErrnoException} */ (r.error)?.code ?? '');
    const lost = r.status === null && !limit;
    if (!lost || attempt === 2) return result;
    process.stderr.write(
      `runCommand: ${args.join(' ')} ended by ${r.signal ?? result.error} (not sent by the test), ` +
        `after this output:\n${result.stderr.slice(-2000)}\nrunning it once more\n`,
    );
  }
}

/**
 * What a failed expectation on a command should print: how it ended, then its stderr.
 *
 * @param {import('./run-command.d.mts').CommandResult} r
 * @returns {string}
 */
export function describeRun(r) {
  const end = r.code !== null ? `exit code ${r.code}` : `signal ${r.signal ?? 'none'}${r.error ? `, ${r.error}` : ''}`;
  return `${end}; stderr:\n${r.stderr}`;
}

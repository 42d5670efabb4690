// The tests' command runner: a death the test did not cause is run once more and reported; limits are not.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeRun, runCommand } from '../../../tooling/run-command.mjs';
import { tmp } from './helpers.js';

// kills itself with `signal` while the marker file does not exist yet (`times` = 1) or always (`times` = 2)
function selfKiller(dir: string, signal: string, times: 1 | 2): string[] {
  const marker = join(dir, 'died-once');
  const script =
    `const fs = require('fs'); process.stderr.write('about to die\\n');` +
    `if (${times} === 2 || !fs.existsSync(${JSON.stringify(marker)})) {` +
    ` fs.writeFileSync(${JSON.stringify(marker)}, ''); process.kill(process.pid, '${signal}'); }` +
    `else { process.stdout.write('second run'); process.exitCode = 3; }`;
  return ['-e', script];
}

describe('runCommand', () => {
  it('runs a command killed by a signal once more, saying so; a second death is returned with its signal', () => {
    const once = tmp();
    const r = runCommand(process.execPath, selfKiller(once, 'SIGSEGV', 1), {
      cwd: once,
      env: process.env,
      timeoutMs: 30_000,
    });
    expect(existsSync(join(once, 'died-once'))).toBe(true);
    expect(r).toMatchObject({ code: 3, signal: null, stdout: 'second run' });

    const twice = tmp();
    const d = runCommand(process.execPath, selfKiller(twice, 'SIGABRT', 2), {
      cwd: twice,
      env: process.env,
      timeoutMs: 30_000,
    });
    expect(d).toMatchObject({ code: null, signal: 'SIGABRT', stderr: 'about to die\n' });
    expect(describeRun(d)).toBe('signal SIGABRT; stderr:\nabout to die\n');
  });

  it('does not run a command again that met the timeout', () => {
    const dir = tmp();
    const counter = join(dir, 'runs');
    writeFileSync(counter, '');
    const script = `require('fs').appendFileSync(${JSON.stringify(counter)}, 'x'); setTimeout(() => {}, 60_000);`;
    const r = runCommand(process.execPath, ['-e', script], { cwd: dir, env: process.env, timeoutMs: 1_500 });
    expect(r.code).toBeNull();
    expect(r.error).toMatch(/ETIMEDOUT/);
    expect(readFileSync(counter, 'utf8')).toBe('x');
    expect(describeRun({ ...r, stderr: '' })).toMatch(/^signal SIGTERM, .*ETIMEDOUT/);
  });
});

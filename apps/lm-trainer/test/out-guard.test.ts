// Every command that writes: nothing outside the folder it was given, never over a user's files, one line for a bad
// --out (real processes on a tiny run).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliAsync, DATA_DIR, TINY, tmp, until, watch } from './helpers';

/** One line on stderr, no stack, exit 2. */
function refusedInOneLine(r: { code: number | null; stderr: string }, pattern: RegExp): void {
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('backend: '));
  expect(r.code, r.stderr).toBe(2);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
}

describe.skipIf(DATA_DIR === undefined)('output folders (tiny, WikiText-2; needs GRASSFLOW_DATA_DIR)', () => {
  const root = tmp();
  const run = join(root, 'run');
  const file = join(root, 'a-file');

  beforeAll(() => {
    writeFileSync(file, 'not a folder');
    const train = cli(['train', ...TINY, '--steps', '2', '--out', run]);
    expect(train.code, train.stderr).toBe(0);
  });

  it('--out a file: every command that writes says so in one line naming it, exit 2', () => {
    const says = new RegExp(`--out ${file} is a file: give a folder`);
    refusedInOneLine(cli(['train', ...TINY, '--steps', '2', '--out', file]), says);
    refusedInOneLine(cli(['export', run, '--out', file]), says);
    refusedInOneLine(cli(['inspect', '--checkpoint', run, '--text', 'the game', '--out', file]), says);
    refusedInOneLine(cli(['bench', '--scaling', '--lengths', '16', '--tokens', '16', '--out', file]), says);
    refusedInOneLine(cli(['ladder', '--quick', '--out', file]), says);
    refusedInOneLine(cli(['compare', ...TINY, '--steps', '1', '--out', file]), says);
    refusedInOneLine(
      cli(['eval', '--checkpoint', run, '--by-position', join(file, 'chart')]),
      new RegExp(`--by-position ${file} is a file: give a folder`),
    );
    expect(readFileSync(file, 'utf8')).toBe('not a folder');
  });

  it('inspect --out / and /proc/x/y: refused at once, nothing written into /', () => {
    const before = readdirSync('/').sort();
    refusedInOneLine(
      cli(['inspect', '--checkpoint', run, '--text', 'the history', '--out', '/']),
      /--out \/ is a folder of other folders: give a folder of its own/,
    );
    expect(readdirSync('/').sort()).toEqual(before);
    const t0 = Date.now();
    refusedInOneLine(
      cli(['inspect', '--checkpoint', run, '--text', 'the', '--out', '/proc/x/y'], 30_000),
      /inside the system folder \/proc/,
    );
    refusedInOneLine(cli(['export', run, '--out', '/proc/x/y'], 30_000), /inside the system folder \/proc/);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it("inspect into a folder of the user's report.md and inspect.json: refused, both kept; its own output rewritten", () => {
    const mine = join(root, 'mine');
    mkdirSync(mine);
    writeFileSync(join(mine, 'report.md'), 'my report');
    writeFileSync(join(mine, 'inspect.json'), '{"mine":true}');
    refusedInOneLine(
      cli(['inspect', '--checkpoint', run, '--text', 'the game', '--out', mine]),
      /holds files inspect did not write \(inspect.json, report.md\)/,
    );
    expect(readFileSync(join(mine, 'report.md'), 'utf8')).toBe('my report');
    expect(readFileSync(join(mine, 'inspect.json'), 'utf8')).toBe('{"mine":true}');
    const out = join(root, 'inspected');
    for (let i = 0; i < 2; i++) {
      const r = cli(['inspect', '--checkpoint', run, '--text', 'the game', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(existsSync(join(out, 'report.md'))).toBe(true);
  });

  it("export into an earlier export that holds the user's NOTES.md and eval-results/: refused, both kept", () => {
    const out = join(root, 'export');
    expect(cli(['export', run, '--out', out]).code).toBe(0);
    expect(cli(['export', run, '--out', out]).code).toBe(0); // its own: replaced
    writeFileSync(join(out, 'NOTES.md'), 'my notes');
    mkdirSync(join(out, 'eval-results'));
    writeFileSync(join(out, 'eval-results', 'a.json'), '{}');
    refusedInOneLine(
      cli(['export', run, '--out', out]),
      /refusing to replace the earlier export .*: it holds files the export did not write \(NOTES.md, eval-results\)/,
    );
    expect(readFileSync(join(out, 'NOTES.md'), 'utf8')).toBe('my notes');
    expect(existsSync(join(out, 'eval-results', 'a.json'))).toBe(true);
  });

  it('a train killed by SIGKILL before its first checkpoint starts again with the same command', async () => {
    const out = join(root, 'killed');
    const args = ['train', ...TINY, '--steps', '400', '--eval-every', '0', '--out', out];
    const p = watch(cliAsync(args));
    const lock = join(out, '.grassflow-run.lock');
    await until('the run folder', () => existsSync(join(out, 'config.json')) && existsSync(lock), 120_000, p.out);
    const { pid } = JSON.parse(readFileSync(lock, 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL'); // the training process, as the OOM killer would
    expect(await p.exited).toBe(137);
    expect(p.out()).toMatch(/killed by SIGKILL.*run it again to resume/);
    expect(existsSync(join(out, 'checkpoints', 'latest'))).toBe(false);
    const resume = cli(['train', '--resume', out, '--quiet']);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toMatch(/nothing to resume\. Run the command that started it again \(without --resume/);
    const again = cli([...args, '--stop-at-step', '2']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/its run stopped before its first checkpoint; starting it again/);
    expect(existsSync(join(out, 'checkpoints', 'latest'))).toBe(true);
  }, 240_000);
});

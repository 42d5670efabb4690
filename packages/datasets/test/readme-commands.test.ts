// The README's test command works as written from the repository root: `GRASSFLOW_DATA_DIR=../shared/data pnpm test`.
// turbo runs this suite in packages/datasets, where that relative path names another folder; the root script
// (scripts/test.mjs) resolves it against the folder pnpm was run from before anything else runs.
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] as string).split('\n'));

describe("the README's two commands", () => {
  it('are in the README as the test expects: the install and main job, then the test command', () => {
    expect(
      commands.some((c) =>
        /^npm install -g pnpm@[\d.]+ && pnpm install && pnpm build && GRASSFLOW_DATA_DIR=\.\.\/shared\/data pnpm lm-trainer compare$/.test(
          c,
        ),
      ),
    ).toBe(true);
    expect(commands).toContain('GRASSFLOW_DATA_DIR=../shared/data pnpm test');
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test']).toBe('node scripts/test.mjs');
  });

  it('a relative GRASSFLOW_DATA_DIR reaches the package suites absolute, resolved against where pnpm ran', () => {
    const dir = process.env['GRASSFLOW_DATA_DIR'];
    if (dir !== undefined && dir !== '') expect(isAbsolute(dir), `GRASSFLOW_DATA_DIR=${dir}`).toBe(true);
    // the resolution itself, on a child process of the root script's code path
    const r = spawnSync(process.execPath, ['-e', "import('./scripts/test.mjs').catch(() => {})"], {
      cwd: root,
      env: { ...process.env, GRASSFLOW_TEST_RESOLVE_ONLY: '1', GRASSFLOW_DATA_DIR: '../shared/data', INIT_CWD: root },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(join(root, '..', 'shared', 'data'));
  });
});

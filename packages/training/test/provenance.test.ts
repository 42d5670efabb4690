// The commit a run records is that of the code that runs, read from where the code lives, not from the current folder.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitCommit } from '@grassflow/training';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

describe('gitCommit', () => {
  it("a file of this checkout gives this checkout's commit, whatever the current folder", () => {
    const head = git(import.meta.dirname, 'rev-parse', 'HEAD');
    const here = gitCommit(join(import.meta.dirname, 'provenance.test.ts'));
    expect(here?.replace(/-dirty$/, '')).toBe(head);
    const other = mkdtempSync(join(tmpdir(), 'grassflow-provenance-'));
    git(other, 'init', '-q');
    const cwd = process.cwd();
    process.chdir(other); // started inside another repository
    try {
      expect(gitCommit(join(import.meta.dirname, 'provenance.test.ts'))?.replace(/-dirty$/, '')).toBe(head);
    } finally {
      process.chdir(cwd);
    }
  });

  it('code that is not a tracked file of a repository (an npm install inside a project) gives null', () => {
    const project = mkdtempSync(join(tmpdir(), 'grassflow-provenance-'));
    git(project, 'init', '-q');
    writeFileSync(join(project, 'README'), 'a project');
    git(project, '-c', 'user.email=a@b', '-c', 'user.name=a', 'add', 'README');
    git(project, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x');
    const pkg = join(project, 'node_modules', '@grassflow', 'lm-trainer');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{}');
    writeFileSync(join(pkg, 'dist', 'cli.js'), '');
    expect(gitCommit(join(pkg, 'dist', 'cli.js'))).toBeNull();
    expect(gitCommit(join(tmpdir(), 'no-such-file.js'))).toBeNull();
  });
});

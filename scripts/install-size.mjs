#!/usr/bin/env node
// What a user's fresh npm project weighs: publishes the workspace to a local Verdaccio (local-registry.mjs, as the
// pack check does), then, in empty folders, runs the npm line of gpu-layers' README and of grassmann-math's README,
// one npm install of every public package, gpu-layers' pnpm line and `pnpm add @grassflow/lm-trainer`, and prints
// `du -sm node_modules` with the largest packages of each.
// Run after `pnpm build`: `node scripts/install-size.mjs` (needs Verdaccio: GRASSFLOW_VERDACCIO or PATH).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findVerdaccio, publishWorkspace, readmeInstallLine, startRegistry } from './local-registry.mjs';

const root = resolve(import.meta.dirname, '..');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const megabytes = (path) => Number(run('du', ['-sm', path], root).split('\t')[0]);

/** The `count` largest installed packages (scoped ones one by one) of a node_modules folder, in MB. */
function largest(modules, count) {
  const dirs = readdirSync(modules)
    .filter((d) => !d.startsWith('.'))
    .flatMap((d) => (d.startsWith('@') ? readdirSync(join(modules, d)).map((s) => `${d}/${s}`) : [d]));
  return dirs
    .map((d) => [d, megabytes(join(modules, d))])
    .sort((a, b) => b[1] - a[1])
    .slice(0, count);
}

const verdaccio = findVerdaccio();
if (verdaccio === undefined) {
  console.error('install-size: no Verdaccio (set GRASSFLOW_VERDACCIO or put verdaccio on PATH, as .ci/run does)');
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), 'grassflow-size-'));
const registry = await startRegistry(verdaccio, work);
try {
  const published = publishWorkspace(root, work, registry.url);
  const cases = [
    ['gpu-layers README', readmeInstallLine(join(root, 'packages', 'gpu-layers'), 'npm install')],
    ['grassmann-math README', readmeInstallLine(join(root, 'packages', 'grassmann-math'), 'npm install')],
    [
      'every package',
      `npm install ${published.map((p) => p.name).join(' ')} @tensorflow/tfjs-core@4.22.0 @tensorflow/tfjs-layers@4.22.0`,
    ],
    ['gpu-layers README, pnpm', readmeInstallLine(join(root, 'packages', 'gpu-layers'), 'pnpm add')],
    ['grassflow-lm, pnpm', 'pnpm add @grassflow/lm-trainer'],
  ];
  for (const [i, [what, line]] of cases.entries()) {
    const project = join(work, `project-${i}`);
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'size-check', private: true }));
    const [manager, , ...args] = line.split(' ');
    if (manager === 'pnpm') {
      writeFileSync(join(project, '.npmrc'), `registry=${registry.url}\n`);
      run('pnpm', ['add', ...args], project);
    } else {
      run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--loglevel=error', '--registry', registry.url, ...args],
        project,
      );
    }
    const modules = join(project, 'node_modules');
    const top = largest(modules, 5)
      .map(([d, mb]) => `${d} ${mb}`)
      .join(', ');
    console.log(`install-size: ${what}: \`${line}\`: node_modules ${megabytes(modules)} MB (largest: ${top})`);
  }
} finally {
  registry.stop();
  rmSync(work, { recursive: true, force: true });
}

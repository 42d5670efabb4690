#!/usr/bin/env node
// Packs every public package with `pnpm pack`, installs the tarballs into an empty folder outside the
// workspace with plain npm, and imports each package from both ESM and CJS. Proves a user can install
// any @grassflow package on its own. Run after `turbo run build` (the root `pnpm test` does).
// Then, in that install (no workspace patches apply there), @grassflow/gpu-layers' initBackend({ backend: 'wasm' })
// from ESM and from CJS must report every core as wasm threads (at most 8), so more than one on a multi-core
// machine, and the script (which also runs a matMul) must exit by itself.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const packages = readdirSync(join(root, 'packages'))
  .map((dir) => join(root, 'packages', dir))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);

const work = mkdtempSync(join(tmpdir(), 'grassflow-pack-'));
let failed = 0;
let checks = packages.length * 2;
try {
  const tarballs = [];
  for (const { dir, pkg } of packages) {
    if (!existsSync(join(dir, 'dist'))) throw new Error(`${pkg.name}: no dist/ — run \`pnpm build\` first`);
    const out = run('pnpm', ['pack', '--pack-destination', work], dir).trim().split('\n').pop();
    const tarball = out.endsWith('.tgz')
      ? resolve(dir, out)
      : join(
          work,
          readdirSync(work).find((f) => f.endsWith('.tgz') && !tarballs.includes(join(work, f))),
        );
    tarballs.push(tarball);
    const listing = run('tar', ['-tzf', tarball], work);
    for (const required of [
      'package/package.json',
      'package/README.md',
      'package/LICENSE',
      'package/dist/index.js',
      'package/dist/index.cjs',
      'package/dist/index.d.ts',
    ]) {
      if (!listing.split('\n').includes(required)) {
        console.error(`check-pack: ${pkg.name}: tarball lacks ${required.replace('package/', '')}`);
        failed++;
      }
    }
  }
  const app = join(work, 'app');
  run('mkdir', ['-p', app], work);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, version: '0.0.0' }));
  // All tarballs in one install, so inter-package dependencies resolve to the packed versions.
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], app);
  for (const { pkg } of packages) {
    const esm = run(
      'node',
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pkg.name)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== 'default').sort()));`,
      ],
      app,
    );
    const cjs = run(
      'node',
      ['-e', `const m = require(${JSON.stringify(pkg.name)}); console.log(JSON.stringify(Object.keys(m).sort()));`],
      app,
    );
    const esmKeys = JSON.parse(esm.trim().split('\n').pop());
    const cjsKeys = JSON.parse(cjs.trim().split('\n').pop());
    const same = JSON.stringify(esmKeys) === JSON.stringify(cjsKeys);
    if (esmKeys.length === 0 || !same) {
      console.error(
        `check-pack: ${pkg.name}: ESM exports ${esmKeys.length}, CJS exports ${cjsKeys.length}${same ? '' : ' (they differ)'}`,
      );
      failed++;
    } else {
      console.log(
        `check-pack: ${pkg.name}@${pkg.version} installs from its tarball; ESM and CJS both export ${esmKeys.length} names`,
      );
    }
  }
  if (packages.some(({ pkg }) => pkg.name === '@grassflow/gpu-layers')) {
    const body =
      "const info = await initBackend({ backend: 'wasm' }); const a = tf.randomNormal([256, 256]); " +
      'const sum = tf.sum(tf.matMul(a, a)).dataSync()[0]; ' +
      'console.log(JSON.stringify({ threads: info.threads, note: info.threadsNote, finite: Number.isFinite(sum) }));';
    const scripts = {
      ESM: [
        '--input-type=module',
        '-e',
        `import { initBackend } from '@grassflow/gpu-layers'; import * as tf from '@tensorflow/tfjs-core'; ${body}`,
      ],
      CJS: [
        '-e',
        `const { initBackend } = require('@grassflow/gpu-layers'); const tf = require('@tensorflow/tfjs-core'); ` +
          `(async () => { ${body} })();`,
      ],
    };
    const want = Math.min(cpus().length, 8);
    for (const [kind, args] of Object.entries(scripts)) {
      let out;
      try {
        // A worker left holding the process open would never exit: the timeout makes that a failure.
        out = execFileSync('node', args, {
          cwd: app,
          encoding: 'utf8',
          timeout: 120_000,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, GRASSFLOW_BACKEND: '', GRASSFLOW_WASM_THREADS: '' },
        });
      } catch (err) {
        const why = err.code === 'ETIMEDOUT' ? 'did not exit within 120 s' : `failed: ${err.stderr || err.message}`;
        console.error(`check-pack: @grassflow/gpu-layers (${kind}): a script running initBackend and a matMul ${why}`);
        failed++;
        continue;
      }
      const info = JSON.parse(out.trim().split('\n').pop());
      if (info.threads !== want || !info.finite || (cpus().length > 1 && !(info.threads > 1))) {
        console.error(
          `check-pack: @grassflow/gpu-layers (${kind}): initBackend({ backend: 'wasm' }) reports ${info.threads} ` +
            `wasm threads on ${cpus().length} cores (want ${want}${info.note ? `; ${info.note}` : ''})` +
            (info.finite ? '' : ', and its matMul gave a non-finite sum'),
        );
        failed++;
      } else {
        console.log(
          `check-pack: @grassflow/gpu-layers (${kind}) from its tarball: initBackend({ backend: 'wasm' }) runs ` +
            `${info.threads} wasm threads on ${cpus().length} cores, and the script exits by itself`,
        );
      }
    }
    checks += 2;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const passed = checks - failed;
console.log(`check-pack: ${Math.max(passed, 0)} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

#!/usr/bin/env node
// `pnpm test`: formatting, then build, typecheck, lint and unit tests of every package (turbo), the suites that must
// also pass with XNNPACK's products (test:xnnpack, GRASSFLOW_BLAS=off), unused code (knip), the API reference (TypeDoc,
// every warning an error: a broken link, a public type that names one no entry exports), then the pack check.
// A relative GRASSFLOW_DATA_DIR is resolved here, against the folder `pnpm test` was run from (pnpm's INIT_CWD): turbo
// runs each package's tests in that package's folder, where `../shared/data` would name another place.
import { spawnSync } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';

const env = { ...process.env };
const dataDir = env['GRASSFLOW_DATA_DIR'];
if (dataDir !== undefined && dataDir !== '' && !isAbsolute(dataDir))
  env['GRASSFLOW_DATA_DIR'] = resolve(env['INIT_CWD'] ?? process.cwd(), dataDir);

// the package suites check the resolution through this switch (packages/datasets/test/readme-commands.test.ts)
if (env['GRASSFLOW_TEST_RESOLVE_ONLY'] === '1') {
  console.log(env['GRASSFLOW_DATA_DIR']);
  process.exit(0);
}

const steps = [
  ['prettier', ['--check', '.']],
  ['turbo', ['run', 'build', 'typecheck', 'lint', 'test', 'test:xnnpack', '--concurrency=2']],
  // after the build: knip loads the playground's vite.config.ts, which imports gpu-layers' dist
  ['knip', ['--no-progress']], // unused files, exports and dependencies (knip.jsonc)
  ['typedoc', []], // typedoc.json: into docs/api (gitignored), treatWarningsAsErrors
  ['node', ['scripts/check-pack.mjs']],
];
for (const [cmd, args] of steps) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env, cwd: resolve(import.meta.dirname, '..') });
  if (r.error !== undefined) {
    console.error(`pnpm test: could not run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
}

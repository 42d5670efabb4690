// The one tsup configuration of the workspace: libraries ship ESM + CJS + .d.ts, apps one ESM CLI bundle.
import { defineConfig } from 'tsup';
import { bundleDeclarations } from './dts.mjs';

/**
 * A published package: `src/index.ts` as ESM, CJS and type declarations (users import either module kind).
 * `entry`: more entry points, e.g. `src/browser.ts` (the package's `browser` export condition).
 * The declarations come from tooling/dts.mjs after the JavaScript build (tsup runs tsup.config.ts in the package's
 * folder): tsup's own would sit in hashed chunks under one-letter aliases.
 */
export function libraryTsup({ entry = [] } = {}) {
  const entries = ['src/index.ts', ...entry];
  return defineConfig({
    entry: entries,
    format: ['esm', 'cjs'],
    dts: false,
    onSuccess: () => bundleDeclarations(process.cwd(), entries),
    sourcemap: true,
    clean: true,
    target: 'node20', // the engines field of the root package.json
  });
}

/** An app: `src/cli.ts` as one executable ESM file (`node apps/<app>/dist/cli.js`); nothing imports an app. */
export function appTsup() {
  return defineConfig({
    entry: ['src/cli.ts'],
    format: ['esm'],
    dts: false,
    sourcemap: true,
    clean: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  });
}

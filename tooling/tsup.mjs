// The one tsup configuration of the workspace: libraries ship ESM + CJS + .d.ts, apps one ESM CLI bundle.
import { defineConfig } from 'tsup';

/**
 * A published package: `src/index.ts` as ESM, CJS and type declarations (users import either module kind).
 * `entry`: more entry points, e.g. `src/browser.ts` (the package's `browser` export condition).
 */
export function libraryTsup({ entry = [] } = {}) {
  return defineConfig({
    entry: ['src/index.ts', ...entry],
    format: ['esm', 'cjs'],
    dts: true,
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

// The one vitest configuration of the workspace. Tests import their own package by its name, as users do;
// the alias points that name at src/, so tests need no build of the package they test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * @param {string} packageDir the package's folder (`import.meta.dirname` of its vitest.config.ts)
 * @param {{ timeoutMs?: number }} [options] per-test and hook limit: generous, since CI runs on 2 shared cores;
 *   timings are checked in benchmarks, never in tests
 */
export function packageVitest(packageDir, { timeoutMs = 120_000 } = {}) {
  const { name } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  return defineConfig({
    resolve: {
      alias: [{ find: new RegExp(`^${name.replace('/', '\\/')}$`), replacement: join(packageDir, 'src/index.ts') }],
    },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: timeoutMs,
      hookTimeout: timeoutMs,
    },
  });
}

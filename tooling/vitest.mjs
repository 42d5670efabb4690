// The one vitest configuration of the workspace. Tests import their own package by its name, as users do;
// the alias points that name at src/, so tests need no build of the package they test.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * @param {string} packageDir the package's folder (`import.meta.dirname` of its vitest.config.ts)
 * @param {{ timeoutMs?: number }} [options] per-test and hook limit: generous, since CI runs on 2 shared cores;
 *   timings are checked in benchmarks, never in tests
 */
export function packageVitest(packageDir, { timeoutMs = 120_000 } = {}) {
  const { name, exports = {} } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const escape = (s) => s.replace(/[/.]/g, '\\$&');
  // and each subpath `name/x` of package.json's exports whose source is src/x.ts (e.g. `/internals`, `/browser`)
  const subpaths = Object.keys(exports)
    .filter((key) => key !== '.' && existsSync(join(packageDir, 'src', `${key.slice(2)}.ts`)))
    .map((key) => ({
      find: new RegExp(`^${escape(`${name}/${key.slice(2)}`)}$`),
      replacement: join(packageDir, 'src', `${key.slice(2)}.ts`),
    }));
  return defineConfig({
    resolve: {
      alias: [{ find: new RegExp(`^${escape(name)}$`), replacement: join(packageDir, 'src/index.ts') }, ...subpaths],
    },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: timeoutMs,
      hookTimeout: timeoutMs,
    },
  });
}

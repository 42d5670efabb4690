import { defineConfig } from 'vitest/config';

// One file per example, two at a time on CI's 2 cores; each spawns tsc, a build and the program, hence the limit.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 180_000, maxWorkers: 2 },
});

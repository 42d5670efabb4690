import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous limits: CI runs on 2 shared cores; timings are checked in benchmarks, never here.
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});

import { defineConfig } from 'vitest/config';

// The playground's tests drive the system Chromium (bundles, a local server, generation): one file at a time.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 180_000, fileParallelism: false },
});

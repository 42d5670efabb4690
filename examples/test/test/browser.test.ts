// examples/browser: checked by tsc with the browser condition, built by Vite, served by `vite preview` on 127.0.0.1
// and run in headless Chromium (tooling/chromium.mjs), which shows the result in the page.
import { preview, type PreviewServer } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { consoleErrors, openBrowser, skipBrowser } from '../../../tooling/chromium.mjs';
import { expectTrainedAndSampled } from './lm-result.js';
import { exampleDir, pnpmRun, tscErrors } from './run.js';

const dir = exampleDir('browser');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('examples/browser', () => {
  it('type-checks (strict, bundler, customConditions browser)', async () => {
    await pnpmRun('browser', 'typecheck');
  });

  it("without the browser condition tsc reads the Node entry's types, and the page does not compile", async () => {
    // customConditions replaced by one no export map names: the conditions a Node bundle would resolve
    const errors = await tscErrors('browser', ['--noEmit', '-p', 'tsconfig.json', '--customConditions', 'node']);
    expect(errors.join('\n')).toMatch(/'wasmPaths' does not exist in type 'InitBackendOptions'/);
  });

  it.skipIf(skipBrowser)('builds with Vite and trains and samples in Chromium (wasm)', async () => {
    await pnpmRun('browser', 'build');
    const server: PreviewServer = await preview({
      root: dir,
      logLevel: 'silent',
      preview: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    cleanups.push(() => server.close());
    const url = server.resolvedUrls?.local[0];
    expect(url).toBeDefined();
    const browser = await openBrowser();
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    const errors = consoleErrors(page);
    await page.goto(url!);
    await page.waitForFunction(() => document.querySelector('#result')?.textContent !== '', { timeout: 120_000 });
    const result = JSON.parse((await page.$eval('#result', (e) => e.textContent)) ?? '{}') as Record<string, unknown>;
    expect(result['error']).toBeUndefined();
    expect(result['backend']).toBe('wasm');
    expectTrainedAndSampled(result);
    expect(errors).toEqual([]);
  });
});

#!/usr/bin/env node
/* global document, URLSearchParams */
// The playground's sampling speed on a run folder, as its #speed line reports it (the sampling loop, priming
// included, in the page's own clock):
//   node apps/playground/scripts/speed.mjs RUN_DIR [TOKENS=200] [ROUNDS=3]
// Serves dist/ (cross-origin isolated, so wasm gets its threads) with RUN_DIR at /run/, opens it in the system
// Chromium (puppeteer-core) once per round and prints the backend line and the speed line of each.
import { resolve } from 'node:path';
import puppeteer from 'puppeteer-core';
import { serve } from './serve.mjs';

const [runDir, tokens = '200', rounds = '3'] = process.argv.slice(2);
if (runDir === undefined) {
  console.error('usage: node apps/playground/scripts/speed.mjs RUN_DIR [TOKENS] [ROUNDS]');
  process.exit(2);
}
const server = await serve({ root: resolve(import.meta.dirname, '..', 'dist'), mounts: { '/run/': resolve(runDir) } });
const browser = await puppeteer.launch({
  executablePath: process.env.GRASSFLOW_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
try {
  for (let round = 1; round <= Number(rounds); round++) {
    const page = await browser.newPage();
    const q = new URLSearchParams({ checkpoint: '/run/', prompt: 'the history of', maxTokens: tokens, seed: '1' });
    q.set('autorun', '1');
    await page.goto(`${server.url}?${q}`);
    await page.waitForFunction(
      () =>
        /tokens\/s/.test(document.querySelector('#speed')?.textContent ?? '') ||
        document.querySelector('[data-state="error"]') !== null,
      { timeout: 300_000 },
    );
    const failed = await page.$$eval('[data-state="error"]', (els) => els.map((e) => e.textContent));
    if (failed.length > 0) throw new Error(`the page reports: ${failed.join('; ')}`);
    const backend = await page.$eval('#backend', (e) => e.textContent);
    const speed = await page.$eval('#speed', (e) => e.textContent);
    console.log(`round ${round}: ${speed} (${backend})`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}

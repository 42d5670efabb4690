#!/usr/bin/env node
/* global document, URLSearchParams */
// A screenshot of the built playground on a run folder, for the docs:
//   node apps/playground/scripts/screenshot.mjs RUN_DIR OUT.png [PROMPT]
// Serves dist/ (cross-origin isolated) with RUN_DIR at /run/, opens it in the system Chromium (puppeteer-core),
// generates 40 tokens with seed 1 and saves the whole page once the geometry is drawn.
import { resolve } from 'node:path';
import puppeteer from 'puppeteer-core';
import { serve } from './serve.mjs';

const [runDir, out, prompt = 'the history of the city'] = process.argv.slice(2);
if (runDir === undefined || out === undefined) {
  console.error('usage: node apps/playground/scripts/screenshot.mjs RUN_DIR OUT.png [PROMPT]');
  process.exit(2);
}
const server = await serve({ root: resolve(import.meta.dirname, '..', 'dist'), mounts: { '/run/': resolve(runDir) } });
const browser = await puppeteer.launch({
  executablePath: process.env.GRASSFLOW_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
  defaultViewport: { width: 1200, height: 900 },
});
try {
  const page = await browser.newPage();
  const q = new URLSearchParams({ checkpoint: '/run/', prompt, maxTokens: '40', seed: '1', autorun: '1' });
  await page.goto(`${server.url}?${q}`);
  await page.waitForFunction(
    () =>
      document.querySelector('#charts')?.getAttribute('data-state') === 'drawn' ||
      document.querySelector('[data-state="error"]') !== null,
    { timeout: 300_000 },
  );
  const failed = await page.$$eval('[data-state="error"]', (els) => els.map((e) => e.textContent));
  if (failed.length > 0) throw new Error(`the page reports: ${failed.join('; ')}`);
  await page.screenshot({ path: out, fullPage: true });
  console.log(`screenshot: ${out}`);
  console.log(await page.$eval('#backend', (e) => e.textContent));
  console.log(await page.$eval('#speed', (e) => e.textContent));
  console.log(await page.$eval('#output', (e) => e.textContent));
} finally {
  await browser.close();
  await server.close();
}

// The system Chromium for browser tests (the playground's and the browser example's), driven by puppeteer-core (which
// downloads no browser): where it is, whether the tests skip, launching it headless, a page's console errors, and
// the result a page publishes.
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

/** Debian's chromium (apt-get install chromium; .ci/run installs it), or GRASSFLOW_CHROMIUM. */
export const CHROMIUM = process.env['GRASSFLOW_CHROMIUM'] ?? '/usr/bin/chromium';
/** Without Chromium the browser tests skip, except in CI (CI=true), where they fail. */
export const skipBrowser = !existsSync(CHROMIUM) && process.env['CI'] !== 'true';
if (skipBrowser) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

/** Chromium's WebGPU on SwiftShader (a software, fallback adapter): what a page sees on a machine without a GPU. */
export const SOFTWARE_WEBGPU_ARGS = ['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=native'];

/**
 * Headless Chromium; the caller closes it.
 * @param {readonly string[]} [extraArgs]
 * @returns {Promise<import('puppeteer-core').Browser>}
 */
export async function openBrowser(extraArgs = []) {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set GRASSFLOW_CHROMIUM`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--window-size=1200,900', ...extraArgs],
    defaultViewport: { width: 1200, height: 900 },
  });
}

/**
 * Console errors and uncaught exceptions of a page, collected from now on.
 * @param {import('puppeteer-core').Page} page
 * @returns {string[]}
 */
export function consoleErrors(page) {
  /** @type {string[]} */
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location().url ?? ''})`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
  return errors;
}

/**
 * Waits for window.__result (set by the page when it is done) and returns it.
 * @param {import('puppeteer-core').Page} page
 * @param {number} [timeoutMs]
 * @returns {Promise<unknown>}
 */
export async function pageResult(page, timeoutMs = 120_000) {
  // globalThis: the page's window (this module runs in Node, where `window` is not a global)
  await page.waitForFunction(() => /** @type {{ __result?: unknown }} */ (globalThis).__result !== undefined, {
    timeout: timeoutMs,
  });
  return page.evaluate(() => /** @type {{ __result?: unknown }} */ (globalThis).__result);
}

// Shared by the browser tests: the system Chromium driven by puppeteer-core (which downloads no browser), a page's
// console errors, and a tiny checkpoint written by gpu-layers' saveCheckpoint.
import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createModel, preset, saveCheckpoint, type ModelConfig } from '@grassflow/gpu-layers';

/** Debian's chromium (apt-get install chromium; .ci/run installs it), or GRASSFLOW_CHROMIUM. */
export const CHROMIUM = process.env['GRASSFLOW_CHROMIUM'] ?? '/usr/bin/chromium';
/** Without Chromium the browser tests skip, except in CI (CI=true), where they fail. */
export const skipBrowser = !existsSync(CHROMIUM) && process.env['CI'] !== 'true';
if (skipBrowser)
  console.warn(`playground: browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

const fromEnv = process.env['GRASSFLOW_DATA_DIR'];
export const dataDir = fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;

/** Chromium's WebGPU on SwiftShader (a software, fallback adapter): what a page sees on a machine without a GPU. */
export const SOFTWARE_WEBGPU_ARGS = ['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=native'];

export async function openBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
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

/** Console errors and uncaught exceptions of a page, collected from now on. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location().url ?? ''})`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
  return errors;
}

/** Waits for window.__result (set by the page when it is done) and returns it. */
export async function pageResult<T>(page: Page, timeoutMs = 120_000): Promise<T> {
  await page.waitForFunction(() => (window as { __result?: unknown }).__result !== undefined, { timeout: timeoutMs });
  return (await page.evaluate(() => (window as { __result?: unknown }).__result)) as T;
}

/** A tiny language model (the 'tiny' preset) of the BERT vocabulary, saved as a checkpoint folder grassflow-lm reads. */
export async function writeTinyCheckpoint(dir: string, overrides: Partial<ModelConfig> = {}): Promise<void> {
  const model = createModel(preset('tiny', { vocabSize: 30522, maxLen: 32, ...overrides }), { seed: 7 });
  try {
    await saveCheckpoint(dir, model, { extra: { step: 0, run: { tokenizer: 'wordpiece' } } });
  } finally {
    model.dispose();
  }
}

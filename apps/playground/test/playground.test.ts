// The playground in Chromium: built by Vite to static files, served on 127.0.0.1 (cross-origin isolated), it opens a
// grassflow-lm run folder by URL, generates with the constant-memory decoder the ids and the text that Node's
// `grassflow-lm generate` gives for the same seed and settings, draws the α heatmap and the geometry (Grassmann) or the
// attention maps (Transformer), shows the backend and tokens/s, and logs no console error.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'puppeteer-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend, loadCheckpoint, sampleIds } from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/datasets/prng';
import { wikitextForWordPiece, WordPieceTokenizer } from '@grassflow/tokenizers';
import { serve } from '../scripts/serve.mjs';
import {
  consoleErrors,
  dataDir,
  openBrowser,
  skipBrowser,
  SOFTWARE_WEBGPU_ARGS,
  writeTinyCheckpoint,
} from './chromium.js';

const app = resolve(import.meta.dirname, '..');
const CLI = resolve(app, '..', 'lm-trainer', 'dist', 'cli.js');
const SETTINGS = { prompt: 'the history of the city', maxTokens: 14, temperature: 0.9, topK: 20, seed: 5 };

let root: string;
let browser: Browser | undefined;
let server: { url: string; close(): Promise<void> } | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'playground-page-'));
  if (skipBrowser || dataDir === undefined) return;
  await build({
    root: app,
    configFile: join(app, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: join(root, 'dist'), emptyOutDir: true },
  });
  // Run folders as grassflow-lm train leaves them: their own config.json, the checkpoints under checkpoints/.
  for (const [name, kind] of [
    ['grassmann-run', 'grassmann'],
    ['transformer-run', 'transformer'],
  ] as const) {
    await mkdir(join(root, 'runs', name, 'checkpoints'), { recursive: true });
    await writeFile(join(root, 'runs', name, 'config.json'), JSON.stringify({ format: 'grassflow-lm-run' }));
    await writeTinyCheckpoint(join(root, 'runs', name, 'checkpoints', 'best'), { kind });
  }
  server = await serve({ root: join(root, 'dist'), mounts: { '/runs/': join(root, 'runs') } });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

/** Opens the playground on a run folder with the settings, waits for generation and charts, returns the page. */
async function generateInPage(run: string): Promise<{ page: Page; errors: string[] }> {
  browser ??= await openBrowser();
  const page = await browser.newPage();
  const errors = consoleErrors(page);
  const q = new URLSearchParams({
    checkpoint: `/runs/${run}/`,
    prompt: SETTINGS.prompt,
    maxTokens: String(SETTINGS.maxTokens),
    temperature: String(SETTINGS.temperature),
    topK: String(SETTINGS.topK),
    seed: String(SETTINGS.seed),
    autorun: '1',
  });
  await page.goto(`${server?.url ?? ''}?${q.toString()}`);
  await page.waitForFunction(
    () =>
      document.querySelector('#charts')?.getAttribute('data-state') === 'drawn' ||
      document.querySelector('[data-state="error"]') !== null,
    { timeout: 120_000 },
  );
  const failed = await page.$$eval('[data-state="error"]', (els) => els.map((e) => e.textContent));
  expect(failed).toEqual([]);
  return { page, errors };
}

const attr = (page: Page, selector: string, name: string): Promise<string | null> =>
  page.$eval(selector, (e, n) => e.getAttribute(n), name);

/** Distinct colours of a canvas: a drawn heatmap has many, a blank canvas one. */
const colours = (page: Page, index: number): Promise<number> =>
  page.$$eval(
    '#charts canvas',
    (canvases, k) => {
      const c = canvases[k] as HTMLCanvasElement;
      const data = c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data ?? new Uint8ClampedArray();
      const seen = new Set<number>();
      for (let i = 0; i < data.length; i += 4)
        seen.add(((data[i] ?? 0) << 16) | ((data[i + 1] ?? 0) << 8) | (data[i + 2] ?? 0));
      return seen.size;
    },
    index,
  );

/** Node: the ids gpu-layers' sampler gives (what grassflow-lm generate calls) on the wasm backend. */
async function nodeIds(checkpoint: string): Promise<{ prompt: number[]; out: number[] }> {
  await initBackend({ backend: 'wasm' });
  const tok = WordPieceTokenizer.fromVocabFile(join(dataDir as string, 'bert-vocab', 'vocab.txt'));
  const prompt = (await tok.encode(wikitextForWordPiece(SETTINGS.prompt), undefined, { addSpecialTokens: false })).ids;
  const { model } = await loadCheckpoint(checkpoint);
  const out: number[] = [];
  try {
    for await (const id of sampleIds(model, prompt, SETTINGS, new Prng(SETTINGS.seed))) out.push(id);
  } finally {
    model.dispose();
  }
  return { prompt: Array.from(prompt), out };
}

describe.skipIf(skipBrowser || dataDir === undefined)('the playground in Chromium', () => {
  it("opens a run folder and generates grassflow-lm generate's tokens, then draws the α heatmap and the flow", async () => {
    const { page, errors } = await generateInPage('grassmann-run');
    const checkpoint = join(root, 'runs', 'grassmann-run', 'checkpoints', 'best');
    const want = await nodeIds(checkpoint);
    expect(await attr(page, '#output', 'data-prompt-ids')).toBe(want.prompt.join(','));
    expect(await attr(page, '#output', 'data-ids')).toBe(want.out.join(','));
    // The command itself, as a user runs it, on the same backend.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        CLI,
        'generate',
        ...['--checkpoint', checkpoint, '--prompt', SETTINGS.prompt, '--max-tokens', String(SETTINGS.maxTokens)],
        ...['--temperature', String(SETTINGS.temperature), '--top-k', String(SETTINGS.topK)],
        ...['--seed', String(SETTINGS.seed), '--backend', 'wasm', '--data-dir', dataDir as string],
      ],
      { env: { ...process.env, NO_COLOR: '1' } },
    );
    expect(await attr(page, '#output', 'data-text')).toBe(stdout.replace(/\n$/, ''));

    expect(await attr(page, '#backend', 'data-backend')).toBe('wasm');
    expect(await page.$eval('#backend', (e) => e.textContent)).toMatch(/wasm, SIMD, \d+ threads?: /);
    expect(await page.$eval('#speed', (e) => e.textContent)).toMatch(/14 tokens in [\d.]+ s: [\d.]+ tokens\/s on wasm/);
    expect(await attr(page, '#charts', 'data-layers')).toBe('2');
    // α heatmap, then per layer the pair angles and the principal-angle flow.
    expect(await page.$$eval('#charts canvas', (c) => c.length)).toBe(1 + 2 * 2);
    expect(await colours(page, 0)).toBeGreaterThan(20);
    expect(await colours(page, 2)).toBeGreaterThan(5);
    const shot = process.env['GRASSFLOW_PLAYGROUND_SCREENSHOT'];
    if (shot !== undefined && shot !== '') await page.screenshot({ path: shot, fullPage: true });
    await page.close();
    expect(errors).toEqual([]);
  });

  it('opens a run folder from the file picker (its checkpoints/best) and generates the same tokens', async () => {
    browser ??= await openBrowser();
    const page = await browser.newPage();
    const errors = consoleErrors(page);
    const q = new URLSearchParams({ prompt: SETTINGS.prompt, maxTokens: String(SETTINGS.maxTokens), seed: '5' });
    q.set('temperature', String(SETTINGS.temperature));
    q.set('topK', String(SETTINGS.topK));
    await page.goto(`${server?.url ?? ''}?${q.toString()}`);
    const checkpoint = join(root, 'runs', 'grassmann-run', 'checkpoints', 'best');
    // Chromium fills a webkitdirectory input from a folder: the run folder, whose checkpoints/best the page takes.
    const picker = await page.$('input#folder');
    await picker?.uploadFile(join(root, 'runs', 'grassmann-run'));
    await page.waitForFunction(
      () => ['ready', 'error'].includes(document.querySelector('#model')?.getAttribute('data-state') ?? ''),
      { timeout: 60_000 },
    );
    expect(await page.$eval('#model', (e) => e.textContent)).toMatch(/^grassmann-run\/checkpoints\/best: Grassmann/);
    await page.click('#run');
    await page.waitForFunction(() => document.querySelector('#charts')?.getAttribute('data-state') === 'drawn', {
      timeout: 60_000,
    });
    expect(await attr(page, '#output', 'data-ids')).toBe((await nodeIds(checkpoint)).out.join(','));
    await page.close();
    expect(errors).toEqual([]);
  });

  it('draws the attention maps of a Transformer checkpoint, with the tokens Node samples', async () => {
    const { page, errors } = await generateInPage('transformer-run');
    const want = await nodeIds(join(root, 'runs', 'transformer-run', 'checkpoints', 'best'));
    expect(await attr(page, '#output', 'data-ids')).toBe(want.out.join(','));
    // 2 layers × 2 heads of the tiny preset.
    expect(await page.$$eval('#charts canvas', (c) => c.length)).toBe(4);
    expect(await colours(page, 0)).toBeGreaterThan(20);
    await page.close();
    expect(errors).toEqual([]);
  });
  it('WebGPU: a software adapter is skipped automatically (and why), and runs the page when asked for by name', async () => {
    const gpuBrowser = await openBrowser(SOFTWARE_WEBGPU_ARGS);
    try {
      const auto = await gpuBrowser.newPage();
      await auto.goto(server?.url ?? '');
      await auto.waitForFunction(() => document.querySelector('#backend')?.getAttribute('data-state') === 'ready');
      expect(await attr(auto, '#backend', 'data-backend')).toBe('wasm');
      expect(await auto.$eval('#backend', (e) => e.textContent)).toMatch(/skipped webgpu \(.*software fallback/);
      const page = await gpuBrowser.newPage();
      const errors = consoleErrors(page);
      const q = new URLSearchParams({
        backend: 'webgpu',
        checkpoint: '/runs/grassmann-run/',
        maxTokens: '4',
        autorun: '1',
      });
      await page.goto(`${server?.url ?? ''}?${q.toString()}`);
      await page.waitForFunction(
        () =>
          document.querySelector('#charts')?.getAttribute('data-state') === 'drawn' ||
          document.querySelector('[data-state="error"]') !== null,
        { timeout: 120_000 },
      );
      expect(await page.$$eval('[data-state="error"]', (els) => els.map((e) => e.textContent))).toEqual([]);
      expect(await attr(page, '#backend', 'data-backend')).toBe('webgpu');
      expect((await attr(page, '#output', 'data-ids'))?.split(',')).toHaveLength(4);
      expect(await page.$eval('#speed', (e) => e.textContent)).toMatch(/tokens\/s on webgpu/);
      expect(errors).toEqual([]);
    } finally {
      await gpuBrowser.close();
    }
  });
});

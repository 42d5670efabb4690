// The playground in Chromium: built by Vite to static files, served on 127.0.0.1 (cross-origin isolated), it opens a
// grassflow-lm run folder by URL, generates with the constant-memory decoder the ids and the text that Node's
// `grassflow-lm generate` gives for the same seed and settings, draws the α heatmap and the geometry (Grassmann) or the
// attention maps (Transformer), shows the backend and tokens/s, and logs no console error. A word-level run that
// `grassflow-lm train --tokenizer word` trains here opens too, with the vocabulary its folder carries.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'puppeteer-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSlideKeep, fromPretrained, initBackend, loadCheckpoint, sampleIds } from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/prng';
import { wikitextForWordPiece, WordLevelTokenizer, WordPieceTokenizer } from '@grassflow/tokenizers';
import { serve } from '../scripts/serve.mjs';
import { consoleErrors, openBrowser, skipBrowser, SOFTWARE_WEBGPU_ARGS } from '../../../tooling/chromium.mjs';
import { dataDir, writeTinyCheckpoint, writeTinyPretrained } from './chromium.js';

const app = resolve(import.meta.dirname, '..');
const CLI = resolve(app, '..', 'lm-trainer', 'dist', 'cli.js');
const SETTINGS = { prompt: 'the history of the city', maxTokens: 14, temperature: 0.9, topK: 20, seed: 5 };
/** The word-level run's settings: a prompt with a word wiki.train lacks (<unk>), top-k over its 33,278 words. */
const WORD_SETTINGS = { ...SETTINGS, prompt: 'the history of the zorblax city', topK: 50, seed: 3 };
const run = promisify(execFile);

/** BERT's vocabulary with the lines of "the" and "city" swapped. */
function swapWords(vocab: string): string {
  return vocab
    .split('\n')
    .map((w) => (w === 'the' ? 'city' : w === 'city' ? 'the' : w))
    .join('\n');
}

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
  // An export whose vocab.txt is not the BERT vocabulary the page ships ("the" and "city" trade ids), so only the
  // export's own tokenizer gives Node's ids.
  await writeTinyPretrained(join(root, 'runs', 'export'), dataDir, swapWords);
  // A word-level run as a user trains it (tiny: 2 steps of 2 × 16 tokens); its token ids cached under root.
  await run(
    process.execPath,
    [
      ...[CLI, 'train', '--model', 'grassmann', '--preset', 'tiny', '--tokenizer', 'word', '--steps', '2'],
      ...['--batch', '2', '--seq-len', '16', '--eval-tokens', '64', '--backend', 'wasm', '--quiet'],
      ...['--data-dir', dataDir, '--out', join(root, 'runs', 'word-run')],
    ],
    { env: { ...process.env, GRASSFLOW_CACHE_DIR: join(root, 'cache'), NO_COLOR: '1' } },
  );
  server = await serve({ root: join(root, 'dist'), mounts: { '/runs/': join(root, 'runs') } });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

/** Opens the playground on a run folder with the settings, waits for generation and charts, returns the page. */
async function generateInPage(
  folder: string,
  settings = SETTINGS,
  extra: Record<string, string> = {},
): Promise<{ page: Page; errors: string[] }> {
  browser ??= await openBrowser();
  const page = await browser.newPage();
  const errors = consoleErrors(page);
  const q = new URLSearchParams({
    checkpoint: `/runs/${folder}/`,
    prompt: settings.prompt,
    maxTokens: String(settings.maxTokens),
    temperature: String(settings.temperature),
    topK: String(settings.topK),
    seed: String(settings.seed),
    autorun: '1',
    ...extra,
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

/** The sampling of the page and of grassflow-lm generate: the settings with the apps' slide-keep (half the table). */
function appSampling<S extends object>(model: { config: { maxLen: number } }, settings: S): S & { slideKeep: number } {
  return { ...settings, slideKeep: appSlideKeep(model.config.maxLen) };
}

/** Node: the ids gpu-layers' sampler gives (what grassflow-lm generate calls) on the wasm backend. */
async function nodeIds(checkpoint: string): Promise<{ prompt: number[]; out: number[] }> {
  await initBackend({ backend: 'wasm' });
  const tok = WordPieceTokenizer.fromVocabFile(join(dataDir as string, 'bert-vocab', 'vocab.txt'));
  const prompt = (await tok.encode(wikitextForWordPiece(SETTINGS.prompt), undefined, { addSpecialTokens: false })).ids;
  const { model } = await loadCheckpoint(checkpoint);
  const out: number[] = [];
  try {
    for await (const id of sampleIds(model, prompt, appSampling(model, SETTINGS), new Prng(SETTINGS.seed)))
      out.push(id);
  } finally {
    model.dispose();
  }
  return { prompt: Array.from(prompt), out };
}

/** The text `grassflow-lm generate` prints for the checkpoint and settings, on the wasm backend (its final newline cut). */
async function cliGenerate(checkpoint: string, settings = SETTINGS): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      CLI,
      'generate',
      ...['--checkpoint', checkpoint, '--prompt', settings.prompt, '--max-tokens', String(settings.maxTokens)],
      ...['--temperature', String(settings.temperature), '--top-k', String(settings.topK)],
      ...['--seed', String(settings.seed), '--backend', 'wasm', '--data-dir', dataDir as string],
    ],
    { env: { ...process.env, NO_COLOR: '1', GRASSFLOW_CACHE_DIR: join(root, 'cache') } },
  );
  return stdout.replace(/\n$/, '');
}

/** Node: the word-level ids of the prompt (the tokenizer built from wiki.train) and the ids the sampler gives. */
async function nodeWordIds(checkpoint: string): Promise<{ prompt: number[]; out: number[] }> {
  await initBackend({ backend: 'wasm' });
  const tok = WordLevelTokenizer.fromCorpusFile(join(dataDir as string, 'wikitext-2', 'wiki.train.tokens'));
  const prompt = tok.encodePrompt(WORD_SETTINGS.prompt);
  const { model } = await loadCheckpoint(checkpoint);
  const out: number[] = [];
  try {
    for await (const id of sampleIds(model, prompt, appSampling(model, WORD_SETTINGS), new Prng(WORD_SETTINGS.seed)))
      out.push(id);
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
    expect(await attr(page, '#output', 'data-text')).toBe(await cliGenerate(checkpoint));

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

  it("opens a word-level run folder (its word-vocab.json) and generates grassflow-lm generate's tokens and text", async () => {
    const { page, errors } = await generateInPage('word-run', WORD_SETTINGS);
    const checkpoint = join(root, 'runs', 'word-run', 'checkpoints', 'best');
    const want = await nodeWordIds(checkpoint);
    expect(want.prompt).toContain(9); // "zorblax" is <unk> (id 9 in wiki.train's order)
    expect(await attr(page, '#output', 'data-prompt-ids')).toBe(want.prompt.join(','));
    expect(await attr(page, '#output', 'data-ids')).toBe(want.out.join(','));
    expect(await attr(page, '#output', 'data-text')).toBe(await cliGenerate(checkpoint, WORD_SETTINGS));
    expect(await page.$eval('#model', (e) => e.textContent)).toMatch(/vocabulary 33278/);
    expect(await attr(page, '#charts', 'data-state')).toBe('drawn');
    await page.close();
    expect(errors).toEqual([]);
  });

  it("asks for word-vocab.json when a word-level checkpoint folder lacks it, and opens once it's picked", async () => {
    browser ??= await openBrowser();
    const page = await browser.newPage();
    const errors = consoleErrors(page);
    await page.goto(server?.url ?? '');
    // The checkpoint folder alone, as an older run folder's checkpoint (no word-vocab.json beside it).
    await (await page.$('input#folder'))?.uploadFile(join(root, 'runs', 'word-run', 'checkpoints', 'best'));
    await page.waitForFunction(() => document.querySelector('#model')?.getAttribute('data-state') === 'error', {
      timeout: 60_000,
    });
    expect(await page.$eval('#model', (e) => e.textContent)).toMatch(
      /word-level tokenizer and the picked folder has no word-vocab\.json .*pick the run's word-vocab\.json/,
    );
    await (await page.$('input#word-vocab-file'))?.uploadFile(join(root, 'runs', 'word-run', 'word-vocab.json'));
    await page.waitForFunction(() => document.querySelector('#model')?.getAttribute('data-state') === 'ready', {
      timeout: 60_000,
    });
    expect(await page.$eval('#model', (e) => e.textContent)).toMatch(/^best: Grassmann.*vocabulary 33278/);
    await page.close();
    // the one console error is the page's own message for the missing vocabulary
    expect(errors).toEqual([expect.stringMatching(/^console\.error: this checkpoint was trained with the word-level/)]);
  });

  it("opens an export with the tokenizer it carries (not the page's vocabulary): fromPretrained's ids and text", async () => {
    const exportDir = join(root, 'runs', 'export');
    await initBackend({ backend: 'wasm' });
    const p = await fromPretrained(exportDir);
    let wantText: string;
    const wantPrompt = Array.from(p.tokenizer.encodePrompt(SETTINGS.prompt));
    try {
      wantText = await p.generate(SETTINGS.prompt, SETTINGS);
    } finally {
      p.dispose();
    }
    // The page's own BERT vocabulary gives other ids for this prompt: the test tells the two tokenizers apart.
    const bert = WordPieceTokenizer.fromVocabFile(join(dataDir as string, 'bert-vocab', 'vocab.txt'));
    const bertIds = (await bert.encode(wikitextForWordPiece(SETTINGS.prompt), undefined, { addSpecialTokens: false }))
      .ids;
    expect(Array.from(bertIds)).not.toEqual(wantPrompt);

    // ?vocab= points nowhere: the export must not need the page's vocabulary.
    const { page, errors } = await generateInPage('export', SETTINGS, { vocab: '/nowhere/vocab.txt' });
    expect(await attr(page, '#model', 'data-tokenizer')).toBe('export');
    expect(await attr(page, '#output', 'data-prompt-ids')).toBe(wantPrompt.join(','));
    expect(await attr(page, '#output', 'data-text')).toBe(wantText);
    await page.close();
    expect(errors).toEqual([]);

    // The same folder from the file picker.
    browser ??= await openBrowser();
    const picked = await browser.newPage();
    await picked.goto(`${server?.url ?? ''}?vocab=/nowhere/vocab.txt`);
    await (await picked.$('input#folder'))?.uploadFile(exportDir);
    await picked.waitForFunction(
      () => ['ready', 'error'].includes(document.querySelector('#model')?.getAttribute('data-state') ?? ''),
      { timeout: 60_000 },
    );
    expect(await picked.$eval('#model', (e) => e.textContent)).toMatch(/^export: Grassmann/);
    expect(await attr(picked, '#model', 'data-tokenizer')).toBe('export');
    await picked.close();
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

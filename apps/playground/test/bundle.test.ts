// The packages in a real browser: a page importing grassmann-math, gpu-layers, checkpoints, the tokenizer and the
// seeded stream is bundled by esbuild for the browser platform (no stubs, no Node built-ins), served on 127.0.0.1
// and run in the system Chromium: the wasm backend from the served .wasm files (threads under cross-origin
// isolation), a checkpoint from fetch and from picked files with Node's logits and sampled ids, a pretrained folder by
// URL with Node's text (fromPretrained), the WordPiece ids of HF's tokenizer, and backend selection that says why.
import { mkdtemp, readFile, rm, writeFile, copyFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { build, type Metafile } from 'esbuild';
import * as tf from '@tensorflow/tfjs-core';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPretrained, initBackend, loadCheckpoint, sampleIds, WASM_FILES } from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/prng';
import { WordPieceTokenizer } from '@grassflow/tokenizers';
import { serve } from '../scripts/serve.mjs';
import { consoleErrors, openBrowser, pageResult, skipBrowser } from '../../../tooling/chromium.mjs';
import { dataDir, writeTinyCheckpoint, writeTinyPretrained } from './chromium.js';

const here = import.meta.dirname;
const wasmDir = join(
  dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/package.json')),
  'dist',
);

/** Hard cases for a hand-written BERT tokenizer: accents, CJK, punctuation, long words, [UNK], special tokens. */
const CASES = [
  'Café naïve façade — résumé, Ångström, São Paulo, Dvořák.',
  '北京欢迎你！東京は日本の首都です。서울은 한국의 수도이다.',
  "Hello, world!!! (it's 3.14) [brackets] {braces} $5 + 10% ~#@^&*_|\\/`",
  'supercalifragilisticexpialidocious ' + 'x'.repeat(101) + ' 😀 ΟΔΟΣ',
  '[UNK] stays, [SEP] too; [unk] does not',
];

/** Strings only the Node-only parts contain: they must not reach a browser bundle. */
// (tfjs-core itself names tfjs-node in a hint, and tfjs-backend-wasm's glue has a disabled worker_threads stub.)
const NODE_ONLY_MARKERS = [
  'npm rebuild', // backend.ts: tfjs-node(-gpu) advice
  'GRASSFLOW_WASM_THREADS', // backend.ts: the Node thread count
  'setUpNodeWasmThreads', // wasm-node-threads.ts
  'webgpu@0.6.2', // webgpu-node.ts: Dawn
  'probeWebgpuAdapter', // webgpu-node.ts
  'fsync', // checkpoints' atomic writes
  'createRequire', // node:module
  'pretrainedCacheDir', // pretrained-download.ts: the Node cache of downloaded folders
];

let root: string;
let metafile: Metafile;
let bundleText: string;
let browser: Browser | undefined;
const servers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'playground-bundle-'));
  const site = join(root, 'site');
  await mkdir(join(site, 'wasm'), { recursive: true });
  const result = await build({
    entryPoints: [join(here, 'fixtures', 'bundle-page.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    outfile: join(site, 'page.js'),
    metafile: true,
    logLevel: 'silent',
  });
  metafile = result.metafile;
  bundleText = await readFile(join(site, 'page.js'), 'utf8');
  for (const f of WASM_FILES) await copyFile(join(wasmDir, f), join(site, 'wasm', f));
  await writeFile(
    join(site, 'index.html'),
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module" src="page.js"></script>',
  );
  await writeFile(join(site, 'cases.json'), JSON.stringify(CASES));
  if (dataDir !== undefined) await copyFile(join(dataDir, 'bert-vocab', 'vocab.txt'), join(site, 'vocab.txt'));
  await writeTinyCheckpoint(join(root, 'checkpoint'));
  if (dataDir !== undefined) await writeTinyPretrained(join(root, 'pretrained'), dataDir);
});

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  await rm(root, { recursive: true, force: true });
});

describe('browser bundle (esbuild, platform browser)', () => {
  it('bundles the five entry points with no Node built-in, native addon or Node-only part', () => {
    const inputs = Object.keys(metafile.inputs);
    for (const pkg of ['gpu-layers', 'checkpoints', 'grassmann-math', 'tokenizers', 'prng'])
      expect(inputs.some((p) => p.includes(`packages/${pkg}/dist/`))).toBe(true);
    expect(inputs.filter((p) => /node_modules\/(\.pnpm\/)?(tokenizers|webgpu|@tensorflow\+tfjs-node)/.test(p))).toEqual(
      [],
    );
    expect(inputs.filter((p) => p.endsWith('.node') || p.startsWith('node:'))).toEqual([]);
    for (const marker of NODE_ONLY_MARKERS) expect(bundleText.includes(marker), marker).toBe(false);
  });
});

describe.skipIf(skipBrowser || dataDir === undefined)('the packages in Chromium', () => {
  interface PageResult {
    error?: string;
    info: {
      name: string;
      reason: string;
      threads?: number;
      simd?: boolean;
      skipped: Array<{ name: string; reason: string }>;
    };
    isolated: boolean;
    cores: number;
    tensorNames: number;
    logitValues: number[];
    sampled: number[];
    pretrainedText: string;
    encoded: number[][];
    angles: number[];
    flow: Array<number | null>;
  }

  async function visit(query: string, isolated: boolean): Promise<{ result: PageResult; errors: string[] }> {
    const site = serve({
      root: join(root, 'site'),
      mounts: { '/checkpoint/': join(root, 'checkpoint'), '/pretrained/': join(root, 'pretrained') },
      isolated,
    });
    const server = await site;
    servers.push(server);
    browser ??= await openBrowser();
    const page = await browser.newPage();
    const errors = consoleErrors(page);
    await page.goto(`${server.url}?${query}`);
    const result = await pageResult<PageResult>(page);
    await page.close();
    return { result, errors };
  }

  it("runs on wasm from the served files with threads, and gives Node's logits, sampled ids and HF's WordPiece ids", async () => {
    const { result, errors } = await visit('', true);
    expect(result.error).toBeUndefined();
    expect(errors).toEqual([]);
    // Automatic selection: headless Chromium here has no WebGPU adapter, so wasm, with SIMD and threads.
    expect(result.info.name).toBe('wasm');
    expect(result.info.simd).toBe(true);
    expect(result.isolated).toBe(true);
    expect(result.info.threads).toBe(Math.min(8, result.cores));
    expect(result.info.reason).toMatch(/cross-origin isolated/);
    expect(result.info.skipped.map((s) => s.name)).toEqual(['webgpu']);
    expect(JSON.stringify(result.info)).not.toMatch(/npm rebuild|tfjs-node/);

    // Node: the same checkpoint on the wasm backend.
    await initBackend({ backend: 'wasm' });
    const { model } = await loadCheckpoint(join(root, 'checkpoint'));
    const ids = tf.tensor2d([[1, 2, 3, 4, 5, 6, 7, 8]], [1, 8], 'int32');
    const logits = model.forward(ids);
    const want = Array.from(await logits.data());
    tf.dispose([ids, logits]);
    expect(result.tensorNames).toBe(model.stateDict().size);
    expect(result.logitValues.length).toBe(want.length);
    const worst = want.reduce((m, w, k) => Math.max(m, Math.abs(w - (result.logitValues[k] as number))), 0);
    expect(worst).toBeLessThan(1e-4);
    const sampled: number[] = [];
    const prompt = Int32Array.from([5, 17, 42]);
    for await (const id of sampleIds(model, prompt, { maxTokens: 12, temperature: 0.8, topK: 7 }, new Prng(3)))
      sampled.push(id);
    model.dispose();
    expect(result.sampled).toEqual(sampled);

    // fromPretrained by URL: the text Node's fromPretrained gives from the folder
    const pretrained = await fromPretrained(join(root, 'pretrained'));
    const text = await pretrained.generate('the history of', { maxTokens: 8, seed: 5 });
    pretrained.dispose();
    expect(text.startsWith('the history of ')).toBe(true);
    expect(result.pretrainedText).toBe(text);

    const hf = WordPieceTokenizer.fromVocabFile(join(dataDir as string, 'bert-vocab', 'vocab.txt'));
    for (const [k, text] of CASES.entries())
      expect(result.encoded[k], text).toEqual(Array.from((await hf.encode(text)).ids));

    expect(result.angles[0]).toBeCloseTo(0, 6);
    expect(result.angles[1]).toBeCloseTo(Math.PI / 2, 6);
    expect(result.flow[2]).toBeCloseTo(90, 6);
  });

  it('says why: one thread without cross-origin isolation, cpu when the .wasm files are missing', async () => {
    const single = (await visit('only=backend', false)).result;
    expect(single.info.name).toBe('wasm');
    expect(single.info.threads).toBe(1);
    expect(single.info.reason).toMatch(/not cross-origin isolated .*Cross-Origin-Opener-Policy: same-origin/);
    const missing = (await visit('only=backend&wasm=/nowhere/', true)).result;
    expect(missing.info.name).toBe('cpu');
    const wasmSkip = missing.info.skipped.find((s) => s.name === 'wasm');
    expect(wasmSkip?.reason).toMatch(/\.wasm files .* were not found under \/nowhere\/.*wasmPaths/);
    expect(missing.info.reason).toMatch(/^cpu .*skipped webgpu .*wasm/);
  });
});

// fromPretrained: a saved pretrained folder as text in, text out — from the folder, and from a URL served on
// 127.0.0.1 (downloaded once into a cache, every file checked by its SHA-256; the browser's fetch version too).
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import {
  fromPretrained,
  isPretrainedExtra,
  loadCheckpoint,
  pretrainedCacheDir,
  readPretrainedTokenizer,
  savePretrained,
} from '@grassflow/gpu-layers';
import { fromPretrained as fetchPretrained } from '../src/io/pretrained-fetch.js';
import { TINY_TOKENIZER, tinyModel, useCpu, logitsOf } from './checkpoint-helpers.js';

const TOKENIZER = TINY_TOKENIZER;
const VOCAB = (TINY_TOKENIZER.files.get('vocab.txt') as string).trimEnd().split('\n');

let root: string;
let dir: string;
/** What the server serves, by file name (a test changes a file here to tamper with it). */
const served = new Map<string, Buffer>();
let requests: string[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-from-pretrained-'));
  dir = join(root, 'export');
  const model = tinyModel();
  await savePretrained(dir, model, { tokenizer: TOKENIZER, card: '# tiny\n\nTest perplexity: not measured.\n' });
  model.dispose();
  for (const name of await readdir(dir)) served.set(name, await readFile(join(dir, name)));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = served.get((req.url ?? '').replace(/^\/model\//, ''));
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/model/`;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(root, { recursive: true, force: true });
});

const OPTS = { maxTokens: 6, seed: 3 };

describe('fromPretrained from a folder', () => {
  it('returns the model, its tokenizer and generate/stream: the prompt and its continuation', async () => {
    const p = await fromPretrained(dir);
    try {
      expect(p.config.vocabSize).toBe(64);
      expect(p.tokenizer.encodePrompt('the history of')).toEqual(Int32Array.from([5, 6, 7]));
      const text = await p.generate('the history of', OPTS);
      expect(text.startsWith('the history of')).toBe(true);
      expect(text.length).toBeGreaterThan('the history of'.length);
      expect(await p.generate('the history of', OPTS)).toBe(text); // the seed fixes the text
      let streamed = '';
      for await (const piece of p.stream('the history of', OPTS)) streamed += piece;
      expect(streamed).toBe(text);
    } finally {
      p.dispose();
    }
  });

  it('refuses a folder whose vocab.txt is not the exported one, naming the file', async () => {
    const copy = join(root, 'edited');
    const model = tinyModel();
    await savePretrained(copy, model, { tokenizer: TOKENIZER, card: '' });
    model.dispose();
    await writeFile(join(copy, 'vocab.txt'), `${VOCAB.join('\n').replace('history', 'mystery')}\n`);
    await expect(fromPretrained(copy)).rejects.toThrow(/vocab\.txt has another SHA-256 .*refused/);
  });

  it('refuses an export whose config.json lost its `files` record (a byte flipped), in Node and in the browser loader', async () => {
    const copy = join(root, 'unrecorded');
    const model = tinyModel();
    await savePretrained(copy, model, { tokenizer: TOKENIZER, card: '' });
    model.dispose();
    const cfg = JSON.parse(await readFile(join(copy, 'config.json'), 'utf8')) as Record<string, unknown>;
    delete cfg['files'];
    await writeFile(join(copy, 'config.json'), JSON.stringify(cfg));
    const weights = await readFile(join(copy, 'model.safetensors'));
    weights[weights.length - 2] = (weights[weights.length - 2] as number) ^ 0x01; // the last weight, a little
    await writeFile(join(copy, 'model.safetensors'), weights);
    const refused = /records no size and SHA-256 for model\.safetensors .*trust: true/;
    await expect(fromPretrained(copy)).rejects.toThrow(refused);
    await expect(fromPretrained(copy)).rejects.toHaveProperty('code', 'UNVERIFIED');
    const { createServer: serve } = await import('node:http');
    const files = new Map<string, Buffer>();
    for (const name of await readdir(copy)) files.set(name, await readFile(join(copy, name)));
    const local = serve((req, res) => {
      const body = files.get((req.url ?? '').replace(/^\//, ''));
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((done) => local.listen(0, '127.0.0.1', done));
    try {
      const at = `http://127.0.0.1:${(local.address() as AddressInfo).port}/`;
      await expect(fetchPretrained(at)).rejects.toMatchObject({ code: 'UNVERIFIED' });
      const cacheDir = join(root, 'cache-unrecorded');
      await expect(fromPretrained(at, { cacheDir })).rejects.toThrow(refused);
      // with trust, the unrecorded weights are fetched (within their cap) and loaded, in both loaders
      for (const trusted of [
        await fetchPretrained(at, { trust: true }),
        await fromPretrained(at, { cacheDir, trust: true }),
      ]) {
        trusted.dispose();
      }
    } finally {
      await new Promise((done) => local.close(done));
    }
    const trusted = await fromPretrained(copy, { trust: true }); // loaded only when asked
    trusted.dispose();
  });
});

describe('fromPretrained of an installed model package, by its name', () => {
  it('finds the package in node_modules up the tree from resolveFrom, as Node would, and loads it', async () => {
    const project = join(root, 'project');
    const installed = join(project, 'node_modules', '@someone', 'tiny-lm');
    await cp(dir, installed, { recursive: true });
    await writeFile(join(installed, 'package.json'), JSON.stringify({ name: '@someone/tiny-lm', version: '1.0.0' }));
    const nested = join(project, 'src', 'deep');
    await mkdir(nested, { recursive: true });
    const byName = await fromPretrained('@someone/tiny-lm', { resolveFrom: nested });
    const byDir = await fromPretrained(dir);
    try {
      expect(byName.source).toBe(installed);
      expect(await byName.generate('the history of', OPTS)).toBe(await byDir.generate('the history of', OPTS));
    } finally {
      byName.dispose();
      byDir.dispose();
    }
  });

  it("finds it where pnpm installs it: node_modules/<name> a link into pnpm's store", async () => {
    const store = join(root, 'pnpm-project', 'node_modules', '.pnpm', '@someone+linked-lm@1.0.0', 'node_modules');
    const real = join(store, '@someone', 'linked-lm');
    await cp(dir, real, { recursive: true });
    const linked = join(root, 'pnpm-project', 'node_modules', '@someone', 'linked-lm');
    await mkdir(dirname(linked), { recursive: true });
    await symlink(real, linked, 'dir');
    const byName = await fromPretrained('@someone/linked-lm', { resolveFrom: join(root, 'pnpm-project') });
    try {
      expect(byName.source).toBe(linked);
      expect(await byName.generate('the history of', OPTS)).toMatch(/^the history of/);
    } finally {
      byName.dispose();
    }
  });

  it('refuses a name that is neither a folder nor installed, with both ways out', async () => {
    await expect(fromPretrained('@someone/absent-lm', { resolveFrom: root })).rejects.toThrow(
      /@someone\/absent-lm: no such folder, and no package of that name installed .*npm install @someone\/absent-lm/,
    );
  });
});

describe('fromPretrained sets a backend up itself', () => {
  it("in a fresh process without initBackend: initBackend's choice, and no tfjs 'install tfjs-node' banner", () => {
    const packageDir = resolve(__dirname, '..');
    const script = [
      `import * as tf from '@tensorflow/tfjs-core';`,
      `import { fromPretrained } from ${JSON.stringify(join(packageDir, 'src/index.ts'))};`,
      `const p = await fromPretrained(${JSON.stringify(dir)});`,
      `const text = await p.generate('the history of', { maxTokens: 3, seed: 1 });`,
      `p.dispose();`,
      `console.log(JSON.stringify({ backend: tf.getBackend(), text }));`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, GRASSFLOW_BACKEND: '', GRASSFLOW_WASM_THREADS: '1' },
    });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stderr).not.toMatch(/install our node backend|running TensorFlow\.js in Node/);
    const out = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as { backend: string; text: string };
    expect(out.backend).not.toBe('cpu'); // tfjs's own default, whose first tensor prints the banner
    expect(out.text.startsWith('the history of')).toBe(true);
  });
});

describe('fromPretrained from a URL (127.0.0.1)', () => {
  it('downloads config.json, then the files the loader needs (not the card), into the cache; a second call fetches config.json only', async () => {
    const cacheDir = join(root, 'cache');
    const local = await fromPretrained(dir);
    const expected = await local.generate('the history of', OPTS);
    local.dispose();
    requests = [];
    const first = await fromPretrained(url, { cacheDir });
    try {
      expect(await first.generate('the history of', OPTS)).toBe(expected);
      expect(first.source).toBe(url);
    } finally {
      first.dispose();
    }
    expect(requests[0]).toBe('/model/config.json');
    expect([...requests].sort()).toEqual(
      ['config.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.txt'].map((f) => `/model/${f}`),
    );
    const cached = pretrainedCacheDir(url, { cacheDir });
    expect(cached.startsWith(join(cacheDir, 'pretrained'))).toBe(true);
    // not the card, nor Hugging Face's tokenizer.json: the loader reads neither
    const unread = ['README.md', 'tokenizer.json'];
    expect((await readdir(cached)).sort()).toEqual((await readdir(dir)).filter((f) => !unread.includes(f)).sort());
    requests = [];
    const second = await fromPretrained(url, { cacheDir });
    expect(await second.generate('the history of', OPTS)).toBe(expected);
    second.dispose();
    expect(requests).toEqual(['/model/config.json']);
  });

  it('refuses a served file whose SHA-256 is not the recorded one, keeps nothing of it, and says what to do', async () => {
    const cacheDir = join(root, 'cache-tampered');
    const good = served.get('vocab.txt') as Buffer;
    served.set('vocab.txt', Buffer.from(good.toString('utf8').replace('history', 'mystery')));
    try {
      await expect(fromPretrained(url, { cacheDir })).rejects.toThrow(
        /vocab\.txt has another SHA-256 .*refused.*export the run again/,
      );
      expect(await readdir(pretrainedCacheDir(url, { cacheDir }))).not.toContain('vocab.txt');
      // the browser's loader (fetch + Web Crypto) refuses it the same way
      await expect(fetchPretrained(url)).rejects.toThrow(/vocab\.txt has another SHA-256 .*refused/);
    } finally {
      served.set('vocab.txt', good);
    }
  });

  it('the browser loader (fetch) gives the same text and never fetches the card', async () => {
    const local = await fromPretrained(dir);
    const expected = await local.generate('the history of', OPTS);
    local.dispose();
    requests = [];
    const p = await fetchPretrained(url);
    try {
      expect(await p.generate('the history of', OPTS)).toBe(expected);
    } finally {
      p.dispose();
    }
    expect(requests).not.toContain('/model/README.md');
    expect(requests[0]).toBe('/model/config.json');
  });

  it('says when the URL serves no pretrained folder', async () => {
    await expect(fromPretrained(url.replace('/model/', '/nothing/'), { cacheDir: join(root, 'c3') })).rejects.toThrow(
      /HTTP 404/,
    );
  });
});

describe('loadCheckpoint takes what the CLI takes: an export folder, its file: URL and its http URL', () => {
  it('loads the same weights from the folder, a file: URL and the served URL (downloaded into the cache)', async () => {
    const cacheDir = join(root, 'cache-load');
    const fromDir = await loadCheckpoint(dir);
    const fromFileUrl = await loadCheckpoint(pathToFileURL(dir).href);
    const fromUrl = await loadCheckpoint(url, { cacheDir });
    try {
      expect(fromUrl.dir).toBe(pretrainedCacheDir(url, { cacheDir }));
      expect(isPretrainedExtra(fromUrl.extra)).toBe(true);
      const want = logitsOf(fromDir.model);
      expect(logitsOf(fromFileUrl.model)).toEqual(want);
      expect(logitsOf(fromUrl.model)).toEqual(want);
    } finally {
      for (const l of [fromDir, fromFileUrl, fromUrl]) l.model.dispose();
    }
  });

  it('refuses a served model.safetensors that is not the exported one, in Node and in the browser loader', async () => {
    const good = served.get('model.safetensors') as Buffer;
    const bad = Buffer.from(good);
    bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 0xff; // one weight's last byte
    served.set('model.safetensors', bad);
    try {
      await expect(loadCheckpoint(url, { cacheDir: join(root, 'cache-bad-model') })).rejects.toThrow(
        /model\.safetensors has another SHA-256/,
      );
      await expect(fetchPretrained(url)).rejects.toThrow(/model\.safetensors/);
    } finally {
      served.set('model.safetensors', good);
    }
  });
});

describe('readPretrainedTokenizer: the tokenizer an export carries, from any reader', () => {
  const files = (): Map<string, Uint8Array> => new Map([...served].map(([k, v]) => [k, new Uint8Array(v)]));
  const extraOf = (): unknown =>
    (JSON.parse((served.get('config.json') as Buffer).toString('utf8')) as { extra: unknown }).extra;

  it("reads tokenizer_config.json and the files it names, and encodes as fromPretrained's tokenizer", async () => {
    const f = files();
    const read: string[] = [];
    const tok = await readPretrainedTokenizer(
      extraOf(),
      (name) => {
        read.push(name);
        return Promise.resolve(f.get(name) ?? new Uint8Array());
      },
      'picked',
    );
    expect(read).toEqual(['tokenizer_config.json', 'vocab.txt']);
    expect(tok.vocabSize).toBe(64);
    expect(tok.encodePrompt('the history of')).toEqual(Int32Array.from([5, 6, 7]));
  });

  it('refuses a file unlike its record, a file config.json does not record, and a checkpoint that is no export', async () => {
    const f = files();
    f.set('vocab.txt', new TextEncoder().encode(`${VOCAB.join('\n').replace('city', 'town')}\n`));
    await expect(
      readPretrainedTokenizer(extraOf(), (n) => Promise.resolve(f.get(n) ?? new Uint8Array()), 'p'),
    ).rejects.toThrow(/p: vocab\.txt has other bytes|p: vocab\.txt has another SHA-256/);
    const extra = extraOf() as { pretrained: { files: Record<string, unknown> } };
    delete extra.pretrained.files['vocab.txt'];
    const good = files();
    const reader = (n: string): Promise<Uint8Array> => Promise.resolve(good.get(n) ?? new Uint8Array());
    await expect(readPretrainedTokenizer(extra, reader, 'p')).rejects.toThrow(
      /records no vocab\.txt .*export the run again/,
    );
    // unverified, as loadPretrained allows for folders exported before the records
    expect((await readPretrainedTokenizer(extra, reader, 'p', { verifyChecksums: false })).vocabSize).toBe(64);
    expect(isPretrainedExtra({ step: 3 })).toBe(false);
    await expect(readPretrainedTokenizer({ step: 3 }, reader, 'ckpt')).rejects.toThrow(
      /ckpt is not a pretrained folder .*grassflow-lm export/,
    );
  });
});

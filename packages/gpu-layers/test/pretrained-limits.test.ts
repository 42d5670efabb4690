// An export loaded from a server on 127.0.0.1 that stalls and lies, and from folders whose config.json lies: the
// client sets every limit (an overall deadline, each file's size from its role and the parameters the config implies,
// a total, only the files the loader needs), memory is bounded before anything is built, and messages say what to do
// without printing a password. Node's downloader and the browser's fetch loader alike.
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fromPretrained,
  loadPretrained,
  savePretrained,
  WIKITEXT_WORDPIECE_PREPARATION,
  type PretrainedTokenizerFiles,
} from '@grassflow/gpu-layers';
import { fromPretrained as fetchPretrained } from '../src/io/pretrained-fetch.js';
import { tinyModel, useCpu } from './checkpoint-helpers.js';

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'history', 'of'];
while (VOCAB.length < 64) VOCAB.push(`w${VOCAB.length}`);
const TOKENIZER: PretrainedTokenizerFiles = {
  config: { kind: 'wordpiece', files: { vocab: 'vocab.txt' }, preparation: WIKITEXT_WORDPIECE_PREPARATION },
  files: new Map([['vocab.txt', `${VOCAB.join('\n')}\n`]]),
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let root: string;
let exported: string;
let server: Server;
let base: string;
/** Requests seen (path and query), and bytes sent by the hostile handlers. */
let requests: string[] = [];
let sent = 0;
/** Per folder prefix: file name → bytes or a handler. */
const sites = new Map<string, Map<string, Buffer | Handler>>();

function drip(res: ServerResponse, chunk: Buffer, ms: number): void {
  const tick = setInterval(() => {
    sent += chunk.length;
    res.write(chunk);
  }, ms);
  res.socket?.once('close', () => clearInterval(tick));
}

/** A copy of the export's files served under /NAME/, with `change` applied (file name → bytes or a handler). */
async function site(name: string, change: (files: Map<string, Buffer | Handler>) => void = () => undefined) {
  const files = new Map<string, Buffer | Handler>();
  for (const f of await readdir(exported)) files.set(f, await readFile(join(exported, f)));
  change(files);
  sites.set(name, files);
  return `${base}/${name}/`;
}

/** The parts of an export's config.json the tests edit. */
interface ExportConfig {
  model: Record<string, unknown>;
  files: Record<string, { bytes: number; sha256: string }>;
  extra: { pretrained: { files: Record<string, unknown> } };
}

/** config.json of the export, edited by `edit`. */
async function editedConfig(edit: (cfg: ExportConfig) => void): Promise<Buffer> {
  const cfg = JSON.parse(await readFile(join(exported, 'config.json'), 'utf8')) as ExportConfig;
  edit(cfg);
  return Buffer.from(JSON.stringify(cfg));
}

const record = (bytes: Buffer) => ({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

async function refusal(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-pretrained-limits-'));
  exported = join(root, 'export');
  const model = tinyModel();
  await savePretrained(exported, model, { tokenizer: TOKENIZER, card: '# tiny\n' });
  model.dispose();
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const [path = ''] = (req.url ?? '').split('?');
    const [, folder = '', name = ''] = path.split('/');
    const body = sites.get(folder)?.get(name);
    if (body === undefined) res.writeHead(404).end();
    else if (typeof body === 'function') body(req, res);
    else res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  await rm(root, { recursive: true, force: true });
});

describe('an overall deadline, whatever the server does', () => {
  const trickle: Handler = (_req, res) => {
    res.writeHead(200);
    res.write('x');
    drip(res, Buffer.from('x'), 2000); // 1 byte every 2 s: never idle long enough for an idle timeout
  };

  it('Node: a model.safetensors sent 1 byte every 2 s is given up at the deadline (option or environment)', async () => {
    const url = await site('trickle', (f) => f.set('model.safetensors', trickle));
    const cacheDir = join(root, 'cache-trickle');
    const err = await refusal(fromPretrained(url, { cacheDir, deadlineMs: 1500 }));
    expect(err.message).toMatch(/model\.safetensors did not arrive in time .*GRASSFLOW_DOWNLOAD_DEADLINE_S/);
    const env = { GRASSFLOW_DOWNLOAD_DEADLINE_S: '1.5' };
    const again = await refusal(fromPretrained(url, { cacheDir, env }));
    expect(again.message).toMatch(/did not finish within 1\.\d+ s/);
  });

  it('browser: the fetch loader gives up at its deadline instead of "Loading…" forever', async () => {
    const url = await site('trickle-page', (f) => f.set('vocab.txt', trickle));
    const err = await refusal(fetchPretrained(url, { deadlineMs: 1500 }));
    expect(err.message).toMatch(/vocab\.txt did not arrive within 1\.\d+ s .*stalled or too slow/);
  });
});

describe('sizes the client allows, not what the server records', () => {
  it('a model.safetensors recorded at 2^50 bytes is refused before it is fetched (Node and browser)', async () => {
    const config = await editedConfig((c) => {
      c.files['model.safetensors']!.bytes = 2 ** 50;
    });
    const url = await site('huge-record', (f) => f.set('config.json', config));
    requests = [];
    const err = await refusal(fromPretrained(url, { cacheDir: join(root, 'cache-huge') }));
    expect(err.message).toMatch(/records model\.safetensors as 1125899906842624 bytes, more than the \d+ it can have/);
    const page = await refusal(fetchPretrained(url));
    expect(page.message).toBe(err.message);
    expect(requests.filter((r) => r.includes('model.safetensors'))).toEqual([]);
  });

  it('a Content-Length of 3 GiB is refused before the body is read', async () => {
    const url = await site('huge-length', (f) =>
      f.set('vocab.txt', (_req, res) => {
        res.writeHead(200, { 'content-length': String(3 * 1024 ** 3) });
        drip(res, Buffer.alloc(64 * 1024), 5);
      }),
    );
    sent = 0;
    const err = await refusal(fromPretrained(url, { cacheDir: join(root, 'cache-length') }));
    expect(err.message).toMatch(/vocab\.txt has other bytes .*declares 3221225472 bytes/);
    const page = await refusal(fetchPretrained(url));
    expect(page.message).toMatch(/vocab\.txt is larger \(3221225472 bytes\)/);
    expect(sent).toBeLessThan(10 * 1024 * 1024);
  });

  it('the page stops reading an endless model.safetensors at its recorded size', async () => {
    const recorded = (await readFile(join(exported, 'model.safetensors'))).length;
    const url = await site('endless', (f) =>
      f.set('model.safetensors', (_req, res) => {
        res.writeHead(200);
        drip(res, Buffer.alloc(64 * 1024), 1);
      }),
    );
    const err = await refusal(fetchPretrained(url));
    expect(err.message).toContain(`model.safetensors is larger (more than ${recorded} bytes)`);
  });

  it('300 files config.json records but the loader does not need are never fetched, nor the card', async () => {
    const extraFiles: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) extraFiles[`junk${i}.bin`] = record(Buffer.from(`junk ${i}`));
    const config = await editedConfig((c) => Object.assign(c.extra.pretrained.files, extraFiles));
    const url = await site('unneeded', (f) => f.set('config.json', config));
    requests = [];
    const cacheDir = join(root, 'cache-junk');
    const p = await fromPretrained(url, { cacheDir });
    p.dispose();
    const q = await fetchPretrained(url);
    q.dispose();
    expect(requests.filter((r) => /junk|README/.test(r))).toEqual([]);
  });

  it('the files together within a total', async () => {
    const url = await site('total');
    const err = await refusal(fromPretrained(url, { cacheDir: join(root, 'cache-total'), maxTotalBytes: 1000 }));
    expect(err.message).toMatch(/records \d+ bytes of files to fetch, more than the 1000 allowed/);
  });

  it('a 20 MiB config.json is reported as too large', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024, ' ');
    const url = await site('big-config', (f) => f.set('config.json', big));
    const err = await refusal(fromPretrained(url, { cacheDir: join(root, 'cache-big') }));
    expect(err.message).toMatch(/config\.json is too large \(more than 1 MiB/);
    const folder = join(root, 'big-config');
    await cp(exported, folder, { recursive: true });
    await writeFile(join(folder, 'config.json'), big);
    expect((await refusal(loadPretrained(folder))).message).toMatch(/config\.json is too large/);
  });
});

describe('memory bounded before anything is built', () => {
  it('a config.json saying nLayers 20000 beside the weights of 2 layers is refused before the model is built', async () => {
    const folder = join(root, 'layers');
    await cp(exported, folder, { recursive: true });
    await writeFile(
      join(folder, 'config.json'),
      await editedConfig((c) => {
        c.model['nLayers'] = 20000;
        c.model['offsets'] = Array.from({ length: 20000 }, () => [1]);
      }),
    );
    const tensors = tf.memory().numTensors;
    const err = await refusal(loadPretrained(folder));
    expect(err.message).toMatch(/model\.safetensors holds \d+ values but its config\.json describes a model of \d+/);
    expect(tf.memory().numTensors).toBe(tensors);
  });

  it("a vocab.txt of more lines than the model's tokens, or above 8 MiB, is refused before a tokenizer is built", async () => {
    const folder = join(root, 'vocab');
    await cp(exported, folder, { recursive: true });
    const write = async (vocab: Buffer) => {
      await writeFile(join(folder, 'vocab.txt'), vocab);
      await writeFile(
        join(folder, 'config.json'),
        await editedConfig((c) => {
          c.extra.pretrained.files['vocab.txt'] = record(vocab);
        }),
      );
    };
    await write(Buffer.from(`${Array.from({ length: 200_000 }, (_, i) => `t${i}`).join('\n')}\n`));
    expect((await refusal(fromPretrained(folder))).message).toMatch(
      /vocab\.txt has 200000 lines, more than the model's 64 tokens/,
    );
    await write(Buffer.alloc(9 * 1024 * 1024, 'a'));
    expect((await refusal(loadPretrained(folder))).message).toMatch(/vocab\.txt is larger than the 8388608 bytes/);
  });
});

describe('messages', () => {
  it('a URL with ?query is the folder it names, the query kept for each file, never its parent', async () => {
    const url = await site('query');
    requests = [];
    const p = await fromPretrained(`${base}/query?token=abc`, { cacheDir: join(root, 'cache-query') });
    p.dispose();
    expect(requests[0]).toBe('/query/config.json?token=abc');
    expect(requests.every((r) => r.startsWith('/query/'))).toBe(true);
    expect(p.source).toBe(url);
  });

  it("a URL's password is never printed", async () => {
    const url = `${base.replace('//', '//me:hunter2@')}/nowhere/`;
    const err = await refusal(fromPretrained(url, { cacheDir: join(root, 'cache-password') }));
    expect(err.message).toContain('***@127.0.0.1');
    expect(err.message).not.toContain('hunter2');
    const page = await refusal(fetchPretrained(url, { fetch: (u, init) => fetch(u.replace('me:hunter2@', ''), init) }));
    expect(page.message).not.toContain('hunter2');
  });

  it('a cache folder that cannot be made names GRASSFLOW_CACHE_DIR, under /proc without hanging', async () => {
    const url = await site('cache');
    const proc = await refusal(fromPretrained(url, { env: { GRASSFLOW_CACHE_DIR: '/proc/grassflow-x' } }));
    expect(proc.message).toMatch(/from GRASSFLOW_CACHE_DIR\).*proc file system.*set GRASSFLOW_CACHE_DIR to a writable/);
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    const blocked = await refusal(fromPretrained(url, { env: { GRASSFLOW_CACHE_DIR: file } }));
    expect(blocked.message).toMatch(/download cache .*a-file \(from GRASSFLOW_CACHE_DIR\).*is not a folder/);
    expect(blocked.message).not.toContain('GRASSFLOW_DATA_DIR');
  });

  it('loadPretrained and fromPretrained take a file: URL as the folder it names', async () => {
    const loaded = await loadPretrained(pathToFileURL(exported).href);
    loaded.model.dispose();
    expect(loaded.dir).toBe(exported);
  });
});

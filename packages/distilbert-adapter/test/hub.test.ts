// Model ids: download through @grassflow/checkpoints' downloadFile from a local hub, cache, integrity, offline.
import * as tf from '@tensorflow/tfjs-core';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CACHE_MANIFEST,
  DistilBertError,
  hubFileUrl,
  hubRepoOf,
  hubSettings,
  loadDistilBert,
  resolveModelFiles,
  type LoadDistilBertOptions,
} from '@grassflow/distilbert-adapter';
import { startHub, type HubServer } from './helpers/hub-server.js';
import { makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { writeTinyModel, type TinyModel } from './helpers/tiny-model.js';

const REPO_PATH = '/distilbert/distilbert-base-uncased/resolve/main';
const FILES = ['config.json', 'vocab.txt', 'model.safetensors'];

let root: string;
let hub: HubServer;
let tiny: TinyModel;
let cacheDir: string;
let n = 0;
const bytes = new Map<string, Uint8Array>();

function serveAt(prefix: string): void {
  for (const f of FILES) hub.files.set(`${prefix}/${f}`, bytes.get(f) as Uint8Array);
}

/** Options for a load against the local hub: fresh cache, no published hashes (the tiny vocab is not BERT's). */
function opts(extra: LoadDistilBertOptions = {}): LoadDistilBertOptions {
  return { cacheDir, mirror: hub.base, knownSha256: {}, env: {}, ...extra };
}

function outputOf(enc: { forward: (ids: { data: Int32Array; shape: [number, number] }) => tf.Tensor }): Float32Array {
  const out = enc.forward({ data: Int32Array.from([2, 6, 8, 9, 3]), shape: [1, 5] });
  const v = out.dataSync() as Float32Array;
  out.dispose();
  return v;
}

beforeAll(async () => {
  await useBackend('cpu');
  root = await makeTemp('hub');
  tiny = await writeTinyModel(join(root, 'tiny'));
  for (const f of FILES) bytes.set(f, new Uint8Array(await readFile(join(tiny.dir, f))));
  hub = await startHub();
});
afterAll(async () => {
  await hub.close();
  await removeTemp(root);
});
beforeEach(() => {
  cacheDir = join(root, `cache${n++}`);
  hub.files.clear();
  hub.truncate.clear();
  hub.requests.length = 0;
  serveAt(REPO_PATH);
});

describe('model ids', () => {
  it('repository and URL of an id, with mirrors', () => {
    expect(hubRepoOf('distilbert-base-uncased')).toBe('distilbert/distilbert-base-uncased');
    expect(hubRepoOf('distilbert/distilbert-base-uncased')).toBe('distilbert/distilbert-base-uncased');
    expect(hubRepoOf('someone/my-model')).toBe('someone/my-model');
    expect(() => hubRepoOf('a/b/c')).toThrow(/neither an existing folder nor a Hugging Face model id/);
    expect(hubFileUrl('distilbert/distilbert-base-uncased', 'main', 'vocab.txt', { env: {} })).toBe(
      'https://huggingface.co/distilbert/distilbert-base-uncased/resolve/main/vocab.txt',
    );
    expect(hubFileUrl('o/m', 'refs/pr/1', 'config.json', { env: { HF_ENDPOINT: 'http://h:1/' } })).toBe(
      'http://h:1/o/m/resolve/refs%2Fpr%2F1/config.json',
    );
    expect(hubFileUrl('o/m', 'main', 'config.json', { env: { GRASSFLOW_MIRROR: 'http://m' } })).toBe(
      'http://m/huggingface.co/o/m/resolve/main/config.json',
    );
  });
});

describe('download, cache, integrity', () => {
  it('downloads the three files into <cache>/models/<id>/<revision>/, then loads from the cache without the network', async () => {
    const enc = await loadDistilBert('distilbert-base-uncased', opts());
    const dir = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main');
    expect(enc.info).toMatchObject({
      source: 'download',
      dir,
      repo: 'distilbert/distilbert-base-uncased',
      revision: 'main',
    });
    expect(hub.requests).toEqual(FILES.map((f) => `${REPO_PATH}/${f}`));
    expect((await readdir(dir)).sort()).toEqual([CACHE_MANIFEST, ...FILES].sort());
    const manifest = JSON.parse(await readFile(join(dir, CACHE_MANIFEST), 'utf8')) as {
      files: Record<string, { bytes: number; sha256: string }>;
    };
    expect(manifest.files['model.safetensors']?.bytes).toBe(bytes.get('model.safetensors')?.byteLength);
    expect(manifest.files['model.safetensors']?.sha256).toMatch(/^[0-9a-f]{64}$/);

    const local = await loadDistilBert(tiny.dir);
    expect(outputOf(enc)).toEqual(outputOf(local));
    local.dispose();
    enc.dispose();

    hub.requests.length = 0;
    // unreachable: the cache must suffice
    const again = await loadDistilBert('distilbert/distilbert-base-uncased', opts({ mirror: 'http://127.0.0.1:9' }));
    expect(again.info.source).toBe('cache');
    expect(hub.requests).toEqual([]);
    again.dispose();
  });

  it('a revision is its own URL and cache folder', async () => {
    serveAt('/distilbert/distilbert-base-uncased/resolve/v1.0');
    const files = await resolveModelFiles('distilbert-base-uncased', opts({ revision: 'v1.0' }));
    expect(files.dir).toBe(join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'v1.0'));
    expect(hub.requests[0]).toBe('/distilbert/distilbert-base-uncased/resolve/v1.0/config.json');
  });

  it('GRASSFLOW_MIRROR as in @grassflow/datasets: <mirror>/huggingface.co/<path>', async () => {
    serveAt(`/huggingface.co${REPO_PATH}`);
    const files = await resolveModelFiles('distilbert-base-uncased', {
      cacheDir,
      knownSha256: {},
      env: { GRASSFLOW_MIRROR: hub.base },
    });
    expect(files.source).toBe('download');
    expect(hub.requests[0]).toBe(`/huggingface.co${REPO_PATH}/config.json`);
  });

  it('the published SHA-256 of vocab.txt is enforced: a different vocab is refused and not kept', async () => {
    const err = (await loadDistilBert('distilbert-base-uncased', opts({ knownSha256: undefined })).catch(
      (e: unknown) => e,
    )) as DistilBertError;
    expect(err).toBeInstanceOf(DistilBertError);
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.message).toContain(
      'differs from the expected 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
    );
    const dir = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main');
    expect((await readdir(dir)).sort()).toEqual(['config.json']); // no vocab.txt, no temp file, no manifest
  });

  it('a truncated download and a corrupt safetensors body fail and leave nothing behind', async () => {
    hub.truncate.add(`${REPO_PATH}/model.safetensors`);
    const cut = (await loadDistilBert('distilbert-base-uncased', opts()).catch((e: unknown) => e)) as DistilBertError;
    expect(cut.code).toBe('DOWNLOAD_FAILED');
    expect(cut.message).toMatch(/truncated/);
    hub.truncate.clear();
    const garbage = new Uint8Array(bytes.get('model.safetensors') as Uint8Array);
    garbage.fill(0xff, 0, 8); // header length field → absurd
    hub.files.set(`${REPO_PATH}/model.safetensors`, garbage);
    const bad = (await loadDistilBert('distilbert-base-uncased', opts()).catch((e: unknown) => e)) as DistilBertError;
    expect(bad.code).toBe('CORRUPT_FILE');
    expect(bad.message).toMatch(/model\.safetensors is not a valid safetensors file/);
    const dir = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main');
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'vocab.txt']);
  });

  it('a cached file damaged later is detected by the manifest: re-downloaded online, an error offline', async () => {
    (await loadDistilBert('distilbert-base-uncased', opts())).dispose();
    const path = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main', 'model.safetensors');
    const damaged = new Uint8Array(await readFile(path));
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] as number) ^ 0x10; // same size, one weight changed
    await writeFile(path, damaged);
    const offline = (await loadDistilBert('distilbert-base-uncased', opts({ localFilesOnly: true })).catch(
      (e: unknown) => e,
    )) as DistilBertError;
    expect(offline.code).toBe('CORRUPT_FILE');
    expect(offline.message).toMatch(/does not match the cache manifest/);
    hub.requests.length = 0;
    const enc = await loadDistilBert('distilbert-base-uncased', opts());
    expect(hub.requests).toEqual([`${REPO_PATH}/model.safetensors`]);
    expect(new Uint8Array(await readFile(path))).toEqual(bytes.get('model.safetensors'));
    enc.dispose();
  });

  it('files placed by hand are validated and recorded', async () => {
    const dir = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main');
    await resolveModelFiles('distilbert-base-uncased', opts());
    await writeFile(join(dir, CACHE_MANIFEST), '{}'); // lost manifest: files count as placed by hand
    hub.requests.length = 0;
    const files = await resolveModelFiles('distilbert-base-uncased', opts({ localFilesOnly: true }));
    expect(files.source).toBe('cache');
    expect(files.weightsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(hub.requests).toEqual([]);
  });
});

describe('offline', () => {
  it('GRASSFLOW_OFFLINE=1 or localFilesOnly: which files to place where', async () => {
    for (const o of [opts({ env: { GRASSFLOW_OFFLINE: '1' } }), opts({ localFilesOnly: true })]) {
      const err = (await loadDistilBert('distilbert-base-uncased', o).catch((e: unknown) => e)) as DistilBertError;
      expect(err.code).toBe('OFFLINE');
      const dir = join(cacheDir, 'models', 'distilbert', 'distilbert-base-uncased', 'main');
      for (const f of FILES) expect(err.message).toContain(`${hub.base}${REPO_PATH}/${f} → ${join(dir, f)}`);
      expect(err.message).toMatch(
        /or pass the path of a folder that holds config\.json, vocab\.txt and model\.safetensors/,
      );
    }
    expect(hub.requests).toEqual([]);
    await expect(stat(cacheDir)).rejects.toThrow(); // nothing created
  });

  it('the settings object is the default, per-call options override it', async () => {
    hubSettings.localFilesOnly = true;
    try {
      await expect(loadDistilBert('distilbert-base-uncased', opts())).rejects.toMatchObject({ code: 'OFFLINE' });
      const enc = await loadDistilBert('distilbert-base-uncased', opts({ localFilesOnly: false }));
      expect(enc.info.source).toBe('download');
      enc.dispose();
    } finally {
      delete hubSettings.localFilesOnly;
    }
  });

  it('a network error says which files to place where', async () => {
    const err = (await loadDistilBert('distilbert-base-uncased', opts({ mirror: 'http://127.0.0.1:9' })).catch(
      (e: unknown) => e,
    )) as DistilBertError;
    expect(err.code).toBe('DOWNLOAD_FAILED');
    expect(err.message).toContain('Could not get config.json');
    expect(err.message).toContain('To provide the model by hand, download:');
  });

  it('an explicit folder wins and never touches the network or the cache', async () => {
    const enc = await loadDistilBert(tiny.dir, opts({ mirror: 'http://127.0.0.1:9' }));
    expect(enc.info.source).toBe('folder');
    enc.dispose();
    await expect(stat(cacheDir)).rejects.toThrow();
  });
});

// forwardCached: per-example features on disk, keyed by model identity + ids; hits, misses, corrupt entries.
import * as tf from '@tensorflow/tfjs-core';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDistilBert, type DistilBertEncoder } from '@grassflow/distilbert-adapter';
import { maxAbsDiff } from './helpers/reference.js';
import { flat, makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { writeTinyModel } from './helpers/tiny-model.js';

const IDS = [
  [2, 6, 8, 9, 5, 11, 3],
  [2, 7, 14, 23, 3, 0, 0],
  [2, 32, 0, 33, 3, 0, 0], // an interior padded position
];
const MASK = [
  [1, 1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 0, 0],
  [1, 1, 0, 1, 1, 0, 0],
];
const LENGTHS = [7, 5, 5];
const ids = { data: flat(IDS), shape: [3, 7] as [number, number] };
const mask = { data: flat(MASK), shape: [3, 7] as [number, number] };

let root: string;
let featDir: string;
let enc: DistilBertEncoder;
let direct: Float32Array;

async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out.sort();
}

/** Checks cached output: equal to forward() on each example's positions < n, 0 after. */
function checkAgainstDirect(v: Float32Array): void {
  for (let b = 0; b < 3; b++) {
    const n = LENGTHS[b] as number;
    const row = (x: Float32Array, from: number, to: number): Float32Array =>
      x.subarray((b * 7 + from) * 32, (b * 7 + to) * 32);
    expect(maxAbsDiff(row(v, 0, n), row(direct, 0, n))).toBeLessThan(1e-6);
    expect(row(v, n, 7).every((x) => x === 0)).toBe(true);
  }
}

beforeAll(async () => {
  await useBackend('cpu');
  root = await makeTemp('features');
  featDir = join(root, 'features');
  const m = await writeTinyModel(join(root, 'tiny'));
  enc = await loadDistilBert(m.dir, { featureCache: featDir });
  const out = enc.forward(ids, mask);
  direct = out.dataSync() as Float32Array;
  out.dispose();
});
afterAll(async () => {
  enc.dispose();
  await removeTemp(root);
});

describe('feature cache', () => {
  it('miss, then hit, with the values of forward()', async () => {
    const first = await enc.forwardCached(ids, mask);
    expect([first.hits, first.misses, first.corrupt]).toEqual([0, 3, 0]);
    checkAgainstDirect(first.lastHiddenState.dataSync() as Float32Array);
    first.lastHiddenState.dispose();
    expect(await entries(featDir)).toHaveLength(3);

    const before = tf.memory().numTensors;
    const second = await enc.forwardCached(ids, mask);
    expect([second.hits, second.misses, second.corrupt]).toEqual([3, 0, 0]);
    checkAgainstDirect(second.lastHiddenState.dataSync() as Float32Array);
    second.lastHiddenState.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('an example is found whatever the padding of its batch', async () => {
    const one = await enc.forwardCached({ data: Int32Array.from([2, 7, 14, 23, 3]), shape: [1, 5] });
    expect([one.hits, one.misses]).toEqual([1, 0]);
    one.lastHiddenState.dispose();
  });

  it('corrupt entries (flipped byte, truncated, wrong ids) are detected and recomputed', async () => {
    const files = await entries(featDir);
    const a = new Uint8Array(await readFile(files[0] as string));
    a[200] = (a[200] as number) ^ 1;
    await writeFile(files[0] as string, a);
    await writeFile(files[1] as string, (await readFile(files[1] as string)).subarray(0, 100));
    const r = await enc.forwardCached(ids, mask);
    expect([r.hits, r.misses, r.corrupt]).toEqual([1, 0, 2]);
    checkAgainstDirect(r.lastHiddenState.dataSync() as Float32Array);
    r.lastHiddenState.dispose();
    const again = await enc.forwardCached(ids, mask); // rewritten entries are good
    expect([again.hits, again.corrupt]).toEqual([3, 0]);
    again.lastHiddenState.dispose();
    expect((await entries(featDir)).filter((f) => f.includes('.tmp'))).toEqual([]); // atomic writes leave no temp file
  });

  it('another model (other weights) does not see these features', async () => {
    const other = await writeTinyModel(join(root, 'other'), { seed: 2 });
    const enc2 = await loadDistilBert(other.dir, { featureCache: featDir });
    const r = await enc2.forwardCached(ids, mask);
    expect([r.hits, r.misses]).toEqual([0, 3]);
    r.lastHiddenState.dispose();
    enc2.dispose();
  });

  it('forwardCached without a cache, or trainable, is refused', async () => {
    const m = await writeTinyModel(join(root, 'plain'));
    const plain = await loadDistilBert(m.dir);
    await expect(plain.forwardCached(ids, mask)).rejects.toMatchObject({ code: 'NO_FEATURE_CACHE' });
    plain.dispose();
  });
});

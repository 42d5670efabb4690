// A frozen formatVersion 1 checkpoint (test/fixtures/checkpoint-v1-tiny, written once by this package):
// it must keep loading, and re-saving it must reproduce its files byte for byte. If this test fails,
// the on-disk format changed: bump CHECKPOINT_FORMAT_VERSION and keep a reader for version 1.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint, saveCheckpoint } from '@grassflow/gpu-layers';
import { readSafetensorsHeader } from '@grassflow/checkpoints';
import { useCpu } from './checkpoint-helpers.js';

const fixture = fileURLToPath(new URL('./fixtures/checkpoint-v1-tiny', import.meta.url));
let out: string;

beforeAll(async () => {
  await useCpu();
  out = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-fixture-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('formatVersion 1 fixture', () => {
  it('loads: config, extra JSON and extra tensors as written', async () => {
    const loaded = await loadCheckpoint(fixture);
    expect(loaded.formatVersion).toBe(1);
    expect(loaded.config).toEqual({
      kind: 'grassmann',
      attention: 'dpa',
      vocabSize: 64,
      dModel: 16,
      nLayers: 2,
      dFF: 64,
      maxLen: 16,
      r: 4,
      offsets: [[1], [2]],
      eps: 1e-6,
      nHeads: 2,
      norm: 'pre',
      dropout: 0.1,
    });
    expect(loaded.extra).toEqual({ step: 42, note: 'formatVersion 1 fixture' });
    expect(Array.from(loaded.extraTensors.get('adam.m.example')!.dataSync())).toEqual([0.5, -0.25, Math.fround(1e-3)]);
    expect(loaded.extraTensors.get('adam.step')!.dtype).toBe('int32');
    expect(Array.from(loaded.extraTensors.get('adam.step')!.dataSync())).toEqual([42]);
    const ids = tf.tensor2d([[1, 2, 3]], [1, 3], 'int32');
    const logits = loaded.model.forward(ids);
    expect(logits.shape).toEqual([1, 3, 64]);
    expect(Array.from(logits.dataSync()).every(Number.isFinite)).toBe(true);
    for (const t of [ids, logits, ...loaded.extraTensors.values()]) t.dispose();
    loaded.model.dispose();
  });

  it('re-saving the loaded checkpoint reproduces every file byte for byte', async () => {
    const loaded = await loadCheckpoint(fixture);
    const dir = join(out, 'resaved');
    await saveCheckpoint(dir, loaded.model, { extra: loaded.extra, extraTensors: loaded.extraTensors });
    for (const name of ['config.json', 'model.safetensors', 'extra.safetensors']) {
      const [a, b] = await Promise.all([readFile(join(fixture, name)), readFile(join(dir, name))]);
      expect(Buffer.compare(a, b), name).toBe(0);
    }
    for (const t of loaded.extraTensors.values()) t.dispose();
    loaded.model.dispose();
  });

  it('model.safetensors: header as the reference writer lays it out', async () => {
    const bytes = new Uint8Array(await readFile(join(fixture, 'model.safetensors')));
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    const json = Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8');
    expect(n % 8).toBe(0);
    expect(
      json.startsWith(
        '{"__metadata__":{"format":"pt","grassflow.format":"grassflow-checkpoint","grassflow.formatVersion":"1","grassflow.kind":"grassmann"},' +
          '"blocks.0.ffn.fc1.bias":{"dtype":"F32","shape":[64],"data_offsets":[0,256]},' +
          '"blocks.0.ffn.fc1.weight":{"dtype":"F32","shape":[64,16],"data_offsets":[256,4352]}',
      ),
    ).toBe(true);
    const names = readSafetensorsHeader(bytes).tensors.map((t) => t.name);
    expect(names).toEqual([...names].sort()); // one dtype: sorted by name
    expect(names).toContain('ln_f.weight');
  });
});

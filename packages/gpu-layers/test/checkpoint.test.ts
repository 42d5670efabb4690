// Checkpoint round trips: identical logits after save → load, the on-disk layout, extra JSON and tensors.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModel, loadCheckpoint, saveCheckpoint } from '@grassflow/gpu-layers';
import { readSafetensorsFile, safetensorsValues } from '@grassflow/checkpoints';
import { logitsOf, tinyConfig, tinyModel, useCpu } from './checkpoint-helpers.js';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('save → load gives the same model', () => {
  const variants = [
    { kind: 'grassmann', norm: 'post' },
    { kind: 'grassmann', norm: 'pre' },
    { kind: 'transformer', norm: 'post', attention: 'dpa' },
    { kind: 'transformer', norm: 'pre', attention: 'ea' },
  ] as const;

  it.each(variants)('%o: identical logits, no leaked tensors', async (overrides) => {
    const dir = join(root, `rt-${overrides.kind}-${overrides.norm}`);
    const model = tinyModel(overrides, 7);
    const before = logitsOf(model);
    await saveCheckpoint(dir, model, { extra: { step: 1234 } });

    const loaded = await loadCheckpoint(dir);
    expect(loaded.config).toEqual(model.config);
    expect(loaded.recovered).toBe(false);
    expect(loaded.extra).toEqual({ step: 1234 });
    expect(logitsOf(loaded.model)).toEqual(before); // bit-identical
    loaded.model.dispose();

    // A fresh model of the same config differs: the equality above comes from the loaded weights.
    const fresh = createModel(tinyConfig(overrides), { seed: 8 });
    expect(logitsOf(fresh)).not.toEqual(before);
    fresh.dispose();

    // The loader frees everything it allocates: it leaves behind only what a bare
    // createModel + dispose leaves (the model's own business, not the loader's).
    let count = tf.memory().numTensors;
    createModel(tinyConfig(overrides)).dispose();
    const modelLeak = tf.memory().numTensors - count;
    count = tf.memory().numTensors;
    (await loadCheckpoint(dir)).model.dispose();
    expect(tf.memory().numTensors - count).toBe(modelLeak);
    model.dispose();
  });

  it('saving over an existing checkpoint replaces it and leaves no temp folders', async () => {
    const dir = join(root, 'overwrite');
    const a = tinyModel({}, 1);
    const b = tinyModel({}, 2);
    await saveCheckpoint(dir, a, { extra: { step: 1 } });
    await saveCheckpoint(dir, b, { extra: { step: 2 } });
    const loaded = await loadCheckpoint(dir);
    expect(loaded.extra).toEqual({ step: 2 });
    expect(logitsOf(loaded.model)).toEqual(logitsOf(b));
    expect((await readdir(root)).filter((n) => n.startsWith('overwrite'))).toEqual(['overwrite']);
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'model.safetensors']);
    for (const m of [a, b, loaded.model]) m.dispose();
  });
});

describe('the on-disk format', () => {
  it('config.json: format marker, version, the model config fields, file records, extra', async () => {
    const dir = join(root, 'layout');
    const model = tinyModel({ kind: 'grassmann' }, 3);
    const saved = await saveCheckpoint(dir, model, {
      extra: { step: 10, bestValLoss: 3.25, note: 'ünïcode', nested: { lr: [1e-4, null] } },
    });
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toEqual(saved.config);
    expect(config['format']).toBe('grassflow-checkpoint');
    expect(config['formatVersion']).toBe(1);
    // a Grassmann model's config has the Grassmann fields only (no attention, nHeads), in the fields' fixed order
    expect(Object.keys(config['model'] as object)).toEqual([
      'kind',
      'vocabSize',
      'dModel',
      'nLayers',
      'dFF',
      'maxLen',
      'r',
      'offsets',
      'eps',
      'norm',
      'dropout',
    ]);
    expect(config['model']).toEqual(model.config);
    expect(config['extra']).toEqual({ step: 10, bestValLoss: 3.25, note: 'ünïcode', nested: { lr: [1e-4, null] } });
    const bytes = await readFile(join(dir, 'model.safetensors'));
    expect(config['files']).toEqual({
      'model.safetensors': { bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') },
    });
    model.dispose();
  });

  it('model.safetensors: every state-dict tensor as F32 under its PyTorch name, with format metadata', async () => {
    const dir = join(root, 'layout-st');
    const model = tinyModel({ kind: 'transformer', norm: 'pre' }, 4);
    await saveCheckpoint(dir, model);
    const { tensors, metadata } = await readSafetensorsFile(join(dir, 'model.safetensors'));
    expect(metadata).toEqual({
      format: 'pt',
      'grassflow.format': 'grassflow-checkpoint',
      'grassflow.formatVersion': '1',
      'grassflow.kind': 'transformer',
    });
    const dict = model.stateDict();
    expect([...tensors.keys()].sort()).toEqual([...dict.keys()].sort());
    expect(tensors.has('blocks.0.mixer.qkv.weight')).toBe(true);
    expect(tensors.has('ln_f.weight')).toBe(true);
    expect(tensors.get('blocks.1.ffn.fc1.weight')?.shape).toEqual([64, 16]); // nn.Linear [out = d_ff, in = d]
    for (const [name, t] of dict) {
      const stored = tensors.get(name)!;
      expect(stored.dtype).toBe('F32');
      expect(stored.shape).toEqual(t.shape);
      expect(Array.from(safetensorsValues(stored) as Float32Array)).toEqual(Array.from(t.dataSync()));
      t.dispose();
    }
    model.dispose();
  });

  it('extra tensors (float32, int32, bool) round-trip through extra.safetensors', async () => {
    const dir = join(root, 'extra-tensors');
    const model = tinyModel({}, 5);
    const m = tf.tensor2d([
      [0.5, -1],
      [2, 3e-8],
    ]);
    const count = tf.tensor1d([7, -3], 'int32');
    const flag = tf.tensor1d([true, false, true], 'bool');
    const scalar = tf.scalar(0.125);
    await saveCheckpoint(dir, model, {
      extra: { optimizer: 'adamw', step: 3 },
      extraTensors: new Map<string, tf.Tensor>([
        ['adam.m.tok_emb.weight', m],
        ['adam.count', count],
        ['mask', flag],
        ['adam.beta1_power', scalar],
      ]),
    });
    expect(m.isDisposed).toBe(false); // the caller keeps its tensors
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'extra.safetensors', 'model.safetensors']);

    const loaded = await loadCheckpoint(dir);
    const got = loaded.extraTensors;
    expect([...got.keys()].sort()).toEqual(['adam.beta1_power', 'adam.count', 'adam.m.tok_emb.weight', 'mask']);
    expect(got.get('adam.m.tok_emb.weight')!.dtype).toBe('float32');
    expect(got.get('adam.m.tok_emb.weight')!.shape).toEqual([2, 2]);
    expect(Array.from(got.get('adam.m.tok_emb.weight')!.dataSync())).toEqual(Array.from(m.dataSync()));
    expect(got.get('adam.count')!.dtype).toBe('int32');
    expect(Array.from(got.get('adam.count')!.dataSync())).toEqual([7, -3]);
    expect(got.get('mask')!.dtype).toBe('bool');
    expect(Array.from(got.get('mask')!.dataSync())).toEqual([1, 0, 1]);
    expect(got.get('adam.beta1_power')!.shape).toEqual([]);
    expect(loaded.extra).toEqual({ optimizer: 'adamw', step: 3 });
    for (const t of [...got.values(), m, count, flag, scalar]) t.dispose();
    loaded.model.dispose();
    model.dispose();
  });

  it('a checkpoint without file records is refused, and loads (said to be unverified) only when trusted', async () => {
    const dir = join(root, 'handmade');
    const model = tinyModel({}, 6);
    await saveCheckpoint(dir, model);
    const { editConfig } = await import('./checkpoint-helpers.js');
    await editConfig(dir, (c) => {
      delete c['files'];
      delete c['extra'];
    });
    await expect(loadCheckpoint(dir)).rejects.toThrow(
      /records no size and SHA-256 for model\.safetensors .*trust: true/,
    );
    await expect(loadCheckpoint(dir)).rejects.toHaveProperty('code', 'UNVERIFIED');
    const loaded = await loadCheckpoint(dir, { trust: true });
    expect(logitsOf(loaded.model)).toEqual(logitsOf(model));
    expect(loaded.extra).toEqual({});
    expect(loaded.unverified).toEqual(['model.safetensors']); // loaded, and said to be unverified
    loaded.model.dispose();
    model.dispose();
  });
});

// Any tfjs model as safetensors: named tensors in and out, a model's weights, and model.save /
// tf.loadLayersModel through safetensorsHandler with CausalGrassmannMixing inside.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assignWeights,
  CausalGrassmannMixing,
  CheckpointError,
  loadWeights,
  namedWeights,
  safetensorsHandler,
  saveCheckpoint,
  saveWeights,
  TFJS_SAFETENSORS_FORMAT,
  WeightsIOError,
  type LanguageModel,
} from '@grassflow/gpu-layers';
import { readSafetensorsFile, writeSafetensorsFile } from '@grassflow/checkpoints';
import { useCpu } from './checkpoint-helpers.js';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-weights-io-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** tf.sequential: CausalGrassmannMixing then a dense layer, [B, 6, 8] → [B, 6, 3]. */
function userModel(prefix: string, seed: number): tfl.Sequential {
  const model = tfl.sequential({
    layers: [
      new CausalGrassmannMixing({ r: 4, offsets: [1, 2], seed, inputShape: [6, 8], name: `${prefix}_mix` }),
      tfl.layers.dense({ units: 3, name: `${prefix}_head` }),
    ],
  });
  // Non-default weights everywhere (the dense bias starts at zero, the gate at its init).
  model.setWeights(
    model.weights.map((w, k) => tf.randomNormal(w.shape as number[], 0, 0.5, 'float32', 100 * seed + k)),
  );
  return model;
}

const input = (): tf.Tensor3D => tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 7);

function predict(model: tfl.LayersModel): Float32Array {
  return tf.tidy(() => (model.predict(input()) as tf.Tensor).dataSync() as Float32Array);
}

describe('saveWeights / loadWeights: named tensors', () => {
  it('round-trips float32 and int32 tensors under their names, shapes, dtypes and values', async () => {
    const path = join(root, 'named.safetensors');
    const w = tf.tensor2d([
      [1.5, -2],
      [0.25, 3],
    ]);
    const ids = tf.tensor1d([3, -7, 2 ** 30], 'int32');
    await saveWeights(
      path,
      new Map<string, tf.Tensor>([
        ['encoder/w', w],
        ['ids', ids],
      ]),
      { note: 'kept' },
    );
    const { tensors, metadata } = await loadWeights(path);
    expect([...tensors.keys()].sort()).toEqual(['encoder/w', 'ids']);
    expect(tensors.get('encoder/w')?.dtype).toBe('float32');
    expect(tensors.get('encoder/w')?.shape).toEqual([2, 2]);
    expect([...(tensors.get('encoder/w')?.dataSync() ?? [])]).toEqual([1.5, -2, 0.25, 3]);
    expect(tensors.get('ids')?.dtype).toBe('int32');
    expect([...(tensors.get('ids')?.dataSync() ?? [])]).toEqual([3, -7, 2 ** 30]);
    expect(metadata).toEqual({ note: 'kept' });
    // Any safetensors reader sees F32 and I32.
    const raw = await readSafetensorsFile(path);
    expect(raw.tensors.get('encoder/w')?.dtype).toBe('F32');
    expect(raw.tensors.get('ids')?.dtype).toBe('I32');
    tf.dispose([w, ids, ...tensors.values()]);
  });

  it('takes a tf.NamedTensorMap, and writeSafetensorsFile takes tf tensors too', async () => {
    const a = tf.tensor1d([1, 2, 3]);
    const b = tf.tensor1d([true, false], 'bool');
    await saveWeights(join(root, 'map.safetensors'), { a, b });
    await writeSafetensorsFile(join(root, 'direct.safetensors'), { a, b });
    for (const file of ['map.safetensors', 'direct.safetensors']) {
      const { tensors } = await loadWeights(join(root, file));
      expect([...(tensors.get('a')?.dataSync() ?? [])]).toEqual([1, 2, 3]);
      expect(tensors.get('b')?.dtype).toBe('bool');
      expect([...(tensors.get('b')?.dataSync() ?? [])]).toEqual([1, 0]);
      tf.dispose([...tensors.values()]);
    }
    tf.dispose([a, b]);
  });
});

describe('saveWeights / assignWeights: a tfjs model', () => {
  it("saves a model's weights under tfjs's names, then into a model built again: same predictions", async () => {
    const model = userModel('a', 1);
    const names = [...namedWeights(model).keys()];
    expect(names).toContain('a_head/kernel');
    expect(names).toContain('a_head/bias');
    expect(names.some((n) => n.startsWith('a_mix/'))).toBe(true);
    const path = join(root, 'model-weights.safetensors');
    await saveWeights(path, model);
    const want = predict(model);

    const again = userModel('a', 2); // other weights, same names
    expect(predict(again)).not.toEqual(want);
    const { tensors } = await loadWeights(path);
    assignWeights(again, tensors);
    tf.dispose([...tensors.values()]);
    expect(predict(again)).toEqual(want);
    model.dispose();
    again.dispose();
  });

  it('refuses weights that do not fit, naming the weight, and assigns nothing', () => {
    const model = userModel('b', 1);
    const before = predict(model);
    const weights = namedWeights(model);
    const badBias = tf.zeros([4]);
    const wrong = new Map(weights).set('b_head/bias', badBias);
    expect(() => assignWeights(model, wrong)).toThrow(
      /weight 'b_head\/bias' is float32 \[3\], the tensor is float32 \[4\]/,
    );
    const missing = new Map(weights);
    missing.delete('b_head/kernel');
    expect(() => assignWeights(model, missing)).toThrow(WeightsIOError);
    expect(() => assignWeights(model, missing)).toThrow(/no tensor named 'b_head\/kernel'/);
    const other = tf.zeros([1]);
    const extra = new Map(weights).set('other', other);
    expect(() => assignWeights(model, extra)).toThrow(/the model has no weight named 'other'/);
    expect(predict(model)).toEqual(before);
    tf.dispose([badBias, other]);
    model.dispose();
  });
});

describe('safetensorsHandler: model.save and tf.loadLayersModel', () => {
  it('round-trips a tf.sequential with CausalGrassmannMixing and a dense layer: the same predictions', async () => {
    const model = userModel('c', 3);
    const want = predict(model);
    const dir = join(root, 'saved-model');
    const result = await model.save(safetensorsHandler(dir));
    expect(result.modelArtifactsInfo.modelTopologyType).toBe('JSON');
    expect(await readdir(dir)).toEqual(['model.safetensors']);

    const file = await readSafetensorsFile(join(dir, 'model.safetensors'));
    expect(file.metadata?.format).toBe(TFJS_SAFETENSORS_FORMAT);
    const topology = JSON.parse(file.metadata?.['tfjs.modelTopology'] ?? '{}') as { class_name?: string };
    expect(topology.class_name).toBe('Sequential');
    expect(file.metadata?.['tfjs.modelTopology']).toContain('"class_name":"CausalGrassmannMixing"');
    expect([...file.tensors.keys()].sort()).toEqual([...namedWeights(model).keys()].sort());

    const loaded = await tfl.loadLayersModel(safetensorsHandler(dir));
    expect(loaded.layers[0]).toBeInstanceOf(CausalGrassmannMixing);
    expect(predict(loaded)).toEqual(want);

    // A path ending in .safetensors is the file itself; saving again replaces it.
    const single = join(root, 'one-file.safetensors');
    await model.save(safetensorsHandler(single));
    await model.save(safetensorsHandler(single));
    const again = await tfl.loadLayersModel(safetensorsHandler(single));
    expect(predict(again)).toEqual(want);
    model.dispose();
    loaded.dispose();
    again.dispose();
  });

  it('refuses to load a plain weights file as a model, and says to use loadWeights', async () => {
    const path = join(root, 'plain.safetensors');
    const t = tf.ones([2]);
    await saveWeights(path, { t });
    t.dispose();
    await expect(tfl.loadLayersModel(safetensorsHandler(path))).rejects.toThrow(
      /not a model saved by safetensorsHandler .*loadWeights/,
    );
  });
});

describe('saveCheckpoint of a tfjs model', () => {
  it('says which function saves a tfjs model instead of calling its config invalid', async () => {
    const model = userModel('d', 1);
    const save = saveCheckpoint(join(root, 'ckpt'), model as unknown as LanguageModel);
    await expect(save).rejects.toThrow(CheckpointError);
    await expect(saveCheckpoint(join(root, 'ckpt'), model as unknown as LanguageModel)).rejects.toThrow(
      /not a tfjs Sequential: .*model\.save\(safetensorsHandler\(dir\)\).*saveWeights\(path, model\)/,
    );
    model.dispose();
  });
});

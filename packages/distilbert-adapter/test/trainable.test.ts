// Frozen vs trainable: no variables when frozen; gradients that match finite differences of the reference.
import * as tf from '@tensorflow/tfjs-core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDistilBert, type DistilBertEncoder } from '@grassflow/distilbert-adapter';
import { maxAbsDiff, referenceForward } from './helpers/reference.js';
import { makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { rng, writeTinyModel, type TinyModel } from './helpers/tiny-model.js';

const IDS = [
  [2, 6, 8, 9, 5, 3],
  [2, 7, 14, 3, 0, 0],
];
const MASK = [
  [1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 0, 0],
];
const next = rng(42);
const R = Float64Array.from({ length: 2 * 6 * 32 }, () => 2 * next() - 1);

let root: string;
let tiny: TinyModel;
let enc: DistilBertEncoder;

/** L = Σ out ⊙ R. */
function lossOf(e: DistilBertEncoder, training = false): tf.Scalar {
  return tf.tidy(() => {
    const out = e.forward(tf.tensor2d(IDS, undefined, 'int32'), tf.tensor2d(MASK, undefined, 'int32'), { training });
    return tf.sum(tf.mul(out, tf.tensor3d(Float32Array.from(R), [2, 6, 32])));
  });
}

function refLoss(weights: TinyModel['weights']): number {
  const out = referenceForward(weights, tiny.config, IDS, MASK);
  let s = 0;
  for (let i = 0; i < out.length; i++) s += (out[i] as number) * (R[i] as number);
  return s;
}

beforeAll(async () => {
  await useBackend('cpu');
  root = await makeTemp('trainable');
  tiny = await writeTinyModel(join(root, 'tiny'));
  enc = await loadDistilBert(tiny.dir, { mode: 'trainable' });
});
afterAll(async () => {
  enc.dispose();
  await removeTemp(root);
});

describe('frozen mode', () => {
  it('has no trainable variables and refuses training: true', async () => {
    const frozen = await loadDistilBert(tiny.dir);
    expect(frozen.mode).toBe('frozen');
    expect(frozen.trainableVariables()).toEqual([]);
    expect(() =>
      frozen.forward({ data: Int32Array.from([2, 3]), shape: [1, 2] }, undefined, { training: true }),
    ).toThrow(/mode: "trainable"/);
    frozen.dispose();
  });
});

describe('trainable mode', () => {
  it('exposes every weight as a tf.Variable named after its HF tensor; stateDict gives the HF layout back', () => {
    const vars = enc.trainableVariables();
    expect(vars).toHaveLength(4 + 16 * 2);
    expect(vars.every((v) => v instanceof tf.Variable && v.trainable)).toBe(true);
    expect(vars.some((v) => v.name.endsWith('/transformer.layer.1.ffn.lin1.weight'))).toBe(true);
    const sd = enc.stateDict();
    for (const name of [
      'transformer.layer.1.ffn.lin1.weight',
      'embeddings.word_embeddings.weight',
      'transformer.layer.0.sa_layer_norm.bias',
    ]) {
      const t = sd.get(name) as tf.Tensor;
      const w = tiny.weights.get(name);
      expect(t.shape).toEqual(w?.shape);
      expect(maxAbsDiff(t.dataSync(), w?.data as Float64Array)).toBe(0);
    }
    tf.dispose([...sd.values()]);
  });

  it('gradients equal central differences of the float64 reference', () => {
    const grads = tf.tidy(() => tf.variableGrads(() => lossOf(enc)).grads);
    const probes: Array<[string, number, number]> = [
      // [HF name, flat index in the HF layout, flat index in the variable (internal [in, out] for linear weights)]
      ['transformer.layer.0.attention.q_lin.bias', 3, 3],
      ['transformer.layer.1.ffn.lin1.weight', 5 * 32 + 7, 7 * 64 + 5],
      ['transformer.layer.0.attention.k_lin.weight', 2 * 32 + 9, 9 * 32 + 2],
      ['embeddings.word_embeddings.weight', 8 * 32 + 1, 8 * 32 + 1],
      ['embeddings.position_embeddings.weight', 2 * 32 + 4, 2 * 32 + 4],
      ['transformer.layer.1.output_layer_norm.weight', 11, 11],
    ];
    for (const [name, hfIndex, varIndex] of probes) {
      const v = enc.trainableVariables().find((x) => x.name.endsWith(`/${name}`)) as tf.Variable;
      const g = (grads[v.name] as tf.Tensor).dataSync()[varIndex] as number;
      const w = tiny.weights.get(name)?.data as Float64Array;
      const h = 1e-5;
      const orig = w[hfIndex] as number;
      w[hfIndex] = orig + h;
      const up = refLoss(tiny.weights);
      w[hfIndex] = orig - h;
      const down = refLoss(tiny.weights);
      w[hfIndex] = orig;
      const fd = (up - down) / (2 * h);
      expect(Math.abs(g - fd), `${name}: tfjs ${g} vs finite difference ${fd}`).toBeLessThan(
        1e-3 * Math.max(1, Math.abs(fd)),
      );
    }
    // an id that occurs in no input (39) gets exactly zero gradient
    const word = enc
      .trainableVariables()
      .find((x) => x.name.endsWith('/embeddings.word_embeddings.weight')) as tf.Variable;
    const gw = (grads[word.name] as tf.Tensor).dataSync();
    expect(Array.from(gw.subarray(39 * 32, 40 * 32)).every((x) => x === 0)).toBe(true);
    tf.dispose(Object.values(grads));
  });

  it('one SGD step changes the output and lowers the loss; no tensor leaks over steps', () => {
    const opt = tf.train.sgd(1e-3);
    const before = lossOf(enc);
    const l0 = before.dataSync()[0] as number;
    before.dispose();
    opt.minimize(() => lossOf(enc), false, enc.trainableVariables());
    const warm = tf.memory().numTensors;
    const after = lossOf(enc);
    expect(after.dataSync()[0] as number).toBeLessThan(l0 - 1e-3);
    after.dispose();
    for (let i = 0; i < 3; i++) opt.minimize(() => lossOf(enc, true), false, enc.trainableVariables());
    expect(tf.memory().numTensors).toBe(warm);
    opt.dispose();
  });

  it('training: true applies dropout (two calls differ), training: false is deterministic', () => {
    const a = lossOf(enc, true);
    const b = lossOf(enc, true);
    const c = lossOf(enc);
    const d = lossOf(enc);
    expect(a.dataSync()[0]).not.toBe(b.dataSync()[0]);
    expect(c.dataSync()[0]).toBe(d.dataSync()[0]);
    tf.dispose([a, b, c, d]);
  });
});

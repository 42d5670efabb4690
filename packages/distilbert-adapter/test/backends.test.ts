// cpu and wasm give the same encoder outputs and gradients (each checked against the float64 reference).
import * as tf from '@tensorflow/tfjs-core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDistilBert } from '@grassflow/distilbert-adapter';
import { maxAbsDiff, referenceForward } from './helpers/reference.js';
import { makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { writeTinyModel, type TinyModel } from './helpers/tiny-model.js';

const IDS = [
  [2, 6, 8, 9, 5, 11, 3, 12, 13],
  [2, 7, 14, 23, 3, 0, 0, 0, 0],
];
const MASK = [
  [1, 1, 1, 1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 0, 0, 0, 0],
];

let root: string;
let tiny: TinyModel;

beforeAll(async () => {
  root = await makeTemp('backends');
  tiny = await writeTinyModel(join(root, 'tiny'), { seed: 3 });
});
afterAll(() => removeTemp(root));

async function runOn(backend: 'cpu' | 'wasm'): Promise<{ out: Float32Array; grad: Float32Array }> {
  await useBackend(backend);
  expect(tf.getBackend()).toBe(backend);
  const enc = await loadDistilBert(tiny.dir, { mode: 'trainable' });
  const before = tf.memory().numTensors;
  const ids = tf.tensor2d(IDS, undefined, 'int32');
  const mask = tf.tensor2d(MASK, undefined, 'int32');
  const out = enc.forward(ids, mask);
  const v = out.dataSync() as Float32Array;
  const q = enc
    .trainableVariables()
    .find((x) => x.name.endsWith('/transformer.layer.0.attention.q_lin.weight')) as tf.Variable;
  const { value, grads } = tf.variableGrads(() => tf.sum<tf.Scalar>(tf.square(enc.forward(ids, mask))), [q]);
  const g = (grads[q.name] as tf.Tensor).dataSync() as Float32Array;
  tf.dispose([ids, mask, out, value, ...Object.values(grads)]);
  expect(tf.memory().numTensors).toBe(before);
  enc.dispose();
  return { out: v, grad: g };
}

describe('cpu and wasm', () => {
  it('agree with each other and with the reference', async () => {
    const cpu = await runOn('cpu');
    const wasm = await runOn('wasm');
    const ref = referenceForward(tiny.weights, tiny.config, IDS, MASK);
    expect(maxAbsDiff(cpu.out, ref)).toBeLessThan(1e-5);
    expect(maxAbsDiff(wasm.out, ref)).toBeLessThan(1e-5);
    expect(maxAbsDiff(wasm.out, cpu.out)).toBeLessThan(1e-5);
    const scale = Math.max(...cpu.grad.map(Math.abs));
    expect(scale).toBeGreaterThan(0);
    expect(maxAbsDiff(wasm.grad, cpu.grad) / scale).toBeLessThan(1e-4);
  });
});

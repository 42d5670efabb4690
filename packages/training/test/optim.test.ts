import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  clipByGlobalNorm,
  defaultDecayFilter,
  NonFiniteLossError,
  trainStep,
  warmupCosineLr,
} from '@grassflow/training';

beforeAll(async () => {
  await initBackend({ backend: 'cpu' });
});

describe('AdamW', () => {
  it('matches a hand-computed update on a 2-element example (two steps, decay on)', () => {
    const w = tf.variable(tf.tensor2d([[1, -2]]), true, 'w');
    const opt = new AdamW([{ name: 'layer.weight', variable: w }], {
      beta1: 0.9,
      beta2: 0.999,
      epsilon: 1e-8,
      weightDecay: 0.1,
    });
    const lr = 0.01;
    // step 1, g = [0.5, -1]: m = 0.1g, v = 0.001g², m̂ = g, v̂ = g², update = g/(|g| + ε) ≈ sign(g)
    opt.apply({ w: tf.tensor2d([[0.5, -1]]) }, lr);
    const e1 = [1 * (1 - lr * 0.1) - lr * (0.5 / (0.5 + 1e-8)), -2 * (1 - lr * 0.1) - lr * (-1 / (1 + 1e-8))];
    expect(Array.from(w.dataSync())).toEqual(e1.map((x) => expect.closeTo(x, 6) as number));
    // step 2, g = [0.2, 0.4]
    const g2 = [0.2, 0.4];
    const g1 = [0.5, -1];
    const e2 = e1.map((p, i) => {
      const m = 0.9 * (0.1 * (g1[i] as number)) + 0.1 * (g2[i] as number);
      const v = 0.999 * (0.001 * (g1[i] as number) ** 2) + 0.001 * (g2[i] as number) ** 2;
      const mh = m / (1 - 0.9 ** 2);
      const vh = v / (1 - 0.999 ** 2);
      return p * (1 - lr * 0.1) - (lr * mh) / (Math.sqrt(vh) + 1e-8);
    });
    opt.apply({ w: tf.tensor2d([g2]) }, lr);
    const got = Array.from(w.dataSync());
    expect(got[0]).toBeCloseTo(e2[0] as number, 6);
    expect(got[1]).toBeCloseTo(e2[1] as number, 6);
    expect(opt.step).toBe(2);
    opt.dispose();
    w.dispose();
  });

  it('does not decay biases, LayerNorm or embeddings by default, but does when asked', () => {
    const mk = (name: string, shape: number[]) => ({ name, variable: tf.variable(tf.ones(shape)) });
    const params = [
      mk('tok_emb.weight', [4, 2]),
      mk('blocks.0.ffn.fc1.weight', [2, 3]),
      mk('blocks.0.ffn.fc1.bias', [3]),
      mk('blocks.0.ln1.weight', [2]),
    ];
    expect(new AdamW(params).decayedNames()).toEqual(['blocks.0.ffn.fc1.weight']);
    expect(new AdamW(params, { decay: defaultDecayFilter({ decayEmbeddings: true }) }).decayedNames()).toEqual([
      'tok_emb.weight',
      'blocks.0.ffn.fc1.weight',
    ]);
    // a zero gradient leaves undecayed parameters exactly where they are
    const opt = new AdamW(params, { weightDecay: 0.5 });
    opt.apply(Object.fromEntries(params.map((p) => [p.variable.name, tf.zerosLike(p.variable)])), 0.1);
    expect(Array.from(params[0]!.variable.dataSync())).toEqual(new Array(8).fill(1));
    expect(Array.from(params[1]!.variable.dataSync())[0]).toBeCloseTo(1 - 0.1 * 0.5, 7);
  });

  it('state round-trips through tensors so a restored optimizer continues identically', () => {
    const a = tf.variable(tf.tensor1d([1, 2, 3]));
    const b = tf.variable(tf.tensor1d([1, 2, 3]));
    const oa = new AdamW([{ name: 'p', variable: a }]);
    const g = () => ({ [a.name]: tf.tensor1d([0.3, -0.1, 0.2]) });
    oa.apply(g(), 0.1);
    const saved = oa.stateTensors();
    b.assign(a);
    const ob = new AdamW([{ name: 'p', variable: b }]);
    ob.loadState(saved, oa.state);
    oa.apply(g(), 0.1);
    ob.apply({ [b.name]: tf.tensor1d([0.3, -0.1, 0.2]) }, 0.1);
    expect(Array.from(b.dataSync())).toEqual(Array.from(a.dataSync()));
    expect(() => ob.loadState(new Map(), { step: 1 })).toThrow(/missing 'adamw\.m\.p'/);
  });
});

describe('warmupCosineLr', () => {
  const o = { peakLr: 1e-3, warmupSteps: 10, totalSteps: 110, minLr: 1e-4 };
  it('is linear in warmup, peak at the end of warmup, half-way at the middle, floor at and after the end', () => {
    expect(warmupCosineLr(0, o)).toBeCloseTo(1e-4, 12);
    expect(warmupCosineLr(4, o)).toBeCloseTo(5e-4, 12);
    expect(warmupCosineLr(9, o)).toBeCloseTo(1e-3, 12);
    expect(warmupCosineLr(10, o)).toBeCloseTo(1e-3, 12);
    expect(warmupCosineLr(60, o)).toBeCloseTo((1e-3 + 1e-4) / 2, 12);
    expect(warmupCosineLr(110, o)).toBeCloseTo(1e-4, 12);
    expect(warmupCosineLr(500, o)).toBe(1e-4);
    expect(warmupCosineLr(10, { peakLr: 1e-3, warmupSteps: 0, totalSteps: 100 })).toBeCloseTo(
      1e-4 + 0.5 * (1 + Math.cos(Math.PI * 0.1)) * 9e-4,
      12,
    );
  });
  it('decreases monotonically after warmup and rejects bad input', () => {
    for (let s = 10; s < 110; s++) expect(warmupCosineLr(s + 1, o)).toBeLessThanOrEqual(warmupCosineLr(s, o));
    expect(() => warmupCosineLr(-1, o)).toThrow(/step/);
    expect(() => warmupCosineLr(0, { ...o, minLr: 2e-3 })).toThrow(/minLr/);
  });
});

describe('clipByGlobalNorm', () => {
  it('scales all gradients by maxNorm/‖g‖ when the global norm is larger, and leaves them otherwise', () => {
    const grads = { a: tf.tensor1d([3, 0]), b: tf.tensor2d([[0, 4]]) }; // ‖g‖ = 5
    const c = clipByGlobalNorm(grads, 1);
    expect(c.norm.dataSync()[0]).toBeCloseTo(5, 6);
    expect(Array.from(c.grads['a']!.dataSync())).toEqual([expect.closeTo(0.6, 5), 0]);
    expect(Array.from(c.grads['b']!.dataSync())).toEqual([0, expect.closeTo(0.8, 5)]);
    const d = clipByGlobalNorm(grads, 10);
    expect(Array.from(d.grads['b']!.dataSync())).toEqual([0, 4]);
  });
});

describe('trainStep', () => {
  it('lowers a quadratic loss and refuses a non-finite one without touching the parameters', async () => {
    const w = tf.variable(tf.tensor1d([2, -3]));
    const opt = new AdamW([{ name: 'w', variable: w }], { weightDecay: 0 });
    const loss = () => tf.sum<tf.Scalar>(tf.square(w));
    const first = (await trainStep(loss, opt, { lr: 0.1 })).loss;
    let last = first;
    for (let i = 0; i < 20; i++) last = (await trainStep(loss, opt, { lr: 0.1 })).loss;
    expect(last).toBeLessThan(first / 2);
    const before = Array.from(w.dataSync());
    const tensorsBefore = tf.memory().numTensors;
    await expect(trainStep(() => tf.div<tf.Scalar>(tf.sum(w), 0), opt, { lr: 0.1, step: 22 })).rejects.toThrow(
      NonFiniteLossError,
    );
    await expect(trainStep(() => tf.div<tf.Scalar>(tf.sum(w), 0), opt, { lr: 0.1, step: 22 })).rejects.toThrow(
      /at step 22/,
    );
    expect(Array.from(w.dataSync())).toEqual(before);
    expect(tf.memory().numTensors).toBe(tensorsBefore);
  });

  it('makes dropout reproducible for a seed', async () => {
    const x = tf.ones([64]);
    const run = async (seed: number) => {
      const w = tf.variable(tf.ones([64]));
      const opt = new AdamW([{ name: 'w', variable: w }]);
      const r = await trainStep(() => tf.sum<tf.Scalar>(tf.dropout(tf.mul(w, x), 0.5)), opt, {
        lr: 0.1,
        randomSeed: seed,
      });
      return r.loss;
    };
    expect(await run(7)).toBe(await run(7));
    expect(await run(7)).not.toBe(await run(8));
  });
});

// trainStep over micro-batches (gradient accumulation) gives the update of one batch of all of them.
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW, trainStep } from '@grassflow/training';

beforeAll(async () => {
  await initBackend({ backend: 'cpu' });
});

/** A small nonlinear regression: mean over rows of (tanh(x·W)·u − t)² for rows [from, to). */
function setup() {
  const W = tf.variable(tf.randomNormal([5, 4], 0, 1, 'float32', 1), true);
  const u = tf.variable(tf.randomNormal([4, 1], 0, 1, 'float32', 2), true);
  const x = tf.randomNormal([12, 5], 0, 1, 'float32', 3);
  const t = tf.randomNormal([12, 1], 0, 1, 'float32', 4);
  const loss = (from: number, to: number) => () =>
    tf.mean<tf.Scalar>(
      tf.square(
        tf.sub(
          tf.matMul(tf.tanh(tf.matMul(tf.slice(x, [from, 0], [to - from, 5]), W)), u),
          tf.slice(t, [from, 0], [to - from, 1]),
        ),
      ),
    );
  const opt = new AdamW(
    [
      { name: 'W', variable: W },
      { name: 'u', variable: u },
    ],
    { weightDecay: 0.01 },
  );
  return { W, u, loss, opt, dispose: () => tf.dispose([W, u, x, t]) };
}

describe('trainStep with micro-batches', () => {
  it('equals the full-batch step: same loss, gradient norm and parameters after three updates (clipping on)', async () => {
    const a = setup();
    const b = setup();
    for (let s = 0; s < 3; s++) {
      const full = await trainStep(a.loss(0, 12), a.opt, { lr: 0.05, clipNorm: 0.5 });
      const micro = await trainStep([b.loss(0, 4), b.loss(4, 8), b.loss(8, 12)], b.opt, { lr: 0.05, clipNorm: 0.5 });
      expect(micro.loss).toBeCloseTo(full.loss, 6);
      expect(micro.gradNorm).toBeCloseTo(full.gradNorm, 6);
    }
    for (const [p, q] of [
      [a.W, b.W],
      [a.u, b.u],
    ] as const) {
      const pv = p.dataSync();
      const qv = q.dataSync();
      for (let i = 0; i < pv.length; i++) expect(qv[i] as number).toBeCloseTo(pv[i] as number, 5);
    }
    // and the parameters did move (the comparison is not between two untouched models)
    expect(
      Math.abs((a.u.dataSync()[0] as number) - (tf.randomNormal([4, 1], 0, 1, 'float32', 2).dataSync()[0] as number)),
    ).toBeGreaterThan(1e-3);
    a.dispose();
    b.dispose();
  });

  it('holds no tensors after the step and rejects an empty list', async () => {
    const a = setup();
    await trainStep([a.loss(0, 6), a.loss(6, 12)], a.opt, { lr: 0.01 });
    const before = tf.memory().numTensors;
    await trainStep([a.loss(0, 6), a.loss(6, 12)], a.opt, { lr: 0.01, randomSeed: 3 });
    expect(tf.memory().numTensors).toBe(before);
    await expect(trainStep([], a.opt, { lr: 0.01 })).rejects.toThrow(/at least one loss/);
    a.dispose();
  });
});

// logSumExp, the one log-normaliser: its identities, its stability at large logits, and its gradient (softmax).
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { logSumExp } from '@grassflow/gpu-layers';
import { relErr, useBackend } from './helpers.js';

describe.each(['cpu', 'wasm'] as const)('logSumExp on %s', (backend) => {
  it('equals log Σ exp in float64, for ordinary, shifted and very large logits', async () => {
    await useBackend(backend);
    const rows = [
      [0.5, -1.25, 2, 0, 3.5],
      [1000, 999, 998, -1000, 1000], // exp overflows float32 without the max shift
      [-80, -81, -79.5, -90, -100], // and underflows
      [7, 7, 7, 7, 7], // log V + 7
    ];
    const got = tf.tidy(() => Array.from(logSumExp(tf.tensor2d(rows)).dataSync()));
    const want = rows.map((r) => {
      const m = Math.max(...r);
      return m + Math.log(r.reduce((s, x) => s + Math.exp(x - m), 0));
    });
    expect(relErr(got, want)).toBeLessThan(1e-6);
    expect(got[3]).toBeCloseTo(7 + Math.log(5), 5);
  });

  it('lse(x + c) = lse(x) + c, and its gradient is softmax(x)', async () => {
    await useBackend(backend);
    const x = tf.randomNormal<tf.Rank.R2>([3, 257], 0, 2, 'float32', 4);
    const [a, b] = tf.tidy(() => [
      Array.from(tf.add(logSumExp(x), 5).dataSync()),
      Array.from(logSumExp(tf.add(x, 5)).dataSync()),
    ]);
    expect(relErr(a, b)).toBeLessThan(1e-6);
    const [g, p] = tf.tidy(() => [
      Array.from(
        tf
          .grad((v: tf.Tensor) => tf.sum(logSumExp(v as tf.Tensor2D)))(x)
          .dataSync(),
      ),
      Array.from(tf.softmax(x).dataSync()),
    ]);
    expect(relErr(g, p)).toBeLessThan(1e-5);
    x.dispose();
  });
});

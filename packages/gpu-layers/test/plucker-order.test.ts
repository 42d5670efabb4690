// The mixing layer's Plücker coordinates agree, in value and order, with @grassflow/grassmann-math.
import { plucker } from '@grassflow/grassmann-math';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { grassmannMixing, pluckerPairs } from '@grassflow/gpu-layers';
import { useBackend, values } from './helpers.js';

describe('Plücker order', () => {
  it('pluckerPairs is the order of grassmann-math plucker', () => {
    // plucker(e_i, e_j) is the unit vector at the index of pair (i, j).
    const r = 6;
    const eye = (k: number) => Array.from({ length: r }, (_, m) => (m === k ? 1 : 0));
    pluckerPairs(r).forEach(([i, j], c) => {
      const p = plucker(eye(i), eye(j));
      expect(Array.from(p).findIndex((v) => v === 1)).toBe(c);
    });
  });

  it.each(['cpu', 'wasm'] as const)('layer output p̂(z_{t−1}, z_t) equals plucker(u, v)/‖·‖ on %s', async (backend) => {
    await useBackend(backend);
    // r = 5, C = 10 = d. W_red picks the first r features (z = h[:5]), W_plu = I, b_plu = 0,
    // and a gate held shut (W_gate = 0, b_gate = −30: α ≈ 1e−13) so out_t = g_t = p̂ at t = 1.
    const [r, d] = [5, 10];
    const u = [0.3, -1.2, 0.7, 2.0, -0.4];
    const v = [1.1, 0.5, -0.9, 0.2, 0.8];
    const h = tf.tensor3d([
      [
        [...u, 0, 0, 0, 0, 0],
        [...v, 0, 0, 0, 0, 0],
      ],
    ]); // [1, 2, 10]
    const wRed = tf.tensor2d(
      Array.from({ length: d * r }, (_, k) => (Math.floor(k / r) === k % r ? 1 : 0)),
      [d, r],
    );
    const out = values(
      grassmannMixing(
        h,
        {
          wRed,
          bRed: tf.zeros([r]),
          wPlu: tf.eye(d),
          bPlu: tf.zeros([d]),
          wGate: tf.zeros([2 * d, d]),
          bGate: tf.fill([d], -30),
        },
        { offsets: [1], eps: 1e-6, direction: 'causal' },
      ),
    );
    const p = plucker(u, v); // pair (z_{t−1}, z_t) = (u, v)
    const n = Math.hypot(...p);
    for (let c = 0; c < d; c++) expect(out[d + c]).toBeCloseTo((p[c] as number) / n, 5);
    // t = 0: no pair, g = 0 and h·α ≈ 0
    for (let c = 0; c < d; c++) expect(Math.abs(out[c] as number)).toBeLessThan(1e-6);
  });
});

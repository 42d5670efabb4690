// Causal Grassmann mixing: a hand-computed example, finite differences, degenerate inputs.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  CausalGrassmannMixing,
  grassmannMixing,
  pluckerPairs,
  type GrassmannMixingWeights,
} from '@grassflow/gpu-layers';
import { pairCounts } from '@grassflow/gpu-layers/internals';
import { useBackend, values } from './helpers.js';

/** Random weights (internal layout) of a mixing layer, std `s`. */
function randomWeights(d: number, r: number, s: number, seed: number): GrassmannMixingWeights {
  const C = (r * (r - 1)) / 2;
  return {
    wRed: tf.randomNormal([d, r], 0, s, 'float32', seed),
    bRed: tf.randomNormal([r], 0, s, 'float32', seed + 1),
    wPlu: tf.randomNormal([C, d], 0, s, 'float32', seed + 2),
    bPlu: tf.randomNormal([d], 0, s, 'float32', seed + 3),
    wGate: tf.randomNormal([2 * d, d], 0, s, 'float32', seed + 4),
    bGate: tf.randomNormal([d], 0, s, 'float32', seed + 5),
  };
}

describe('CausalGrassmannMixing', () => {
  it('matches a hand-computed r = 3 example number by number', async () => {
    await useBackend('cpu');
    // d = r = 3, W_red = I, b_red = 0 (so z_t = h_t), W_plu = I, b_plu = (0.5, 0, 0),
    // W_gate = [I | 0] (α = σ(h)), b_gate = 0; offsets {1, 2}; L = 3.
    const layer = new CausalGrassmannMixing({ r: 3, offsets: [1, 2] });
    const h = tf.tensor3d([
      [
        [1, 2, 0],
        [0, 1, 3],
        [1, 0, 1],
      ],
    ]); // [1, 3, 3]
    layer.apply(h);
    const I = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
    layer.setWeights([
      tf.tensor2d(I), // w_red [d, r]
      tf.zeros([3]),
      tf.tensor2d(I), // w_plu [C, d]
      tf.tensor1d([0.5, 0, 0]),
      tf.tensor2d([...I, [0, 0, 0], [0, 0, 0], [0, 0, 0]]), // w_gate [2d, d]: rows for h then g
      tf.zeros([3]),
    ]);
    const out = values(layer.apply(h) as tf.Tensor);
    // Pairs in order (0,1), (0,2), (1,2); p_ij = a_i b_j − a_j b_i with a = z_{t−Δ}, b = z_t.
    // t = 0: no pair → g = 0 (b_plu is not added); out = σ(h)⊙h = (σ(1)·1, σ(2)·2, σ(0)·0)
    //        = (0.7310585786300049, 2·0.8807970779778823 = 1.7615941559557646, 0).
    // t = 1, Δ = 1: a = (1,2,0), b = (0,1,3): p = (1·1−2·0, 1·3−0·0, 2·3−0·1) = (1, 3, 6), ‖p‖ = √46;
    //        g = p/√46 + b_plu = (0.1474419561548955 + 0.5, 0.4423258684646866, 0.8846517369293732);
    //        α = (σ(0), σ(1), σ(3)) = (0.5, 0.7310585786300049, 0.9525741268224334);
    //        out = α⊙h + (1−α)⊙g = (0.5·0.6474419561548955, 0.7310585786 + 0.2689414214·0.4423258685,
    //        2.8577223805 + 0.0474258732·0.8846517369) = (0.32372097807744776, 0.8500183264036152, 2.899677761549227).
    // t = 2, Δ = 1: a = (0,1,3), b = (1,0,1): p = (0·0−1·1, 0·1−3·1, 1·1−3·0) = (−1, −3, 1), ‖p‖ = √11;
    //        Δ = 2: a = (1,2,0), b = (1,0,1): p = (1·0−2·1, 1·1−0·1, 2·1−0·0) = (−2, 1, 2), ‖p‖ = 3;
    //        g = mean + b_plu = ((−1/√11 − 2/3)/2 + 0.5, (−3/√11 + 1/3)/2, (1/√11 + 2/3)/2)
    //          = (0.015910994377810184, −0.28560035019996743, 0.4840890056221898);
    //        α = (σ(1), σ(0), σ(1)); out = (0.7310585786 + 0.2689414214·0.0159109944, 0.5·(−0.2856003502),
    // 0.7310585786 + 0.2689414214·0.4840890056) = (0.7353377040733832, −0.14280017509998372, 0.8612501638716241).
    const expected = [
      0.7310585786300049, 1.7615941559557646, 0, 0.32372097807744776, 0.8500183264036152, 2.899677761549227,
      0.7353377040733832, -0.14280017509998372, 0.8612501638716241,
    ];
    expected.forEach((e, k) => expect(out[k]).toBeCloseTo(e, 5));
    layer.dispose();
  });

  it('counts existing pairs per position (causal and bidirectional)', () => {
    expect(pairCounts(5, [1, 2], 'causal')).toEqual([0, 1, 2, 2, 2]);
    expect(pairCounts(5, [1, 2], 'bidirectional')).toEqual([2, 3, 4, 3, 2]);
    expect(pluckerPairs(4)).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 2],
      [1, 3],
      [2, 3],
    ]);
  });

  it('gradients agree with central finite differences', async () => {
    await useBackend('cpu');
    const [B, L, d, r] = [1, 5, 4, 3];
    const w = randomWeights(d, r, 0.7, 11);
    const h = tf.randomNormal<tf.Rank.R3>([B, L, d], 0, 1, 'float32', 20);
    const probe = tf.randomNormal([B, L, d], 0, 1, 'float32', 21);
    const opts = { offsets: [1, 2], eps: 1e-6, direction: 'causal' as const };
    const f = (hh: tf.Tensor3D, wRed: tf.Tensor2D, wPlu: tf.Tensor2D, wGate: tf.Tensor2D): tf.Scalar =>
      tf.sum(tf.mul(grassmannMixing(hh, { ...w, wRed, wPlu, wGate }, opts), probe));
    const inputs = [h, w.wRed, w.wPlu, w.wGate] as const;
    const grads = tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor, e: tf.Tensor) =>
      f(a as tf.Tensor3D, b as tf.Tensor2D, c as tf.Tensor2D, e as tf.Tensor2D),
    )([...inputs]);
    const step = 1e-2;
    let checked = 0;
    inputs.forEach((x, which) => {
      const base = values(x);
      const analytic = values(grads[which] as tf.Tensor);
      for (let k = 0; k < base.length; k += 3) {
        const eval_ = (delta: number): number => {
          const v = Float32Array.from(base);
          v[k] = (v[k] as number) + delta;
          const args = [...inputs] as tf.Tensor[];
          args[which] = tf.tensor(v, x.shape);
          return f(
            args[0] as tf.Tensor3D,
            args[1] as tf.Tensor2D,
            args[2] as tf.Tensor2D,
            args[3] as tf.Tensor2D,
          ).dataSync()[0] as number;
        };
        const numeric = (eval_(step) - eval_(-step)) / (2 * step);
        expect(Math.abs(numeric - (analytic[k] as number))).toBeLessThan(2e-3 + 1e-2 * Math.abs(numeric));
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(20);
  });

  it('stays finite for zero and parallel z and where no pair exists', async () => {
    await useBackend('cpu');
    const [L, d, r] = [4, 3, 3];
    const base = randomWeights(d, r, 0.5, 30);
    // Rows of h all multiples of one vector and b_red = 0 → every z_t parallel → p = 0.
    const parallel = tf.tensor3d([
      [
        [1, 2, 3],
        [2, 4, 6],
        [-1, -2, -3],
        [0, 0, 0],
      ],
    ]);
    const cases: Array<[string, tf.Tensor3D, GrassmannMixingWeights, number[]]> = [
      [
        'z = 0',
        tf.randomNormal<tf.Rank.R3>([1, L, d], 0, 1, 'float32', 31),
        { ...base, wRed: tf.zeros([d, r]), bRed: tf.zeros([r]) },
        [1],
      ],
      ['parallel z', parallel, { ...base, bRed: tf.zeros([r]) }, [1, 2]],
      ['no pair (Δ ≥ L)', tf.randomNormal<tf.Rank.R3>([1, L, d], 0, 1, 'float32', 32), base, [L, L + 3]],
    ];
    for (const [name, h, w, offsets] of cases) {
      const opts = { offsets, eps: 1e-6, direction: 'causal' as const };
      const out = grassmannMixing(h, w, opts);
      // Where no pair exists W_red, b_red, W_plu do not reach the output: differentiate w.r.t. h and W_gate only.
      const anyPair = offsets.some((o) => o < L);
      const grads = anyPair
        ? tf.grads((hh: tf.Tensor, a: tf.Tensor, b: tf.Tensor, c: tf.Tensor, e: tf.Tensor) =>
            tf.sum(
              grassmannMixing(
                hh as tf.Tensor3D,
                {
                  ...w,
                  wRed: a as tf.Tensor2D,
                  bRed: b as tf.Tensor1D,
                  wPlu: c as tf.Tensor2D,
                  wGate: e as tf.Tensor2D,
                },
                opts,
              ),
            ),
          )([h, w.wRed, w.bRed, w.wPlu, w.wGate])
        : tf.grads((hh: tf.Tensor, e: tf.Tensor) =>
            tf.sum(grassmannMixing(hh as tf.Tensor3D, { ...w, wGate: e as tf.Tensor2D }, opts)),
          )([h, w.wGate]);
      for (const t of [out, ...grads]) expect(values(t).every(Number.isFinite), name).toBe(true);
      // With p = 0 everywhere, g = b_plu at positions with a pair and 0 without: out = α⊙h + (1−α)⊙g.
      const C = 3;
      const zeroP = grassmannMixing(h, { ...w, wPlu: tf.zeros([C, d]) }, opts);
      expect(
        values(out).every((v, k) => Math.abs(v - (values(zeroP)[k] as number)) < 1e-6),
        name,
      ).toBe(true);
    }
    // No pair anywhere: g = 0 and out = σ(W_gate[h; 0] + b_gate)⊙h.
    const h = cases[2]?.[1] as tf.Tensor3D;
    const alpha = tf.sigmoid(
      tf.add(tf.matMul(tf.reshape(h, [L, d]), tf.slice(base.wGate, [0, 0], [d, d])), base.bGate),
    );
    const expected = values(tf.mul(alpha, tf.reshape(h, [L, d])));
    values(grassmannMixing(h, base, { offsets: [L], eps: 1e-6, direction: 'causal' })).forEach((v, k) =>
      expect(v).toBeCloseTo(expected[k] as number, 6),
    );
  });

  it('bidirectional mode also pairs (z_t, z_{t+Δ}) and sees the future', async () => {
    await useBackend('cpu');
    const w = randomWeights(4, 3, 0.7, 40);
    const h = tf.randomNormal<tf.Rank.R3>([1, 5, 4], 0, 1, 'float32', 41);
    const h2 = tf.concat<tf.Tensor3D>([tf.slice(h, [0, 0, 0], [1, 4, 4]), tf.ones([1, 1, 4])], 1); // last token changed
    const bi = { offsets: [1], eps: 1e-6, direction: 'bidirectional' as const };
    const a = values(grassmannMixing(h, w, bi));
    const b = values(grassmannMixing(h2, w, bi));
    expect(Math.abs((a[3 * 4] as number) - (b[3 * 4] as number))).toBeGreaterThan(1e-6); // t = 3 sees t = 4
    // At t = 0 (only the pair (z_0, z_1) exists) the value is the p̂ of (z_0, z_1): compare with the causal layer at t
    // = 1.
    const causal = values(
      grassmannMixing(h, { ...w, wGate: tf.zeros([8, 4]), bGate: tf.fill([4], -30) }, { ...bi, direction: 'causal' }),
    );
    const bidir = values(grassmannMixing(h, { ...w, wGate: tf.zeros([8, 4]), bGate: tf.fill([4], -30) }, bi));
    for (let k = 0; k < 4; k++) expect(bidir[k]).toBeCloseTo(causal[4 + k] as number, 5); // α ≈ 0 → out = g
    expect(() => new CausalGrassmannMixing({ r: 3, offsets: [1], direction: 'sideways' as 'causal' })).toThrow(
      /direction/,
    );
    expect(() => new CausalGrassmannMixing({ r: 1, offsets: [1] })).toThrow(/r must be/);
    expect(() => new CausalGrassmannMixing({ r: 3, offsets: [0] })).toThrow(/offsets/);
  });
});

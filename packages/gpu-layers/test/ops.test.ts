// Custom gradients (matmul, LayerNorm, GELU, loss) equal tfjs's stock ones, on cpu and wasm.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  crossEntropy,
  embeddingLookup,
  gelu,
  layerNorm,
  lmLoss,
  matmul,
  matmulConst,
  sumTensors,
  tiedHead,
} from '@grassflow/gpu-layers';
import { relErr, useBackend, values } from './helpers.js';

for (const backend of ['cpu', 'wasm'] as const) {
  describe(`ops on ${backend}`, () => {
    it('matmul: value and gradients equal tf.matMul (2-D and batched)', async () => {
      await useBackend(backend);
      for (const [sa, sb] of [
        [
          [5, 7],
          [7, 3],
        ],
        [
          [4, 5, 6],
          [4, 6, 2],
        ],
      ] as const) {
        const a = tf.randomNormal([...sa], 0, 1, 'float32', 1);
        const b = tf.randomNormal([...sb], 0, 1, 'float32', 2);
        const w = tf.randomNormal(tf.matMul(a, b).shape, 0, 1, 'float32', 3);
        const ours = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(matmul(x, y), w)))([a, b]);
        const stock = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x, y), w)))([a, b]);
        expect(relErr(values(matmul(a, b)), values(tf.matMul(a, b)))).toBeLessThan(1e-6);
        for (let k = 0; k < 2; k++)
          expect(relErr(values(ours[k] as tf.Tensor), values(stock[k] as tf.Tensor))).toBeLessThan(1e-6);
        // matmulConst: same gradient for A, none needed for B.
        const [ga] = tf.grads((x: tf.Tensor) => tf.sum(tf.mul(matmulConst(x, b), w)))([a]);
        expect(relErr(values(ga as tf.Tensor), values(stock[0] as tf.Tensor))).toBeLessThan(1e-6);
      }
      expect(() => matmul(tf.zeros([2, 3]), tf.zeros([4, 2]))).toThrow(/inner dimensions/);
      // Tied head x·Eᵀ against tf.matMul(x, E, false, true).
      const x = tf.randomNormal<tf.Rank.R2>([6, 4], 0, 1, 'float32', 9);
      const table = tf.randomNormal<tf.Rank.R2>([10, 4], 0, 1, 'float32', 10);
      const wh = tf.randomNormal([6, 10], 0, 1, 'float32', 11);
      const oursH = tf.grads((p: tf.Tensor, q: tf.Tensor) =>
        tf.sum(tf.mul(tiedHead(p as tf.Tensor2D, q as tf.Tensor2D), wh)),
      )([x, table]);
      const stockH = tf.grads((p: tf.Tensor, q: tf.Tensor) => tf.sum(tf.mul(tf.matMul(p, q, false, true), wh)))([
        x,
        table,
      ]);
      expect(relErr(values(tiedHead(x, table)), values(tf.matMul(x, table, false, true)))).toBeLessThan(1e-6);
      for (let k = 0; k < 2; k++)
        expect(relErr(values(oursH[k] as tf.Tensor), values(stockH[k] as tf.Tensor))).toBeLessThan(1e-6);
    });

    it('layerNorm and gelu: values and gradients equal autodiff of the textbook formulas', async () => {
      await useBackend(backend);
      const x = tf.randomNormal([6, 8], 0, 2, 'float32', 4);
      const g = tf.randomNormal([8], 1, 0.3, 'float32', 5);
      const b = tf.randomNormal([8], 0, 0.3, 'float32', 6);
      const w = tf.randomNormal([6, 8], 0, 1, 'float32', 7);
      const plainLn = (x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => {
        const { mean, variance } = tf.moments(x, -1, true);
        return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), g), b);
      };
      const ours = tf.grads((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(layerNorm(x, g, b, 1e-5), w)))([
        x,
        g,
        b,
      ]);
      const ref = tf.grads((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(plainLn(x, g, b), w)))([
        x,
        g,
        b,
      ]);
      expect(relErr(values(layerNorm(x, g, b)), values(plainLn(x, g, b)))).toBeLessThan(1e-5);
      for (let k = 0; k < 3; k++)
        expect(relErr(values(ours[k] as tf.Tensor), values(ref[k] as tf.Tensor))).toBeLessThan(1e-4);

      const plainGelu = (x: tf.Tensor) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.div(x, Math.SQRT2))));
      const [dg] = tf.grads((x: tf.Tensor) => tf.sum(tf.mul(gelu(x), w)))([x]);
      const [dr] = tf.grads((x: tf.Tensor) => tf.sum(tf.mul(plainGelu(x), w)))([x]);
      expect(relErr(values(gelu(x)), values(plainGelu(x)))).toBeLessThan(1e-6);
      expect(relErr(values(dg as tf.Tensor), values(dr as tf.Tensor))).toBeLessThan(1e-5);
      // GELU(1) = Φ(1) = 0.8413447460685429.
      expect(gelu(tf.scalar(1)).dataSync()[0]).toBeCloseTo(0.8413447460685429, 6);
    });

    it('crossEntropy/lmLoss: value and gradient equal tf.losses.softmaxCrossEntropy', async () => {
      await useBackend(backend);
      const [B, L, V] = [2, 3, 11];
      const logits = tf.randomNormal<tf.Rank.R3>([B, L, V], 0, 3, 'float32', 8);
      const targets = tf.tensor2d(
        [
          [0, 5, 10],
          [3, 3, 7],
        ],
        [B, L],
        'int32',
      );
      const stockLoss = (x: tf.Tensor) =>
        tf.losses.softmaxCrossEntropy(tf.oneHot(tf.reshape(targets, [B * L]), V), tf.reshape(x, [B * L, V]));
      const [ours] = tf.grads((x: tf.Tensor) => lmLoss(x as tf.Tensor3D, targets))([logits]);
      const [stock] = tf.grads(stockLoss)([logits]);
      expect(relErr(lmLoss(logits, targets).dataSync(), stockLoss(logits).dataSync())).toBeLessThan(1e-6);
      expect(relErr(values(ours as tf.Tensor), values(stock as tf.Tensor))).toBeLessThan(1e-5);
      // Uniform logits: the loss is log V.
      const flat = crossEntropy(tf.zeros<tf.Rank.R2>([4, V]), tf.tensor1d([1, 2, 3, 4], 'int32'));
      expect(flat.dataSync()[0]).toBeCloseTo(Math.log(V), 5);
      expect(() => crossEntropy(tf.zeros<tf.Rank.R2>([4, V]), tf.tensor1d([1, 2, 3, 4], 'float32'))).toThrow(/int32/);
      expect(() => lmLoss(logits, tf.zeros<tf.Rank.R2>([2, 2], 'int32'))).toThrow(/targets/);
    });

    it('crossEntropy falls back to a one-hot gradient where TensorScatterUpdate is missing', async () => {
      await useBackend(backend);
      const logits = tf.randomNormal<tf.Rank.R2>([5, 7], 0, 2, 'float32', 12);
      const targets = tf.tensor1d([0, 6, 3, 3, 1], 'int32');
      const [withScatter] = tf.grads((x: tf.Tensor) => crossEntropy(x as tf.Tensor2D, targets))([logits]);
      const kernel = tf.getKernel('TensorScatterUpdate', backend);
      expect(kernel).toBeDefined();
      tf.unregisterKernel('TensorScatterUpdate', backend);
      try {
        const [withOneHot] = tf.grads((x: tf.Tensor) => crossEntropy(x as tf.Tensor2D, targets))([logits]);
        expect(relErr(values(withOneHot as tf.Tensor), values(withScatter as tf.Tensor))).toBeLessThan(1e-6);
      } finally {
        tf.registerKernel(kernel);
      }
      const [again] = tf.grads((x: tf.Tensor) => crossEntropy(x as tf.Tensor2D, targets))([logits]);
      expect(relErr(values(again as tf.Tensor), values(withScatter as tf.Tensor))).toBeLessThan(1e-6);
    });

    it('UnsortedSegmentSum (registered for wasm) sums rows by segment and drops out-of-range ids', async () => {
      await useBackend(backend);
      const x = tf.tensor3d([[[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]]]); // [4, 1, 2]
      const ids = tf.tensor1d([2, 0, 2, 5], 'int32'); // id 5 ≥ numSegments: dropped
      const out = tf.unsortedSegmentSum(x, ids, 3);
      expect(out.shape).toEqual([3, 1, 2]);
      expect(Array.from(out.dataSync())).toEqual([3, 4, 0, 0, 6, 8]);
      const xi = tf.tensor2d(
        [
          [1, 2],
          [3, 4],
        ],
        [2, 2],
        'int32',
      );
      const outInt = tf.unsortedSegmentSum(xi, tf.tensor1d([1, 1], 'int32'), 2);
      expect(Array.from(outInt.dataSync())).toEqual([0, 0, 4, 6]);
    });

    it('embedding lookup is differentiable (gather gradient = UnsortedSegmentSum)', async () => {
      await useBackend(backend);
      const table = tf.tensor2d([
        [1, 2],
        [3, 4],
        [5, 6],
      ]);
      const ids = tf.tensor2d([[2, 0, 2]], [1, 3], 'int32');
      expect(Array.from(embeddingLookup(table, ids).dataSync())).toEqual([5, 6, 1, 2, 5, 6]);
      const w = tf.tensor3d([
        [
          [1, 10],
          [100, 1000],
          [2, 20],
        ],
      ]);
      const [d] = tf.grads((t: tf.Tensor) => tf.sum(tf.mul(embeddingLookup(t as tf.Tensor2D, ids), w)))([table]);
      // Row 0 gets w[1]; row 1 nothing; row 2 gets w[0] + w[2] = (3, 30).
      expect(Array.from((d as tf.Tensor).dataSync())).toEqual([100, 1000, 0, 0, 3, 30]);
    });

    it('sumTensors equals one tf.addN exactly (left to right), for 1 to 20 tensors', async () => {
      await useBackend(backend);
      for (const n of [1, 2, 7, 8, 13, 20]) {
        const xs = Array.from({ length: n }, (_, k) => tf.randomNormal([4, 3], 0, 100, 'float32', k + 1));
        const got = sumTensors(xs);
        const want = n === 1 ? tf.clone(xs[0] as tf.Tensor) : tf.addN(xs);
        expect(Array.from(values(got)), `${n} tensors`).toEqual(Array.from(values(want)));
        tf.dispose([got, want, ...xs]);
      }
      expect(() => sumTensors([])).toThrow(/at least one/);
    });
  });
}

// chunkedLmLoss equals lmLoss on full logits (value and gradients for h and E), on cpu and wasm.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { chunkedLmLoss, lmLoss, tiedHead } from '@grassflow/gpu-layers';
import { relErr, tokenIds, useBackend, values } from './helpers.js';

/** Reference: logits = h·Eᵀ in full, then the fused cross-entropy. */
function fullLoss(h: tf.Tensor3D, table: tf.Tensor2D, y: tf.Tensor2D): tf.Scalar {
  const [B, L, d] = h.shape;
  const logits = tf.reshape<tf.Rank.R3>(tiedHead(tf.reshape<tf.Rank.R2>(h, [B * L, d]), table), [B, L, table.shape[0]]);
  return lmLoss(logits, y);
}

for (const backend of ['cpu', 'wasm'] as const) {
  describe(`chunkedLmLoss on ${backend}`, () => {
    it('gives the loss and the gradients of lmLoss(h·Eᵀ) for chunks that do and do not divide B·L', async () => {
      await useBackend(backend);
      const [B, L, d, V] = [3, 5, 8, 37];
      const h = tf.randomNormal<tf.Rank.R3>([B, L, d], 0, 1, 'float32', 1);
      const table = tf.randomNormal<tf.Rank.R2>([V, d], 0, 1, 'float32', 2);
      const y = tokenIds(B, L, V, 3);
      const ref = tf.valueAndGrads((a: tf.Tensor, e: tf.Tensor) => fullLoss(a as tf.Tensor3D, e as tf.Tensor2D, y))([
        h,
        table,
      ]);
      for (const chunkRows of [1, 4, 15, 64]) {
        const got = tf.valueAndGrads((a: tf.Tensor, e: tf.Tensor) =>
          chunkedLmLoss(a as tf.Tensor3D, e as tf.Tensor2D, y, { chunkRows }),
        )([h, table]);
        expect(relErr(values(got.value), values(ref.value)), `loss, chunk ${chunkRows}`).toBeLessThan(1e-5);
        for (let k = 0; k < 2; k++)
          expect(
            relErr(values(got.grads[k] as tf.Tensor), values(ref.grads[k] as tf.Tensor)),
            `grad ${k}, chunk ${chunkRows}`,
          ).toBeLessThan(1e-5);
        tf.dispose([got.value, ...got.grads]);
      }
      // Without a gradient tape only the loss is computed, with the same value.
      const plain = chunkedLmLoss(h, table, y, { chunkRows: 4 });
      expect(relErr(values(plain), values(ref.value))).toBeLessThan(1e-5);
      tf.dispose([h, table, y, plain, ref.value, ...ref.grads]);
    });

    it('adds its head gradient to the embedding gradient of a table used twice (tied weights)', async () => {
      await useBackend(backend);
      const [B, L, d, V] = [2, 6, 4, 11];
      const table = tf.variable<tf.Rank.R2>(tf.randomNormal([V, d], 0, 1, 'float32', 5));
      const x = tokenIds(B, L, V, 8);
      const y = tokenIds(B, L, V, 9);
      const body = (): tf.Tensor3D =>
        tf.tanh<tf.Tensor3D>(tf.reshape(tf.gather(table, tf.reshape(x, [B * L])), [B, L, d]));
      const ref = tf.variableGrads(() => fullLoss(body(), table, y), [table]);
      const got = tf.variableGrads(() => chunkedLmLoss(body(), table, y, { chunkRows: 5 }), [table]);
      expect(
        relErr(values(got.grads[table.name] as tf.Tensor), values(ref.grads[table.name] as tf.Tensor)),
      ).toBeLessThan(1e-5);
      tf.dispose([table, x, y, got.value, ref.value, ...Object.values(got.grads), ...Object.values(ref.grads)]);
    });

    it('leaks no tensors and rejects bad shapes with a clear error', async () => {
      await useBackend(backend);
      const h = tf.randomNormal<tf.Rank.R3>([2, 3, 4]);
      const table = tf.randomNormal<tf.Rank.R2>([9, 4]);
      const y = tokenIds(2, 3, 9);
      const before = tf.memory().numTensors;
      const { value, grads } = tf.valueAndGrads((a: tf.Tensor, e: tf.Tensor) =>
        chunkedLmLoss(a as tf.Tensor3D, e as tf.Tensor2D, y, { chunkRows: 2 }),
      )([h, table]);
      tf.dispose([value, ...grads]);
      expect(tf.memory().numTensors).toBe(before);
      expect(() => chunkedLmLoss(h, tf.zeros<tf.Rank.R2>([9, 5]), y)).toThrow(/hidden \[B, L, d\] and table \[V, d\]/);
      expect(() => chunkedLmLoss(h, table, tokenIds(3, 2, 9))).toThrow(/targets \[B, L\] = \[2, 3\]/);
      expect(() => chunkedLmLoss(h, table, tf.zeros<tf.Rank.R2>([2, 3]))).toThrow(/int32/);
      expect(() => chunkedLmLoss(h, table, y, { chunkRows: 0 })).toThrow(/chunkRows/);
      tf.dispose([h, table, y]);
    });
  });
}

// chunkedLmLoss equals lmLoss on full logits (value and gradients for h and E), on cpu and wasm.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { chunkedLmLoss, lmLoss, tiedHead } from '@grassflow/gpu-layers';
import { relErr, tokenIds, useBackend, values } from './helpers.js';

/** Reference: logits = h·Eᵀ in full, then the fused cross-entropy. */
function fullLoss(h: tf.Tensor3D, table: tf.Tensor2D, y: tf.Tensor2D): tf.Scalar {
  const [B, L, d] = h.shape;
  const logits = tf.reshape(tiedHead(tf.reshape(h, [B * L, d]) as tf.Tensor2D, table), [
    B,
    L,
    table.shape[0],
  ]) as tf.Tensor3D;
  return lmLoss(logits, y);
}

for (const backend of ['cpu', 'wasm'] as const) {
  describe(`chunkedLmLoss on ${backend}`, () => {
    it('gives the loss and the gradients of lmLoss(h·Eᵀ) for chunks that do and do not divide B·L', async () => {
      await useBackend(backend);
      const [B, L, d, V] = [3, 5, 8, 37];
      const h = tf.randomNormal([B, L, d], 0, 1, 'float32', 1) as tf.Tensor3D;
      const table = tf.randomNormal([V, d], 0, 1, 'float32', 2) as tf.Tensor2D;
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
      const table = tf.variable(tf.randomNormal([V, d], 0, 1, 'float32', 5)) as tf.Variable<tf.Rank.R2>;
      const x = tokenIds(B, L, V, 8);
      const y = tokenIds(B, L, V, 9);
      const body = (): tf.Tensor3D =>
        tf.tanh(tf.reshape(tf.gather(table, tf.reshape(x, [B * L])), [B, L, d])) as tf.Tensor3D;
      const ref = tf.variableGrads(() => fullLoss(body(), table, y), [table]);
      const got = tf.variableGrads(() => chunkedLmLoss(body(), table, y, { chunkRows: 5 }), [table]);
      expect(
        relErr(values(got.grads[table.name] as tf.Tensor), values(ref.grads[table.name] as tf.Tensor)),
      ).toBeLessThan(1e-5);
      tf.dispose([table, x, y, got.value, ref.value, ...Object.values(got.grads), ...Object.values(ref.grads)]);
    });

    it('leaks no tensors and rejects bad shapes with a clear error', async () => {
      await useBackend(backend);
      const h = tf.randomNormal([2, 3, 4]) as tf.Tensor3D;
      const table = tf.randomNormal([9, 4]) as tf.Tensor2D;
      const y = tokenIds(2, 3, 9);
      const before = tf.memory().numTensors;
      const { value, grads } = tf.valueAndGrads((a: tf.Tensor, e: tf.Tensor) =>
        chunkedLmLoss(a as tf.Tensor3D, e as tf.Tensor2D, y, { chunkRows: 2 }),
      )([h, table]);
      tf.dispose([value, ...grads]);
      expect(tf.memory().numTensors).toBe(before);
      expect(() => chunkedLmLoss(h, tf.zeros([9, 5]) as tf.Tensor2D, y)).toThrow(
        /hidden \[B, L, d\] and table \[V, d\]/,
      );
      expect(() => chunkedLmLoss(h, table, tokenIds(3, 2, 9))).toThrow(/targets \[B, L\] = \[2, 3\]/);
      expect(() => chunkedLmLoss(h, table, tf.zeros([2, 3]) as tf.Tensor2D)).toThrow(/int32/);
      expect(() => chunkedLmLoss(h, table, y, { chunkRows: 0 })).toThrow(/chunkRows/);
      tf.dispose([h, table, y]);
    });
  });
}

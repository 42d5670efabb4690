// Shared test helpers: backend switching and tolerant comparisons.
import * as tf from '@tensorflow/tfjs-core';
import { createDecoder, initBackend, type createModel } from '@grassflow/gpu-layers';
import { expect } from 'vitest';

export type TestBackend = 'cpu' | 'wasm';

/** Select a backend for the following statements (via the package's own initBackend). */
export async function useBackend(name: TestBackend): Promise<void> {
  await initBackend({ backend: name });
}

/** ‖a − b‖∞ / max(‖b‖∞, floor): a relative error that near-zero entries cannot blow up. */
export function relErr(a: ArrayLike<number>, b: ArrayLike<number>, floor = 1e-12): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let diff = 0;
  let scale = floor;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs((a[i] as number) - (b[i] as number)));
    scale = Math.max(scale, Math.abs(b[i] as number));
  }
  return diff / scale;
}

/** Values of a tensor as a plain array (synchronously). */
export function values(t: tf.Tensor): Float32Array {
  return Float32Array.from(t.dataSync());
}

/** Deterministic token ids [B, L] in [0, V). */
export function tokenIds(B: number, L: number, V: number, seed = 7): tf.Tensor2D {
  let s = seed;
  const ids = new Int32Array(B * L).map(() => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % V;
  });
  return tf.tensor2d(ids, [B, L], 'int32');
}

/** max |a − b| over all entries. */
export function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] as number);
}

/** Logits [B, T, V] of feeding ids [B, L] in chunks of the given sizes (1 = step). */
export function decodeInChunks(model: ReturnType<typeof createModel>, ids: tf.Tensor2D, chunks: number[]): tf.Tensor3D {
  const [B, L] = ids.shape;
  const decoder = createDecoder(model, { batch: B });
  const parts: tf.Tensor3D[] = [];
  let t = 0;
  for (const size of chunks) {
    const chunk = tf.slice(ids, [0, t], [B, size]);
    if (size === 1) {
      const logits = decoder.step(tf.reshape<tf.Rank.R1>(chunk, [B])); // [B, V]
      parts.push(tf.expandDims<tf.Tensor3D>(logits, 1));
      logits.dispose();
    } else {
      parts.push(decoder.prime(chunk, { logits: 'all' })); // [B, size, V]
    }
    chunk.dispose();
    t += size;
    expect(decoder.position).toBe(t);
  }
  expect(t).toBe(L);
  decoder.dispose();
  const all = tf.concat(parts, 1);
  tf.dispose(parts);
  return all;
}

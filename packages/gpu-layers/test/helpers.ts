// Shared test helpers: backend switching and tolerant comparisons.
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '@grassflow/gpu-layers';

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

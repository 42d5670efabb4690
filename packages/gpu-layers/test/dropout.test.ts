// Dropout's counter-based mask: lowbias32 as its C reference computes it, the keep rate, the two values, the same bits
// from the native fill and the JS loop, a mask that follows Math.random's seed, and gradients through the mask.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import { dropout, initBackend, nativeKernelsInfo, useNativeKernels } from '@grassflow/gpu-layers';
import { dropoutMaskInto, hash32 } from '../src/ops/dropout.js';

await initBackend({ backend: 'wasm' });
const nativeLoaded = nativeKernelsInfo().active;
afterAll(() => {
  if (nativeLoaded) useNativeKernels(true);
});

/** Math.random returning `value` while f runs. */
function withRandom<T>(value: number, f: () => T): T {
  const saved = Math.random;
  Math.random = () => value;
  try {
    return f();
  } finally {
    Math.random = saved;
  }
}

describe('dropout', () => {
  it('hash32 is lowbias32 (values from a C implementation of it)', () => {
    expect([0, 1, 2, 0xdeadbeef, 0xffffffff].map(hash32)).toEqual([0, 1753845952, 3507691905, 3861431939, 1734902346]);
  });

  it('keeps each entry with probability keep (within 5σ over 10⁶ entries), as 1/keep, else 0', () => {
    for (const keep of [0.9, 0.5, 0.25]) {
      const m = new Float32Array(1_000_000);
      dropoutMaskInto(m, keep, 12345);
      const kept = m.reduce((c, v) => c + (v !== 0 ? 1 : 0), 0);
      const sigma = Math.sqrt(m.length * keep * (1 - keep));
      expect(Math.abs(kept - keep * m.length)).toBeLessThan(5 * sigma);
      expect(new Set(m)).toEqual(new Set([0, Math.fround(1 / keep)]));
    }
  });

  it.skipIf(!nativeLoaded)('the native fill and the JS loop give the same bits (odd lengths, several seeds)', () => {
    for (const [n, seed] of [
      [1, 0],
      [100_003, 7],
      [262_147, 0xfffffff1],
    ] as const) {
      const masks = [true, false].map((on) => {
        useNativeKernels(on);
        const m = new Float32Array(n);
        dropoutMaskInto(m, 0.9, seed);
        return m;
      });
      useNativeKernels(true);
      expect(masks[0]).toEqual(masks[1]);
    }
  });

  it('masks by the seed Math.random gives: the same seed the same mask, another seed another', () => {
    const x = tf.ones([64, 64]);
    const a = withRandom(0.25, () => dropout(x, 0.5, true));
    const b = withRandom(0.25, () => dropout(x, 0.5, true));
    const c = withRandom(0.75, () => dropout(x, 0.5, true));
    expect(Array.from(a.dataSync())).toEqual(Array.from(b.dataSync()));
    expect(Array.from(a.dataSync())).not.toEqual(Array.from(c.dataSync()));
    expect(dropout(x, 0.5, false)).toBe(x);
    expect(dropout(x, 0, true)).toBe(x);
    expect(() => dropout(x, 1, true)).toThrow(/rate must be in \[0, 1\)/);
    tf.dispose([x, a, b, c]);
  });

  it('its gradient is the mask: dL/dx = m ⊙ dL/dy', () => {
    tf.tidy(() => {
      const x = tf.randomNormal([32, 48], 0, 1, 'float32', 3);
      const dy = tf.randomNormal([32, 48], 0, 1, 'float32', 4);
      const y = withRandom(0.5, () => dropout(x, 0.2, true));
      const dx = withRandom(0.5, () => tf.grad((v: tf.Tensor) => tf.sum(tf.mul(dropout(v, 0.2, true), dy)))(x));
      const mask = tf.div(y, x); // 0 or 1/0.8 (x ≠ 0 almost surely)
      const want = tf.mul(mask, dy).dataSync();
      const got = dx.dataSync();
      got.forEach((g, i) => expect(g).toBeCloseTo(want[i] as number, 5));
    });
  });
});

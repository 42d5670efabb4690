// The fused LayerNorm, GELU and expressive-attention kernels of the wasm backend equal the composition of tfjs ops they
// replace (the path every other backend takes): values and gradients, on the shapes the models use, odd widths, one
// row, a key/value cache and bidirectional attention included. Twice: the native library's kernels
// (@grassflow/native-linux-x64, where it is built) and the JS ones (the fallback).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attentionWeights,
  causalAttention,
  chunkedLmLoss,
  crossEntropy,
  gelu,
  initBackend,
  layerNorm,
  nativeKernelsInfo,
  tokenNll,
  useFusedKernels,
  useNativeKernels,
  type AttentionOptions,
  type AttentionWeights,
} from '@grassflow/gpu-layers';
import { FUSED, JS_FUSED_KERNELS } from '../src/backend/wasm-fused.js';
import { setUpWasmNative } from '../src/backend/wasm-native.js';
import { relErr, values } from './helpers.js';

const { threads = 1 } = await initBackend({ backend: 'wasm' });
const nativeLoaded = nativeKernelsInfo().active;
afterAll(() => {
  useFusedKernels(true);
  if (nativeLoaded) useNativeKernels(true);
});

/** Where the library is built for this platform, only GRASSFLOW_NATIVE=off may leave the kernels in JS. */
const NATIVE_LIB = join(import.meta.dirname, '../../native-linux-x64/lib/libgrassflow_native.so');

it('the native kernels load where their library is built (linux-x64), unless GRASSFLOW_NATIVE=off', () => {
  const expected = process.platform === 'linux' && process.arch === 'x64' && existsSync(NATIVE_LIB);
  const off = /^(off|0|false|none|js)$/i.test(process.env['GRASSFLOW_NATIVE'] ?? '');
  expect(nativeKernelsInfo().active, nativeKernelsInfo().summary).toBe(expected && !off);
  if (nativeLoaded) expect(nativeKernelsInfo().summary).toMatch(/^native (avx512f|avx2|scalar), \d+ threads?$/);
});

it.skipIf(!nativeLoaded)(
  'GRASSFLOW_NATIVE=off at set-up keeps the JS kernels; unset, the native ones return',
  async () => {
    const before = process.env['GRASSFLOW_NATIVE'];
    try {
      process.env['GRASSFLOW_NATIVE'] = 'off';
      const off = await setUpWasmNative(threads);
      expect([off.active, off.summary]).toEqual([false, 'off (GRASSFLOW_NATIVE=off): JS fused kernels']);
      expect(tf.getKernel(FUSED.layerNorm, 'wasm')?.kernelFunc).toBe(JS_FUSED_KERNELS[FUSED.layerNorm]);
      delete process.env['GRASSFLOW_NATIVE'];
      const on = await setUpWasmNative(threads);
      expect(on.active, on.summary).toBe(true);
      expect(tf.getKernel(FUSED.layerNorm, 'wasm')?.kernelFunc).not.toBe(JS_FUSED_KERNELS[FUSED.layerNorm]);
    } finally {
      if (before === undefined) delete process.env['GRASSFLOW_NATIVE'];
      else process.env['GRASSFLOW_NATIVE'] = before;
      useNativeKernels(true);
    }
  },
);

it.skipIf(!nativeLoaded)('the native pool grows after kernels ran; its new threads join the later calls', async () => {
  const check = () => {
    const [composed, fused] = bothPaths(() => {
      const x = randn([64, 256], 11, 2);
      return [layerNorm(x, tf.ones([256]), tf.zeros([256]), 1e-5), gelu(x)];
    });
    composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
  };
  try {
    check(); // calls on the pool as it is
    expect((await setUpWasmNative(threads + 2)).summary).toMatch(new RegExp(`, ${threads + 2} threads$`));
    check(); // the two new workers take part from here on
  } finally {
    await setUpWasmNative(threads);
  }
});

/** f's outputs with the composed ops and with the fused kernels. */
function bothPaths(f: () => tf.Tensor[]): [Float32Array[], Float32Array[]] {
  const run = (fused: boolean) => {
    useFusedKernels(fused);
    try {
      return tf.tidy(() => f().map(values));
    } finally {
      useFusedKernels(true);
    }
  };
  return [run(false), run(true)];
}

/** The names of the kernels f runs (inside a tidy). */
function kernelsRun(f: () => void): string[] {
  const names: string[] = [];
  const engine = tf.engine();
  const runKernel = engine.runKernel.bind(engine);
  engine.runKernel = ((name: string, ...rest: unknown[]) => {
    names.push(name);
    return (runKernel as (...a: unknown[]) => unknown)(name, ...rest);
  }) as typeof engine.runKernel;
  try {
    tf.tidy(f);
  } finally {
    engine.runKernel = runKernel;
  }
  return names;
}

function randn(shape: number[], seed: number, scale = 1): tf.Tensor {
  return tf.mul(tf.randomNormal(shape, 0, 1, 'float32', seed), scale);
}

for (const path of ['native', 'js'] as const)
  describe.skipIf(path === 'native' && !nativeLoaded)(`fused kernels on wasm, ${path}`, () => {
    beforeAll(() => {
      if (nativeLoaded) useNativeKernels(path === 'native');
    });

    const SHAPES = [
      { shape: [2, 16, 64], what: 'a block input [B, L, d]' },
      { shape: [1, 1, 64], what: 'one row (a decoding step)' },
      { shape: [7, 37], what: 'odd width' },
      { shape: [3, 5, 256], what: 'd 256 (paper-6l)' },
      { shape: [4, 64, 256], what: "above the JS GELU kernel's size (composed there)" },
    ];
    for (const { shape, what } of SHAPES) {
      it(`layerNorm equals the composed ops to 1e-5, values and gradients of x, γ, β: ${what}`, () => {
        const d = shape[shape.length - 1] as number;
        const [composed, fused] = bothPaths(() => {
          const x = randn(shape, 1, 3); // off-centre and wide, so that mean and variance matter
          const shifted = tf.add(x, 2);
          const gamma = randn([d], 2);
          const beta = randn([d], 3);
          const dy = randn(shape, 4);
          const loss = (a: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(layerNorm(a, g, b, 1e-5), dy));
          const grads = tf.grads(loss)([shifted, gamma, beta]);
          return [layerNorm(shifted, gamma, beta, 1e-5), ...grads];
        });
        composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
      });

      it(`gelu equals the composed ops to 1e-5, values and gradients: ${what}`, () => {
        const [composed, fused] = bothPaths(() => {
          const x = randn(shape, 5, 3);
          const dy = randn(shape, 6);
          const [dx] = tf.grads((a: tf.Tensor) => tf.sum(tf.mul(gelu(a), dy)))([x]);
          return [gelu(x), dx as tf.Tensor];
        });
        composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
      });
    }

    for (const kind of ['ea', 'dpa'] as const) {
      it(`${kind} attention weights equal the composed ops to 1e-5, values and gradients, rows sum to 1`, () => {
        const [composed, fused] = bothPaths(() => {
          const scores = randn([8, 37, 37], 7, 2) as tf.Tensor3D; // [BH, L, L], odd L
          const dy = randn([8, 37, 37], 8);
          const [ds] = tf.grads((s: tf.Tensor) => tf.sum(tf.mul(attentionWeights(s as tf.Tensor3D, kind, 1e-6), dy)))([
            scores,
          ]);
          return [attentionWeights(scores, kind, 1e-6), ds as tf.Tensor];
        });
        composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
        const a = fused[0] as Float32Array;
        for (const row of [0, 1, 36, 8 * 37 - 1]) {
          const i = row % 37;
          const r = a.subarray(row * 37, row * 37 + 37);
          expect(
            r.slice(i + 1).every((v) => v === 0),
            `row ${row}: nothing past the causal limit`,
          ).toBe(true);
          // EA's ε keeps Σ a just below 1: 1 − Σa = ε/(Σe + ε)
          expect(r.reduce((p, v) => p + v, 0)).toBeCloseTo(1, 5);
        }
      });

      for (const { what, L, t0, causal } of [
        { what: 'causal, L 16', L: 16, t0: 0, causal: true },
        { what: 'with a cache of 5 positions, 3 new', L: 3, t0: 5, causal: true },
        { what: 'one new query after 9 cached (a decoding step)', L: 1, t0: 9, causal: true },
        { what: 'bidirectional', L: 11, t0: 0, causal: false },
      ]) {
        it(`${kind} attention through the fused kernels equals the composed ops, output and gradients: ${what}`, () => {
          const [B, d, H] = [2, 16, 4];
          const [composed, fused] = bothPaths(() => {
            const h = randn([B, L, d], 11) as tf.Tensor3D;
            const w: AttentionWeights = {
              wQkv: randn([d, 3 * d], 12, 0.5) as tf.Tensor2D,
              bQkv: randn([3 * d], 13, 0.1) as tf.Tensor1D,
              wProj: randn([d, d], 14, 0.3) as tf.Tensor2D,
              bProj: randn([d], 15, 0.1) as tf.Tensor1D,
            };
            const cache =
              t0 === 0
                ? undefined
                : {
                    keysT: randn([B * H, d / H, t0], 16) as tf.Tensor3D,
                    values: randn([B * H, t0, d / H], 17) as tf.Tensor3D,
                  };
            const options: AttentionOptions = { nHeads: H, kind, eps: 1e-6, causal, ...(cache ? { cache } : {}) };
            const dy = randn([B, L, d], 18);
            const loss = (x: tf.Tensor, wq: tf.Tensor) =>
              tf.sum(tf.mul(causalAttention(x as tf.Tensor3D, { ...w, wQkv: wq as tf.Tensor2D }, options), dy));
            return [causalAttention(h, w, options), ...tf.grads(loss)([h, w.wQkv])];
          });
          composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
        });
      }
    }

    it("DPA, EA's 'relative' ε and a key mask take the composed ops (no fused kernel runs)", () => {
      const names = kernelsRun(() => {
        attentionWeights(tf.ones<tf.Rank.R3>([1, 4, 4]), 'ea', 1e-6, 'relative');
        attentionWeights(tf.ones<tf.Rank.R3>([1, 4, 4]), 'dpa', 1e-6);
        const w: AttentionWeights = {
          wQkv: tf.ones([4, 12]),
          bQkv: tf.zeros([12]),
          wProj: tf.ones([4, 4]),
          bProj: tf.zeros([4]),
        };
        causalAttention(tf.ones([1, 3, 4]), w, { nHeads: 1, kind: 'ea', eps: 1e-6, keyMask: tf.ones([1, 3]) });
      });
      expect(names.filter((n) => n.startsWith('Grassflow'))).toEqual([]);
    });

    it('gelu at known points: GELU(0) = 0, GELU(1) = Φ(1) = 0.841345, GELU(−1) = −0.158655, GELU(10) = 10', () => {
      const y = tf.tidy(() => Array.from(gelu(tf.tensor1d([0, 1, -1, 10])).dataSync()));
      expect(y[0]).toBe(0);
      expect(y[1]).toBeCloseTo(0.841345, 6);
      expect(y[2]).toBeCloseTo(-0.158655, 6);
      expect(y[3]).toBeCloseTo(10, 5);
    });

    it('layerNorm of a constant row is β (x̂ = 0: no division by a zero variance)', () => {
      const y = tf.tidy(() =>
        Array.from(layerNorm(tf.fill([1, 4], 3), tf.ones([4]), tf.tensor1d([1, 2, 3, 4])).dataSync()),
      );
      expect(y).toEqual([1, 2, 3, 4]);
    });

    const LOSS_SHAPES = [
      { N: 64, V: 1000, what: '64 rows, V 1,000' },
      { N: 3, V: 30_522, what: 'a tail of the V 30,522 vocabulary' },
      { N: 1, V: 7, what: 'one row, V 7' },
    ];
    for (const { N, V, what } of LOSS_SHAPES) {
      it(`crossEntropy and tokenNll equal the composed ops to 1e-5, values and gradients: ${what}`, () => {
        const [composed, fused] = bothPaths(() => {
          const logits = tf.add(randn([N, V], 7, 4), 3); // wide and off-centre: the row maximum matters
          const targets = tf.tensor1d(
            Array.from({ length: N }, (_, n) => (n * 7919) % V),
            'int32',
          );
          const [dx] = tf.grads((x: tf.Tensor) => tf.mul(crossEntropy(x as tf.Tensor2D, targets), 2.5))([logits]);
          return [
            crossEntropy(logits as tf.Tensor2D, targets),
            tokenNll(logits as tf.Tensor2D, targets),
            dx as tf.Tensor,
          ];
        });
        composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
      });
    }

    it('chunkedLmLoss (several chunks) equals the composed ops to 1e-5, value and gradients of h and E', () => {
      const [composed, fused] = bothPaths(() => {
        const [B, L, d, V] = [2, 9, 16, 300];
        const h = randn([B, L, d], 8);
        const table = randn([V, d], 9, 0.5);
        const targets = tf.tensor2d(
          Array.from({ length: B * L }, (_, n) => (n * 31) % V),
          [B, L],
          'int32',
        );
        const f = (a: tf.Tensor, e: tf.Tensor) =>
          chunkedLmLoss(a as tf.Tensor3D, e as tf.Tensor2D, targets, { chunkRows: 5 });
        return [f(h, table), ...tf.grads(f)([h, table])];
      });
      composed.forEach((c, i) => expect(relErr(fused[i] as Float32Array, c), `output ${i}`).toBeLessThan(1e-5));
    });

    it('the fused kernels are the ones that run on wasm (one kernel a call)', () => {
      const names = kernelsRun(() => {
        layerNorm(tf.ones([2, 8]), tf.ones([8]), tf.zeros([8]));
        gelu(tf.ones([2, 8]));
        tf.grad((s: tf.Tensor) => tf.sum(attentionWeights(s as tf.Tensor3D, 'ea', 1e-6)))(tf.ones([1, 4, 4]));
        const targets = tf.tensor1d([1, 2], 'int32');
        tf.grad((x: tf.Tensor) => crossEntropy(x as tf.Tensor2D, targets))(tf.ones([2, 5]));
      });
      expect(names.filter((n) => n.startsWith('Grassflow'))).toEqual([
        'GrassflowLayerNorm',
        'GrassflowGelu',
        'GrassflowExpressiveWeights',
        'GrassflowExpressiveWeightsGrad',
        ...(path === 'native' ? ['GrassflowSoftmaxNll', 'GrassflowSoftmaxNllGrad'] : []),
      ]);
    });
  });

// The fused LayerNorm and GELU kernels of the wasm backend equal the composition of tfjs ops they replace (the path
// every other backend takes): values and gradients, on the shapes the models use, odd widths and one row included.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import { gelu, initBackend, layerNorm, useFusedKernels } from '@grassflow/gpu-layers';
import { relErr, values } from './helpers.js';

await initBackend({ backend: 'wasm' });
afterAll(() => useFusedKernels(true));

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

function randn(shape: number[], seed: number, scale = 1): tf.Tensor {
  return tf.mul(tf.randomNormal(shape, 0, 1, 'float32', seed), scale);
}

describe('fused kernels on wasm', () => {
  const SHAPES = [
    { shape: [2, 16, 64], what: 'a block input [B, L, d]' },
    { shape: [1, 1, 64], what: 'one row (a decoding step)' },
    { shape: [7, 37], what: 'odd width' },
    { shape: [3, 5, 256], what: 'd 256 (paper-6l)' },
    { shape: [4, 64, 256], what: 'above the fused GELU size (the composed GELU runs)' },
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

  it('the fused kernels are the ones that run on wasm (one kernel a call)', () => {
    const names: string[] = [];
    const engine = tf.engine();
    const runKernel = engine.runKernel.bind(engine);
    engine.runKernel = ((name: string, ...rest: unknown[]) => {
      names.push(name);
      return (runKernel as (...a: unknown[]) => unknown)(name, ...rest);
    }) as typeof engine.runKernel;
    try {
      tf.tidy(() => {
        layerNorm(tf.ones([2, 8]), tf.ones([8]), tf.zeros([8]));
        gelu(tf.ones([2, 8]));
      });
    } finally {
      engine.runKernel = runKernel;
    }
    expect(names.filter((n) => n.startsWith('Grassflow'))).toEqual(['GrassflowLayerNorm', 'GrassflowGelu']);
  });
});

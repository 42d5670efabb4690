// The fused Plücker op of grassmannMixing's training path: its analytic gradient against the tape's gradient of
// the reference forward (fused: false, grassmannMixingReference) and against central finite differences; its values
// against the reference's. On wasm twice: the native kernels (@grassflow/native-linux-x64, where it is built) and the
// composed tfjs ops they replace.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  createModel,
  grassmannMixing,
  lmLoss,
  nativeKernelsInfo,
  preset,
  useNativeKernels,
  type GrassmannMixingOptions,
  type GrassmannMixingWeights,
} from '@grassflow/gpu-layers';
import { relErr, tokenIds, useBackend, values } from './helpers.js';

const rnd = (shape: number[], seed: number, s = 1) => tf.randomNormal(shape, 0, s, 'float32', seed);

function mixingWeights(d: number, r: number, seed: number): GrassmannMixingWeights {
  const C = (r * (r - 1)) / 2;
  return {
    wRed: rnd([d, r], seed, 0.7) as tf.Tensor2D,
    bRed: rnd([r], seed + 1, 0.3) as tf.Tensor1D,
    wPlu: rnd([C, d], seed + 2, 0.7) as tf.Tensor2D,
    bPlu: rnd([d], seed + 3, 0.3) as tf.Tensor1D,
    wGate: rnd([2 * d, d], seed + 4, 0.7) as tf.Tensor2D,
    bGate: rnd([d], seed + 5, 0.3) as tf.Tensor1D,
  };
}

type Direction = GrassmannMixingOptions['direction'];

/** Σ(probe ⊙ mixing) as a function of h, W_red and b_red (the inputs whose gradient crosses the fused op). */
function objective(
  w: GrassmannMixingWeights,
  probe: tf.Tensor,
  options: GrassmannMixingOptions,
): (h: tf.Tensor3D, wRed: tf.Tensor2D, bRed: tf.Tensor1D) => tf.Scalar {
  return (h, wRed, bRed) => tf.sum(tf.mul(grassmannMixing(h, { ...w, wRed, bRed }, options), probe));
}

/** Gradients of `f` with respect to its three inputs, as plain arrays. */
function gradsOf(
  f: (h: tf.Tensor3D, wRed: tf.Tensor2D, bRed: tf.Tensor1D) => tf.Scalar,
  inputs: [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D],
): Float32Array[] {
  return tf.tidy(() =>
    tf
      .grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => f(a as tf.Tensor3D, b as tf.Tensor2D, c as tf.Tensor1D))([
        ...inputs,
      ])
      .map(values),
  );
}

const cases: Array<[string, number[], Direction]> = [
  ['causal, one offset', [1], 'causal'],
  ['causal, offsets 1, 3, 4 and one ≥ L', [1, 3, 4, 9], 'causal'],
  ['bidirectional, offsets 1, 2, 5', [1, 2, 5], 'bidirectional'],
];

await useBackend('wasm');
const nativeLoaded = nativeKernelsInfo().active;

/** Where the op runs: the cpu backend, or wasm with the native kernels or with the composed ops. */
type OpPath = 'cpu' | 'wasm, native' | 'wasm, composed';
const PATHS: OpPath[] = ['cpu', ...(nativeLoaded ? (['wasm, native'] as const) : []), 'wasm, composed'];

async function usePath(path: OpPath): Promise<void> {
  await useBackend(path === 'cpu' ? 'cpu' : 'wasm');
  if (nativeLoaded && path !== 'cpu') useNativeKernels(path === 'wasm, native');
}

/** The kernel names f runs. */
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

const sized: Array<[string, number[], Direction, number[]]> = [
  ...cases.map(([n, o, dir]): [string, number[], Direction, number[]] => [n, o, dir, [2, 7, 6, 5]]),
  ['causal, paper offsets 1 … 16, r 16, L 40', [1, 2, 4, 8, 12, 16], 'causal', [3, 40, 24, 16]],
  ['bidirectional, offsets 1, 4, 12, r 16, L 40', [1, 4, 12], 'bidirectional', [2, 40, 24, 16]],
];

describe.each(PATHS)('fused Plücker op on %s', (path) => {
  it.each(sized)('%s: values and gradients equal the unfused path (1e-5)', async (_n, offsets, direction, dims) => {
    await usePath(path);
    const [B, L, d, r] = dims as [number, number, number, number];
    const w = mixingWeights(d, r, 40);
    const h = rnd([B, L, d], 41) as tf.Tensor3D;
    const probe = rnd([B, L, d], 42);
    const fused: GrassmannMixingOptions = { offsets, eps: 1e-6, direction };
    const tape: GrassmannMixingOptions = { ...fused, fused: false };
    expect(relErr(values(grassmannMixing(h, w, fused)), values(grassmannMixing(h, w, tape)))).toBeLessThan(1e-6);
    const inputs: [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D] = [h, w.wRed, w.bRed];
    const a = gradsOf(objective(w, probe, fused), inputs);
    const b = gradsOf(objective(w, probe, tape), inputs);
    a.forEach((g, k) => {
      expect(relErr(g, b[k] as Float32Array)).toBeLessThan(1e-5);
      expect(Math.max(...g.map(Math.abs))).toBeGreaterThan(1e-3); // a real gradient, not zeros on both sides
    });
  });

  it.each([
    ['blend', false],
    ['blend', true],
    ['additive', false],
  ] as const)('gate %s (LN_mix %s): gradients of every weight equal the unfused path (1e-5)', async (gate, ln) => {
    await usePath(path);
    const [B, L, d, r] = [2, 9, 8, 5];
    const base = mixingWeights(d, r, 80);
    const w: GrassmannMixingWeights = ln
      ? { ...base, ln: { weight: rnd([d], 81, 0.5), bias: rnd([d], 82, 0.3) } as GrassmannMixingWeights['ln'] }
      : base;
    const h = rnd([B, L, d], 83) as tf.Tensor3D;
    const probe = rnd([B, L, d], 84);
    const names = ['wRed', 'bRed', 'wPlu', 'bPlu', 'wGate', 'bGate'] as const;
    const grads = (fused: boolean) =>
      tf.tidy(() => {
        const options: GrassmannMixingOptions = { offsets: [1, 3], eps: 1e-6, direction: 'causal', gate, fused };
        const f = (x: tf.Tensor, ...ws: tf.Tensor[]) => {
          const weights = { ...w, ...Object.fromEntries(names.map((n, k) => [n, ws[k]])) };
          return tf.sum(tf.mul(grassmannMixing(x as tf.Tensor3D, weights, options), probe));
        };
        return tf
          .grads(f)([h, ...names.map((n) => w[n])])
          .map(values);
      });
    const a = grads(true);
    const b = grads(false);
    a.forEach((g, k) => {
      expect(relErr(g, b[k] as Float32Array), k === 0 ? 'h' : names[k - 1]).toBeLessThan(1e-5);
      expect(Math.max(...g.map(Math.abs))).toBeGreaterThan(1e-3);
    });
  });

  it.skipIf(path === 'cpu')('the native kernels are the ones that run (forward and backward), or none', async () => {
    await usePath(path);
    const w = mixingWeights(6, 5, 70);
    const h = rnd([2, 7, 6], 71) as tf.Tensor3D;
    const probe = rnd([2, 7, 6], 72);
    const names = kernelsRun(() => {
      gradsOf(objective(w, probe, { offsets: [1, 2], eps: 1e-6, direction: 'causal' }), [h, w.wRed, w.bRed]);
    });
    const native = names.filter((n) => n.startsWith('Grassflow'));
    // GRASSFLOW_FUSED=off (the test:xnnpack run) bypasses every fused kernel, native ones too
    const fusedOff = /^(off|0|false)$/i.test(process.env['GRASSFLOW_FUSED'] ?? '');
    const kernels = ['GrassflowPairSum', 'GrassflowBlendGate', 'GrassflowBlendGateGrad', 'GrassflowPairSumGrad'];
    const want = path === 'wasm, native' && !fusedOff ? kernels : [];
    expect(native).toEqual(want);
  });

  it('a zero pair (z_{t−Δ} ∥ z_t) keeps a finite gradient, equal to the unfused one', async () => {
    await usePath(path);
    const [d, r] = [3, 3];
    const w = { ...mixingWeights(d, r, 60), wRed: tf.eye(3), bRed: tf.zeros<tf.Rank.R1>([3]) };
    const h = tf.tensor3d([
      [
        [1, 2, 3],
        [2, 4, 6],
        [0.5, -1, 2],
        [0, 0, 0],
      ],
    ]); // rows 0 and 1 parallel (p = 0 at t = 1), row 3 zero
    const probe = rnd([1, 4, d], 61);
    const opts: GrassmannMixingOptions = { offsets: [1, 2], eps: 1e-6, direction: 'causal' };
    const inputs: [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D] = [h, w.wRed, w.bRed];
    const a = gradsOf(objective(w, probe, opts), inputs);
    const b = gradsOf(objective(w, probe, { ...opts, fused: false }), inputs);
    a.forEach((g, k) => {
      expect(g.every(Number.isFinite)).toBe(true);
      expect(relErr(g, b[k] as Float32Array)).toBeLessThan(1e-5);
    });
  });
});

describe('fused Plücker op, finite differences', () => {
  it.each(cases)('%s: gradients agree with central differences (cpu)', async (_n, offsets, direction) => {
    await useBackend('cpu');
    const [B, L, d, r] = [1, 6, 4, 4];
    const w = mixingWeights(d, r, 50);
    const h = rnd([B, L, d], 51) as tf.Tensor3D;
    const probe = rnd([B, L, d], 52);
    const f = objective(w, probe, { offsets, eps: 1e-6, direction });
    const inputs: [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D] = [h, w.wRed, w.bRed];
    const analytic = gradsOf(f, inputs);
    // float32: a step of 1e-2 keeps the rounding error of f (~1e-7·|f|/step) and the O(step²) term both small
    const step = 1e-2;
    let checked = 0;
    inputs.forEach((x, which) => {
      const base = values(x);
      for (let k = 0; k < base.length; k++) {
        const at = (delta: number): number =>
          tf.tidy(() => {
            const v = Float32Array.from(base);
            v[k] = (v[k] as number) + delta;
            const args: [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D] = [...inputs];
            if (which === 0) args[0] = tf.tensor3d(v, h.shape);
            else if (which === 1) args[1] = tf.tensor2d(v, w.wRed.shape);
            else args[2] = tf.tensor1d(v);
            return f(...args).dataSync()[0] as number;
          });
        const numeric = (at(step) - at(-step)) / (2 * step);
        const got = (analytic[which] as Float32Array)[k] as number;
        expect(Math.abs(numeric - got)).toBeLessThan(2e-3 + 1e-2 * Math.abs(numeric));
        checked++;
      }
    });
    expect(checked).toBe(B * L * d + d * r + r);
  });
});

describe.each(PATHS)('fused training on %s', (path) => {
  it('a tiny Grassmann LM with 3 offsets in a layer: 20 Adam steps lower the loss and leak no tensors', async () => {
    await usePath(path);
    const config = preset('tiny', { offsets: [[1, 2, 4], [3]] });
    const model = createModel(config, { seed: 3 });
    const optimizer = tf.train.adam(3e-3);
    const ids = tokenIds(3, 10, config.vocabSize, 11);
    const targets = tokenIds(3, 10, config.vocabSize, 12);
    let afterFirst = 0;
    const losses: number[] = [];
    for (let step = 0; step < 20; step++) {
      const loss = optimizer.minimize(
        () => lmLoss(model.apply(ids, { training: true }), targets),
        true,
        model.trainableVariables(),
      );
      losses.push((loss as tf.Scalar).dataSync()[0] as number);
      loss?.dispose();
      if (step === 0) afterFirst = tf.memory().numTensors; // Adam's slots exist from here on
    }
    expect(tf.memory().numTensors).toBe(afterFirst);
    expect(losses[19] as number).toBeLessThan(losses[0] as number);
    optimizer.dispose();
    model.dispose();
  });
});

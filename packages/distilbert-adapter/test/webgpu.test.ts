// The encoder on the 'webgpu' backend (tfjs-backend-webgpu on Dawn's Node binding) against cpu: forward outputs and a
// gradient of the trainable encoder, and forwardCached with tensor inputs (read with await data(), since dataSync
// throws on webgpu under Node). Without a GPU it runs on Mesa's lavapipe (software Vulkan, slow): the model is tiny.
// Skipped (with the reason printed) only when the webgpu packages or any adapter are missing and
// GRASSFLOW_REQUIRE_WEBGPU is not set; CI sets it after installing lavapipe, so there it fails instead.
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend, webgpuSuiteGate } from '@grassflow/gpu-layers';
import { loadDistilBert } from '@grassflow/distilbert-adapter';
import { maxAbsDiff, referenceForward } from './helpers/reference.js';
import { flat, makeTemp, removeTemp } from './helpers/setup.js';
import { writeTinyModel, type TinyModel } from './helpers/tiny-model.js';

const { missing, skip } = await webgpuSuiteGate('webgpu distilbert tests');

const IDS = [
  [2, 6, 8, 9, 5, 11, 3, 12, 13],
  [2, 7, 14, 23, 3, 0, 0, 0, 0],
];
const MASK = [
  [1, 1, 1, 1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 0, 0, 0, 0],
];
const ids = { data: flat(IDS), shape: [2, 9] as [number, number] };
const mask = { data: flat(MASK), shape: [2, 9] as [number, number] };

let root: string;
let tiny: TinyModel;

beforeAll(async () => {
  root = await makeTemp('webgpu');
  tiny = await writeTinyModel(join(root, 'tiny'), { seed: 4 });
});
afterAll(() => removeTemp(root));

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let scale = 1e-12;
  for (let i = 0; i < b.length; i++) scale = Math.max(scale, Math.abs(b[i] as number));
  return maxAbsDiff(a, b) / scale;
}

/** The trainable encoder's output and the gradient of Σ out² with respect to layer 0's q_lin weight, on `backend`. */
async function run(backend: 'cpu' | 'webgpu'): Promise<{ out: Float32Array; grad: Float32Array }> {
  await initBackend({ backend });
  expect(tf.getBackend()).toBe(backend);
  const enc = await loadDistilBert(tiny.dir, { mode: 'trainable' });
  try {
    const before = tf.memory().numTensors;
    const outT = enc.forward(ids, mask); // [2, 9, dim]
    const out = (await outT.data()) as Float32Array;
    const q = enc
      .trainableVariables()
      .find((x) => x.name.endsWith('/transformer.layer.0.attention.q_lin.weight')) as tf.Variable;
    const { value, grads } = tf.variableGrads(() => tf.sum<tf.Scalar>(tf.square(enc.forward(ids, mask))), [q]);
    const grad = (await (grads[q.name] as tf.Tensor).data()) as Float32Array;
    tf.dispose([outT, value, ...Object.values(grads)]);
    expect(tf.memory().numTensors).toBe(before);
    return { out, grad };
  } finally {
    enc.dispose();
  }
}

describe.skipIf(skip)('distilbert encoder on webgpu', () => {
  it('forward and a gradient equal cpu to 1e-4 relative (and the float64 reference)', async () => {
    expect(missing).toBeUndefined();
    const cpu = await run('cpu');
    const gpu = await run('webgpu');
    expect(relErr(gpu.out, cpu.out)).toBeLessThan(1e-4);
    expect(maxAbsDiff(gpu.out, referenceForward(tiny.weights, tiny.config, IDS, MASK))).toBeLessThan(1e-4);
    expect(Math.max(...cpu.grad.map(Math.abs))).toBeGreaterThan(0);
    expect(relErr(gpu.grad, cpu.grad)).toBeLessThan(1e-4);
    await initBackend({ backend: 'cpu' });
  });

  it('forwardCached takes tensors that live on the GPU; forward says what to pass instead', async () => {
    expect(missing).toBeUndefined();
    await initBackend({ backend: 'webgpu' });
    const enc = await loadDistilBert(tiny.dir, { featureCache: join(root, 'features') });
    // Computed on the GPU (x · I, cast), so that their values exist only there until a read with await data() copies
    // them back (tfjs-backend-webgpu runs small element-wise ops on the cpu, but not matMul).
    const onGpu = (rows: number[][]) =>
      tf.tidy(() => tf.cast(tf.matMul<tf.Tensor2D>(tf.tensor2d(rows), tf.eye(rows[0]?.length ?? 0)), 'int32'));
    const idsT = onGpu(IDS);
    const maskT = onGpu(MASK);
    try {
      expect(() => enc.forward(idsT, maskT)).toThrow(
        /inputIds: the 'webgpu' backend cannot read this tensor back synchronously .*pass \{ data: Int32Array/,
      );
      const r = await enc.forwardCached(idsT, maskT);
      expect([r.hits, r.misses, r.corrupt]).toEqual([0, 2, 0]);
      const got = (await r.lastHiddenState.data()) as Float32Array;
      r.lastHiddenState.dispose();
      const ref = referenceForward(tiny.weights, tiny.config, IDS, MASK);
      // positions after the last attended one are zero in the cached result: compare the attended ones
      const dim = tiny.config.dim;
      for (const [b, row] of MASK.entries())
        for (const [t, m] of row.entries()) {
          if (m === 0) continue;
          const at = (b * 9 + t) * dim;
          expect(maxAbsDiff(got.subarray(at, at + dim), ref.subarray(at, at + dim))).toBeLessThan(1e-4);
        }
    } finally {
      tf.dispose([idsT, maskT]);
      enc.dispose();
      await initBackend({ backend: 'cpu' });
    }
  });
});

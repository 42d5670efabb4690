// The 'webgpu' backend (tfjs-backend-webgpu on Dawn's Node binding) against cpu: logits and gradients of every
// model kind, a flat tensor count over training steps, a process that exits by itself. Without a GPU it runs on
// Mesa's lavapipe (software Vulkan, slow): shapes are tiny. Values are read with `await data()`: dataSync and
// arraySync throw on webgpu under Node ("OffscreenCanvas is not defined").
// Skipped (with the reason printed) only when the webgpu packages or any adapter are missing and
// GRASSFLOW_REQUIRE_WEBGPU is not set; CI sets it after installing lavapipe, so there it fails instead.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  createModel,
  initBackend,
  lmLoss,
  loadCheckpoint,
  loadWeights,
  probeWebgpuAdapter,
  saveCheckpoint,
  saveWeights,
  preset,
  sumTensors,
  webgpuSuiteGate,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import { decodeInChunks, relErr, tokenIds } from './helpers.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const { info, missing, required } = await webgpuSuiteGate('webgpu tests');

describe('webgpu is available where it is required', () => {
  it.runIf(required)('GRASSFLOW_REQUIRE_WEBGPU is set: the backend loads', () => {
    expect(missing).toBeUndefined();
    expect(info?.tfBackend).toBe('webgpu');
  });
});

type Values = Float32Array;

/** Logits and the gradients of headLoss (the training loss) of a model built from `state`, on `backend`. */
async function run(
  backend: 'cpu' | 'webgpu',
  config: ModelConfig,
  state: Map<string, { data: Float32Array; shape: number[] }>,
): Promise<{ logits: Values; loss: number; grads: Values[] }> {
  await initBackend({ backend });
  const model = createModel(config);
  model.loadStateDict(new Map([...state].map(([k, v]) => [k, tf.tensor(v.data, v.shape)])));
  const ids = tokenIds(2, 12, config.vocabSize, 1); // [2, 12]: offsets up to 11 are live
  const targets = tokenIds(2, 12, config.vocabSize, 2);
  const hostTargets = (await targets.data()) as Int32Array;
  const logitsT = model.apply(ids); // [2, 12, V]
  const logits = (await logitsT.data()) as Float32Array;
  const full = lmLoss(logitsT, targets);
  const vars = model.trainableVariables();
  const { value, grads } = tf.variableGrads(() => model.headLoss(model.hidden(ids), hostTargets), vars);
  const loss = (await value.data())[0] as number;
  const fullLoss = (await full.data())[0] as number;
  expect(Math.abs(fullLoss - loss), 'headLoss = lmLoss').toBeLessThan(1e-4 * Math.max(1, Math.abs(loss)));
  const g: Values[] = [];
  for (const v of vars) g.push((await (grads[v.name] as tf.Tensor).data()) as Float32Array);
  tf.dispose([logitsT, full, value, ids, targets, ...Object.values(grads)]);
  model.dispose();
  return { logits, loss, grads: g };
}

describe.skipIf(info === undefined)('webgpu backend', () => {
  it('reports its adapter', () => {
    expect(info).toMatchObject({ name: 'webgpu', tfBackend: 'webgpu' });
    const a = info?.adapter;
    expect(typeof a?.vendor).toBe('string');
    expect(typeof a?.architecture).toBe('string');
    expect(typeof a?.fallback).toBe('boolean');
  });

  it.each([
    ['grassmann post-LN', preset('tiny', { offsets: [[1, 2], [3]] })],
    ['grassmann pre-LN', preset('tiny', { norm: 'pre' })],
    // 9 offsets: the gradient of the partner shifts sums 9 tensors (sumTensors; one tf.addN would be wrong on webgpu)
    ['grassmann, 9 offsets in a layer', preset('tiny', { offsets: [[1, 2, 3, 4, 5, 6, 7, 8, 9], [1]] })],
    ['transformer dpa', preset('tiny', { kind: 'transformer', attention: 'dpa' })],
    ['transformer ea', preset('tiny', { kind: 'transformer', attention: 'ea' })],
  ] as Array<[string, ModelConfig]>)('%s: logits and gradients equal cpu to 1e-4 relative', async (_n, config) => {
    await initBackend({ backend: 'cpu' });
    const source = createModel(config, { seed: 5 });
    const state = new Map(
      [...source.stateDict()].map(([k, t]) => [k, { data: t.dataSync() as Float32Array, shape: t.shape }]),
    );
    source.dispose();
    const cpu = await run('cpu', config, state);
    const gpu = await run('webgpu', config, state);
    expect(relErr(gpu.logits, cpu.logits)).toBeLessThan(1e-4);
    expect(Math.abs(gpu.loss - cpu.loss) / Math.abs(cpu.loss)).toBeLessThan(1e-4);
    expect(gpu.grads.length).toBe(cpu.grads.length);
    cpu.grads.forEach((g, k) => expect(relErr(gpu.grads[k] as Values, g), `gradient ${k}`).toBeLessThan(1e-4));
  });

  it('sumTensors of 20 tensors (tf.addN in calls of at most 7 inputs) equals cpu', async () => {
    const parts = (seed: number) =>
      Array.from({ length: 20 }, (_, k) => tf.randomNormal([3, 5], 0, 1, 'float32', seed + k));
    await initBackend({ backend: 'cpu' });
    const onCpu = sumTensors(parts(10));
    const want = (await onCpu.data()) as Float32Array;
    await initBackend({ backend: 'webgpu' });
    const xs = parts(10);
    const onGpu = sumTensors(xs);
    expect(relErr((await onGpu.data()) as Float32Array, want)).toBeLessThan(1e-6);
    tf.dispose([onCpu, onGpu, ...xs]);
  });

  it('training steps (gradients, global-norm clipping, Adam) equal cpu and keep the tensor count flat', async () => {
    const train = async (backend: 'cpu' | 'webgpu') => {
      await initBackend({ backend });
      const config = preset('tiny');
      const model = createModel(config, { seed: 3 });
      const vars = model.trainableVariables();
      const optimizer = tf.train.adam(1e-2);
      const ids = tokenIds(2, 8, config.vocabSize, 1);
      const targets = (await tokenIds(2, 8, config.vocabSize, 2).data()) as Int32Array;
      const losses: number[] = [];
      const norms: number[] = [];
      const counts: number[] = [];
      for (let step = 0; step < 5; step++) {
        const { value, grads } = tf.variableGrads(() => model.headLoss(model.hidden(ids), targets), vars);
        // Clip to global norm 0.5: g · min(1, 0.5/‖g‖), ‖g‖ over all gradients (as @grassflow/training does).
        const norm = tf.tidy(() => tf.sqrt(sumTensors(Object.values(grads).map((g) => tf.sum(tf.square(g))))));
        const clipped = tf.tidy(() => {
          const scale = tf.minimum(1, tf.div(0.5, norm));
          return Object.fromEntries(Object.entries(grads).map(([k, g]) => [k, tf.mul(g, scale)]));
        });
        optimizer.applyGradients(clipped as Record<string, tf.Variable>); // read as gradients by name
        losses.push((await value.data())[0] as number);
        norms.push((await norm.data())[0] as number);
        tf.dispose([value, norm, ...Object.values(grads), ...Object.values(clipped)]);
        counts.push(tf.memory().numTensors);
      }
      optimizer.dispose();
      ids.dispose();
      model.dispose();
      return { losses, norms, counts };
    };
    const cpu = await train('cpu');
    const gpu = await train('webgpu');
    expect(gpu.losses[4]).toBeLessThan(gpu.losses[0] as number); // it trains
    expect(relErr(gpu.norms, cpu.norms)).toBeLessThan(1e-4);
    expect(relErr(gpu.losses, cpu.losses)).toBeLessThan(1e-4);
    // The first step creates Adam's moment variables; from then on nothing accumulates.
    const c = gpu.counts[1];
    expect(gpu.counts.slice(1)).toEqual([c, c, c, c]);
  });

  it('a checkpoint saved on webgpu loads there with the same logits', async () => {
    await initBackend({ backend: 'webgpu' });
    const config = preset('tiny', { kind: 'transformer', attention: 'ea' });
    const model = createModel(config, { seed: 8 });
    const ids = tokenIds(1, 8, config.vocabSize, 4);
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-webgpu-'));
    try {
      await saveCheckpoint(dir, model);
      const loaded = (await loadCheckpoint(dir)).model;
      const a = model.apply(ids);
      const b = loaded.apply(ids);
      expect(relErr((await b.data()) as Float32Array, (await a.data()) as Float32Array)).toBe(0);
      tf.dispose([a, b]);
      loaded.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      model.dispose();
      ids.dispose();
    }
  });

  it('saveWeights reads webgpu tensors asynchronously; loadWeights gives them back', async () => {
    await initBackend({ backend: 'webgpu' });
    // Computed on the GPU, so that their values exist only there (a tensor made from an array keeps its values, and
    // tfjs-backend-webgpu runs ops on fewer than 128 entries on the cpu).
    const w = tf.tidy(() => tf.matMul(tf.randomNormal([16, 16], 0, 1, 'float32', 2), tf.randomNormal([16, 16])));
    const n = tf.tidy(() => tf.mul(tf.range(1, 201, 1, 'int32'), tf.scalar(-3, 'int32')));
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-webgpu-'));
    try {
      await saveWeights(
        join(dir, 'w.safetensors'),
        new Map<string, tf.Tensor>([
          ['w', w],
          ['n', n],
        ]),
      );
      const { tensors } = await loadWeights(join(dir, 'w.safetensors'));
      expect(Array.from(await (tensors.get('w') as tf.Tensor).data())).toEqual(Array.from(await w.data()));
      expect(Array.from(await (tensors.get('n') as tf.Tensor).data())).toEqual(
        Array.from({ length: 200 }, (_, i) => -3 * (i + 1)),
      );
      tf.dispose([...tensors.values()]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      tf.dispose([w, n]);
    }
  });

  it.each([
    ['grassmann', preset('tiny', { offsets: [[1, 2], [3]] })],
    ['transformer dpa', preset('tiny', { kind: 'transformer', attention: 'dpa' })],
  ] as Array<[string, ModelConfig]>)('%s: decoding in chunks and steps equals the full forward', async (_n, config) => {
    await initBackend({ backend: 'webgpu' });
    const model = createModel(config, { seed: 6 });
    const ids = tokenIds(2, 8, config.vocabSize, 3);
    const full = model.apply(ids); // [2, 8, V]
    const decoded = decodeInChunks(model, ids, [3, 1, 1, 3]);
    expect(relErr((await decoded.data()) as Float32Array, (await full.data()) as Float32Array)).toBeLessThan(1e-5);
    tf.dispose([full, decoded, ids]);
    model.dispose();
  });

  it('the probe process sees the adapter initBackend got', async () => {
    expect(await probeWebgpuAdapter()).toEqual(info?.adapter);
  });

  // Any machine with Mesa has lavapipe: automatic selection must neither use it nor let Dawn print its two limit
  // warnings ("maxDynamic…BuffersPerPipelineLayout artificially reduced", from C++ on stderr) while refusing it.
  it.runIf(info?.adapter?.fallback === true)(
    'automatic selection beside a software adapter skips webgpu without a line from Dawn on stderr',
    () => {
      const script = [
        `import { initBackend } from ${JSON.stringify(join(packageDir, 'src/backend/backend.ts'))};`,
        `const info = await initBackend();`,
        `console.log(JSON.stringify({ name: info.name, webgpu: info.skipped.find((s) => s.name === 'webgpu')?.reason }));`,
      ].join('\n');
      const env = { ...process.env };
      delete env['GRASSFLOW_BACKEND'];
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: packageDir,
        encoding: 'utf8',
        env,
        timeout: 120_000,
      });
      expect(child.status, child.stderr).toBe(0);
      const out = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as { name: string; webgpu?: string };
      expect(out.name).not.toBe('webgpu');
      expect(out.webgpu).toMatch(/the only adapter is a software one/);
      expect(child.stderr).not.toMatch(/artificially reduced/);
    },
  );

  it('a fresh Node process on webgpu exits by itself', () => {
    const script = [
      `import * as tf from '@tensorflow/tfjs-core';`,
      `import { initBackend } from ${JSON.stringify(join(packageDir, 'src/backend/backend.ts'))};`,
      `const info = await initBackend({ backend: 'webgpu' });`,
      `const a = tf.randomNormal([32, 32]);`,
      `const sum = (await tf.sum(tf.matMul(a, a)).data())[0];`,
      `const fallback = info.adapter?.fallback;`,
      `console.log(JSON.stringify({ backend: tf.getBackend(), finite: Number.isFinite(sum), fallback }));`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 60_000, // a process held open by Dawn never exits: killed here, the test fails
    });
    expect(child.error, child.stderr).toBeUndefined();
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
    expect(out).toEqual({ backend: 'webgpu', finite: true, fallback: info?.adapter?.fallback });
  });
});

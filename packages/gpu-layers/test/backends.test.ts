// Backend selection, and cpu vs wasm agreement of logits and gradients for every model kind.
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BACKEND_NAMES,
  BackendUnavailableError,
  createModel,
  initBackend,
  lmLoss,
  wasmThreadsNote,
  preset,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import { relErr, tokenIds, useBackend } from './helpers.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('initBackend', () => {
  const savedEnv = process.env['GRASSFLOW_BACKEND'];
  afterEach(() => {
    if (savedEnv === undefined) delete process.env['GRASSFLOW_BACKEND'];
    else process.env['GRASSFLOW_BACKEND'] = savedEnv;
  });

  it('forcing cpu and wasm works and reports the backend', async () => {
    delete process.env['GRASSFLOW_BACKEND'];
    const cpu = await initBackend({ backend: 'cpu' });
    expect(cpu).toMatchObject({ name: 'cpu', tfBackend: 'cpu', tfjsCore: tf.version_core });
    expect(tf.getBackend()).toBe('cpu');
    const wasm = await initBackend({ backend: 'wasm' });
    // initBackend starts tfjs-backend-wasm's threaded build under Node: every core (at most 8) unless
    // GRASSFLOW_WASM_THREADS asks for fewer. (Stock tfjs-backend-wasm reports 1 there.)
    const cores = cpus().length;
    const asked = process.env['GRASSFLOW_WASM_THREADS'];
    const want = Math.min(asked === undefined || asked === '' ? cores : Number(asked), cores, 8);
    expect(wasm).toMatchObject({ name: 'wasm', tfBackend: 'wasm', threads: want });
    expect(typeof wasm.simd).toBe('boolean');
    expect(tf.getBackend()).toBe('wasm');
  });

  it('says why fewer wasm threads run than were asked for, and nothing when all run', () => {
    expect(wasmThreadsNote(undefined, 1)).toBeUndefined();
    expect(wasmThreadsNote(2, 2)).toBeUndefined();
    expect(wasmThreadsNote(4, 1, 'this Node has no SharedArrayBuffer/Atomics')).toMatch(
      /runs 1 thread where 4 were asked for: .*single-threaded here: this Node has no SharedArrayBuffer/,
    );
    // One thread with the threaded build in use: a one-core machine.
    expect(wasmThreadsNote(4, 1)).toMatch(/runs 1 thread where 4 were asked for: .*capped at the cores/);
    expect(wasmThreadsNote(16, 8)).toMatch(/runs 8 threads where 16 were asked for: .*capped at the cores/);
  });

  // In a fresh Node process, as a user's script runs: the thread pool without patching node_modules, a process
  // that exits by itself (the pool's workers never end, so they must not hold it open), and the process's
  // uncaughtException/unhandledRejection listeners as they were (the emscripten glue adds rethrowing ones).
  it('a fresh Node process gets every core as wasm threads and exits by itself', () => {
    const script = [
      `import * as tf from '@tensorflow/tfjs-core';`,
      `import { initBackend } from ${JSON.stringify(join(packageDir, 'src/backend/backend.ts'))};`,
      `const info = await initBackend({ backend: 'wasm' });`,
      `const a = tf.randomNormal([256, 256]);`,
      `const sum = tf.sum(tf.matMul(a, a)).dataSync()[0];`,
      `const listeners = process.listenerCount('uncaughtException') + process.listenerCount('unhandledRejection');`,
      `console.log(JSON.stringify({ threads: info.threads, finite: Number.isFinite(sum), listeners }));`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 60_000, // a process held open by a worker never exits: killed here, the test fails
      env: { ...process.env, GRASSFLOW_WASM_THREADS: '' },
    });
    expect(child.error, child.stderr).toBeUndefined();
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
    expect(out).toEqual({ threads: Math.min(cpus().length, 8), finite: true, listeners: 0 });
  });

  it("a 'wasm' backend initialised before initBackend stays (stock, one thread) and the note says why", () => {
    const script = [
      `import * as tf from '@tensorflow/tfjs-core';`,
      `import '@tensorflow/tfjs-backend-wasm';`,
      `import { initBackend } from ${JSON.stringify(join(packageDir, 'src/backend/backend.ts'))};`,
      `await tf.setBackend('wasm');`,
      `const info = await initBackend({ backend: 'wasm', threads: 2 });`,
      `console.log(JSON.stringify({ threads: info.threads, note: info.threadsNote }));`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as { threads: number; note: string };
    expect(out.threads).toBe(1);
    expect(out.note).toMatch(
      /runs 1 thread where 2 were asked for: .*'wasm' backend was initialised .*before initBackend/,
    );
  });

  it('GRASSFLOW_BACKEND forces a backend; the option wins over it', async () => {
    process.env['GRASSFLOW_BACKEND'] = 'cpu';
    expect((await initBackend()).name).toBe('cpu');
    expect((await initBackend({ backend: 'wasm' })).name).toBe('wasm');
    process.env['GRASSFLOW_BACKEND'] = 'webgl';
    await expect(initBackend()).rejects.toThrow(/unknown backend 'webgl' \(from GRASSFLOW_BACKEND\)/);
  });

  it('an unknown name and an unloadable tfjs-node-gpu throw clear errors', async () => {
    delete process.env['GRASSFLOW_BACKEND'];
    await expect(initBackend({ backend: 'gpu' as 'cpu' })).rejects.toThrow(
      /unknown backend 'gpu'.*tensorflow-gpu, webgpu, tensorflow, wasm, cpu/,
    );
    // Here @tensorflow/tfjs-node-gpu is absent or installed without its native libtensorflow.
    const err = await initBackend({ backend: 'tensorflow-gpu' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toMatch(
      /@tensorflow\/tfjs-node-gpu (is not installed: run `npm install|is installed but failed to load)/,
    );
    // The failure leaves a working backend behind.
    expect((await initBackend({ backend: 'cpu' })).name).toBe('cpu');
  });

  it('automatic selection picks the first loadable backend and says why it skipped the others', async () => {
    delete process.env['GRASSFLOW_BACKEND'];
    const info = await initBackend();
    const order = BACKEND_NAMES.indexOf(info.name);
    expect(info.skipped.map((s) => s.name)).toEqual(BACKEND_NAMES.slice(0, order));
    // webgpu is skipped when its packages are absent, no adapter exists, or the adapter is a software one.
    for (const s of info.skipped)
      expect(s.reason).toMatch(s.name === 'webgpu' ? /webgpu.*(not installed|no adapter|software one)/ : /tfjs-node/);
    expect(tf.getBackend()).toBe(info.tfBackend);
  });
});

/** Logits and loss gradients of a model built from one state dict, on the given backend. */
async function run(
  backend: 'cpu' | 'wasm',
  config: ModelConfig,
  state: Map<string, { data: Float32Array; shape: number[] }>,
) {
  await useBackend(backend);
  const model = createModel(config);
  model.loadStateDict(new Map([...state].map(([k, v]) => [k, tf.tensor(v.data, v.shape)])));
  const ids = tokenIds(2, 12, config.vocabSize, 1);
  const targets = tokenIds(2, 12, config.vocabSize, 2);
  const logits = model.apply(ids).dataSync().slice();
  const { grads } = tf.variableGrads(() => lmLoss(model.apply(ids), targets), model.trainableVariables());
  const g = model.trainableVariables().map((v) => (grads[v.name] as tf.Tensor).dataSync().slice());
  model.dispose();
  return { logits, g };
}

describe('cpu and wasm agree', () => {
  it.each([
    ['grassmann', preset('tiny', { offsets: [[1, 2], [3]] })],
    ['transformer dpa', preset('tiny', { kind: 'transformer', attention: 'dpa' })],
    ['transformer ea', preset('tiny', { kind: 'transformer', attention: 'ea' })],
  ] as Array<[string, ModelConfig]>)('%s: logits and gradients within 1e-4 relative', async (_n, config) => {
    await useBackend('cpu');
    const source = createModel(config, { seed: 4 });
    const state = new Map(
      [...source.stateDict()].map(([k, t]) => [k, { data: t.dataSync() as Float32Array, shape: t.shape }]),
    );
    source.dispose();
    const cpu = await run('cpu', config, state);
    const wasm = await run('wasm', config, state);
    expect(relErr(wasm.logits, cpu.logits)).toBeLessThan(1e-4);
    cpu.g.forEach((g, k) => expect(relErr(wasm.g[k] as Float32Array, g), `gradient ${k}`).toBeLessThan(1e-4));
  });
});

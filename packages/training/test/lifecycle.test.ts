import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  backendLine,
  checkResumeFlags,
  createRun,
  loadCheckpointToResume,
  openRunToResume,
  optimizerConfigFrom,
  optimizerFlagSpecs,
  parseFlags,
  resolveCheckpointDir,
  runProvenance,
  summariseRun,
  UsageError,
  warmupWarning,
} from '@grassflow/training';
import { TOY_OPTIMIZER, trainToyRun } from './toy-task.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** The toy run of 8 steps, evaluated every 4. */
const train = (dir: string, opts: { stopAtStep?: number; resume?: boolean }) =>
  trainToyRun(dir, { totalSteps: 8, evalEvery: 4, ...opts });

// trainRun drives runTraining: these are the loop's stop/resume assertions, on the one lifecycle the apps use.
describe('trainRun', () => {
  it('stop + resume reproduces an uninterrupted run (metrics, best), frees model and moments, reports when finished', async () => {
    const root = mkdtempSync(join(tmpdir(), 'grassflow-lifecycle-'));
    const a = await train(join(root, 'a'), {});
    expect(a.result.status).toBe('finished');
    expect(a.reportPath).toBe(join(root, 'a', 'report.md'));
    const n0 = tf.memory().numTensors;
    createModel(preset('tiny'), { seed: 4 }).dispose();
    const perModel = tf.memory().numTensors - n0;
    const after = tf.memory().numTensors;
    const b1 = await train(join(root, 'b'), { stopAtStep: 3 });
    expect(b1.result.status).toBe('stopped');
    expect(b1.reportPath).toBeNull();
    const b = await train(join(root, 'b'), { resume: true });
    expect(tf.memory().numTensors).toBe(after + 2 * perModel);
    const strip = (m: typeof a.metrics) => m.map(({ tokens_per_s: _t, eval_seconds: _e, ...r }) => r);
    expect(strip(b.metrics)).toEqual(strip(a.metrics));
    expect(a.metrics.filter((r) => r.type === 'train')).toHaveLength(8);
    expect(a.result.state.best).toEqual({ value: 1 / 9, step: 8 });
    const s = summariseRun(a.metrics, 'val');
    expect(s.steps).toBe(8);
    expect(s.best?.step).toBe(8);
    expect(s.evals.map((r) => r.step)).toEqual([4, 8]);
  });

  it('refuses a folder that holds a run, and a resume of another kind of run', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'grassflow-lifecycle-')), 'r');
    await createRun(dir, { format: 'toy-run', n: 1 });
    writeFileSync(join(dir, 'metrics.jsonl'), '{"type":"train","step":1}\n');
    // no checkpoint yet (a run stopped before its first save): nothing to resume, and --resume says to run it again
    const opened = await openRunToResume(dir, 'toy-run');
    await expect(loadCheckpointToResume(opened.run)).rejects.toThrow(
      /has no checkpoint: the run stopped before its first save, so there is nothing to resume\. Run the command/,
    );
    // the same command starts it again there, from nothing
    await createRun(dir, { format: 'toy-run', n: 2 });
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toMatchObject({ n: 2 });
    expect(existsSync(join(dir, 'metrics.jsonl'))).toBe(false);
    // …but never over a file of the user's
    writeFileSync(join(dir, 'NOTES.md'), 'mine');
    await expect(createRun(dir, { format: 'toy-run' })).rejects.toThrow(/and files it did not write \(NOTES.md\)/);
    expect(readFileSync(join(dir, 'NOTES.md'), 'utf8')).toBe('mine');
    mkdirSync(join(dir, 'checkpoints', 'latest'), { recursive: true });
    await expect(createRun(dir, { format: 'toy-run' })).rejects.toThrow(
      /already holds a run: continue it with --resume/,
    );
    await expect(openRunToResume(dir, 'other-run')).rejects.toThrow(/config.json is not a other run/);
    await expect(openRunToResume(join(dir, 'nothing'), 'toy-run')).rejects.toThrow(/no config.json there/);
  });

  it("refuses a non-empty folder that is not a run (a user's files are not overwritten), takes an empty one", async () => {
    const base = mkdtempSync(join(tmpdir(), 'grassflow-lifecycle-'));
    const mine = join(base, 'my-files');
    mkdirSync(mine);
    writeFileSync(join(mine, 'report.md'), 'my notes');
    writeFileSync(join(mine, 'metrics.jsonl'), '{"mine":1}\n');
    await expect(createRun(mine, { format: 'toy-run' })).rejects.toThrow(
      /is not empty \(metrics.jsonl, report.md\) and holds no run: give --out a new or empty folder/,
    );
    expect(readFileSync(join(mine, 'report.md'), 'utf8')).toBe('my notes');
    const empty = join(base, 'empty');
    mkdirSync(empty);
    expect((await createRun(empty, { format: 'toy-run' })).exists()).toBe(true);
  });
});

describe('optimizer flags and --resume', () => {
  it('defaults min-lr to lr/10, refuses min-lr above lr, keeps the app defaults', () => {
    const specs = optimizerFlagSpecs({ lr: 1e-3, warmup: 50 });
    expect(optimizerConfigFrom(parseFlags([], specs))).toEqual({
      lr: 1e-3,
      minLr: 1e-4,
      warmup: 50,
      weightDecay: 0.01,
      clip: 1,
      beta1: 0.9,
      beta2: 0.98,
    });
    expect(() => optimizerConfigFrom(parseFlags(['--min-lr', '1'], specs))).toThrow(
      /--min-lr 1 must not exceed --lr 0.001/,
    );
  });

  it('lets only the resume flags accompany --resume', () => {
    expect(() => checkResumeFlags(['--resume', 'd', '--quiet', '--stop-at-step=3'])).not.toThrow();
    expect(() => checkResumeFlags(['--resume', 'd', '--lr', '1'])).toThrow(UsageError);
    expect(() => checkResumeFlags(['--resume', 'd', '--lr', '1'])).toThrow(/--lr cannot be combined with --resume/);
  });
});

describe('resolveCheckpointDir', () => {
  it('a run folder of the format gives checkpoints/best, else latest; other folders are taken as is', async () => {
    const root = mkdtempSync(join(tmpdir(), 'grassflow-resolve-'));
    const run = join(root, 'run');
    await createRun(run, { format: 'toy-run' });
    expect(() => resolveCheckpointDir(run, 'toy-run')).toThrow(/is a run folder without checkpoints yet/);
    mkdirSync(join(run, 'checkpoints', 'latest'), { recursive: true });
    expect(resolveCheckpointDir(run, 'toy-run')).toBe(join(run, 'checkpoints', 'latest'));
    mkdirSync(join(run, 'checkpoints', 'best'));
    expect(resolveCheckpointDir(run, 'toy-run')).toBe(join(run, 'checkpoints', 'best'));
    expect(resolveCheckpointDir(run, 'other-run')).toBe(run);
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'config.json'), '{not json');
    expect(resolveCheckpointDir(broken, 'toy-run')).toBe(broken);
    expect(() => resolveCheckpointDir(join(root, 'missing'), 'toy-run')).toThrow(/does not exist/);
  });
});

describe('warmupWarning', () => {
  const { warmup: _w, ...auto } = TOY_OPTIMIZER;
  const c = (warmup?: number) => ({ ...auto, lr: 0.01, ...(warmup === undefined ? {} : { warmup }) });
  it('warns of an explicit warmup not shorter than the run, with what to do, and not otherwise', () => {
    const w = warmupWarning(c(100), 40);
    expect(w).toMatch(/--warmup 100 is not shorter than the run's 40 steps: the learning rate never reaches its peak/);
    expect(w).toMatch(/peak 0\.01 \(at most 0\.00400\).*give --warmup below 40, or leave it out/);
    expect(warmupWarning(c(40), 40)).toMatch(/reaches its peak 0\.01 only at the last step/);
    expect(warmupWarning(c(39), 40)).toBeNull();
    expect(warmupWarning(c(), 1)).toBeNull(); // the automatic warmup is 10% of the run
  });
});

describe('runProvenance and backendLine (the backend a run report names)', () => {
  const base = { tfBackend: 'webgpu', tfjsCore: '4.22.0', skipped: [] };
  it('a webgpu run on a software adapter records it and its report says its speeds are not GPU numbers', () => {
    const adapter = { vendor: 'mesa', architecture: 'software', description: 'llvmpipe', fallback: true };
    const p = runProvenance({ ...base, name: 'webgpu', adapter });
    expect(p.backend).toMatchObject({ name: 'webgpu', softwareRendering: true });
    expect(p.backend.adapter).toMatch(/^mesa software \(llvmpipe\), a software fallback adapter/);
    expect(backendLine(p.backend)).toMatch(
      /^webgpu on mesa software .*\(software rendering: its tokens\/s are not GPU numbers\)$/,
    );
  });

  it('a real adapter is named without the warning; other backends by name alone', () => {
    const adapter = { vendor: 'nvidia', architecture: 'hopper', description: '', fallback: false };
    expect(backendLine(runProvenance({ ...base, name: 'webgpu', adapter }).backend)).toBe('webgpu on nvidia hopper');
    const wasm = runProvenance({ ...base, tfBackend: 'wasm', name: 'wasm', simd: true, threads: 2 });
    expect(wasm.backend).not.toHaveProperty('adapter');
    expect(backendLine(wasm.backend)).toBe('wasm');
  });
});

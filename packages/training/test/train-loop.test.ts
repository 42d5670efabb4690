import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset, type LanguageModel } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  loadTrainerCheckpoint,
  namedParameters,
  Progress,
  RunFolder,
  runTraining,
  saveTrainerCheckpoint,
  TrainingRng,
  warmupCosineLr,
  type TrainerState,
} from '../src/index';
import { ToyTask } from './toy-task';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

async function train(dir: string, opts: { stopAtStep?: number; resume?: boolean }) {
  const run = new RunFolder(dir);
  let model: LanguageModel;
  let start: TrainerState | undefined;
  let rng = new TrainingRng(7);
  let moments: Map<string, tf.Tensor> | undefined;
  if (opts.resume === true) {
    const ck = await loadTrainerCheckpoint(run.latestCheckpoint);
    model = ck.model;
    start = ck.state;
    rng = new TrainingRng(ck.state.rng);
    moments = ck.optimizerTensors;
  } else {
    await run.init({});
    model = createModel(preset('tiny'), { seed: 4 });
  }
  const optimizer = new AdamW(namedParameters(model));
  if (start !== undefined && moments !== undefined) {
    optimizer.loadState(moments, start.optimizer);
    tf.dispose([...moments.values()]);
  }
  const task = new ToyTask(model);
  if (start !== undefined) task.position = (start.data as { position: number }).position;
  const result = await runTraining(task, {
    optimizer,
    rng,
    lr: (s) => warmupCosineLr(s, { peakLr: 1e-2, warmupSteps: 2, totalSteps: 8 }),
    totalSteps: 8,
    evalEvery: 4,
    logEvery: 1,
    bestMetric: 'val',
    run,
    save: (d, s) => saveTrainerCheckpoint(d, model, optimizer, s),
    progress: new Progress(8, { quiet: true }),
    ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
    ...(start === undefined ? {} : { start }),
  });
  optimizer.dispose();
  model.dispose();
  return { result, metrics: await run.readMetrics() };
}

describe('runTraining', () => {
  it('stop + resume reproduces an uninterrupted run exactly (metrics, evals, best), without leaking tensors', async () => {
    const root = mkdtempSync(join(tmpdir(), 'grassflow-loop-'));
    const a = await train(join(root, 'a'), {});
    expect(a.result.status).toBe('finished');
    // what building and disposing one model leaves behind in gpu-layers itself (its embedding init tensors, 2 at 0.1.0)
    const n0 = tf.memory().numTensors;
    createModel(preset('tiny'), { seed: 4 }).dispose();
    const perModel = tf.memory().numTensors - n0;
    const after = tf.memory().numTensors;
    const b1 = await train(join(root, 'b'), { stopAtStep: 3 });
    expect(b1.result.status).toBe('stopped');
    const b = await train(join(root, 'b'), { resume: true });
    expect(tf.memory().numTensors).toBe(after + 2 * perModel); // two more models were built: nothing else stays
    const strip = (m: typeof a.metrics) => m.map(({ tokens_per_s: _t, eval_seconds: _e, ...r }) => r);
    expect(strip(b.metrics)).toEqual(strip(a.metrics));
    expect(a.metrics.filter((r) => r.type === 'train')).toHaveLength(8);
    expect(a.result.state.best).toEqual({ value: 1 / 9, step: 8 });
  });
});

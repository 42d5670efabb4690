import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset, CheckpointError } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  loadTrainerCheckpoint,
  markdownTable,
  namedParameters,
  RunFolder,
  saveTrainerCheckpoint,
  TrainerCheckpointError,
  TrainingRng,
  writeReport,
} from '@grassflow/training';
import { saveCheckpoint } from '@grassflow/gpu-layers';

beforeAll(async () => {
  await initBackend({ backend: 'cpu' });
});

const tmp = () => mkdtempSync(join(tmpdir(), 'grassflow-training-'));

describe('RunFolder', () => {
  it('writes config.json and metrics.jsonl, and truncates metrics past a resumed step', async () => {
    const run = new RunFolder(join(tmp(), 'run'));
    await run.init({ a: 1 });
    expect(await run.readConfig()).toEqual({ a: 1 });
    for (const step of [1, 2, 3, 4]) await run.appendMetric({ type: 'train', step, loss: 5 - step });
    await run.appendMetric({ type: 'eval', step: 4, val_ppl: 9 });
    await run.truncateMetricsAfter(2);
    expect((await run.readMetrics()).map((r) => r.step)).toEqual([1, 2]);
  });
});

describe('trainer checkpoint', () => {
  it('round-trips model, AdamW moments, step, RNG and data position', async () => {
    const model = createModel(preset('tiny'), { seed: 3 });
    const opt = new AdamW(namedParameters(model));
    opt.apply(Object.fromEntries(model.trainableVariables().map((v) => [v.name, tf.onesLike(v)])), 0.01);
    const rng = new TrainingRng(5);
    rng.nextUint32();
    const dir = join(tmp(), 'ck');
    const state = {
      step: 1,
      tokensSeen: 32,
      trainSeconds: 0.5,
      rng: rng.state,
      data: { epoch: 0, position: 4, seed: 1 },
      optimizer: opt.state,
      best: null,
    };
    await saveTrainerCheckpoint(dir, model, opt, state, { note: 'x' });
    const ck = await loadTrainerCheckpoint(dir);
    expect(ck.state).toEqual(state);
    expect(ck.extra).toEqual({ note: 'x' });
    const opt2 = new AdamW(namedParameters(ck.model));
    opt2.loadState(ck.optimizerTensors, ck.state.optimizer);
    const a = opt.stateTensors();
    const b = opt2.stateTensors();
    for (const [k, t] of a) expect(Array.from((b.get(k) as tf.Tensor).dataSync())).toEqual(Array.from(t.dataSync()));
    expect(new TrainingRng(ck.state.rng).nextUint32()).toBe(rng.nextUint32());
    expect(Array.from(ck.model.trainableVariables()[0]!.dataSync())).toEqual(
      Array.from(model.trainableVariables()[0]!.dataSync()),
    );
  });

  it('refuses a model-only checkpoint and reports a corrupt one', async () => {
    const model = createModel(preset('tiny'), { seed: 3 });
    const dir = join(tmp(), 'plain');
    await saveCheckpoint(dir, model);
    await expect(loadTrainerCheckpoint(dir)).rejects.toThrow(TrainerCheckpointError);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'model.safetensors'), 'garbage');
    await expect(loadTrainerCheckpoint(dir)).rejects.toThrow(CheckpointError);
  });
});

describe('report', () => {
  it('writes report.md with a table and SVG + PNG charts', async () => {
    const dir = tmp();
    const path = await writeReport(dir, {
      title: 'T',
      table: {
        columns: ['model', 'ppl'],
        rows: [
          ['a', 12.3456],
          ['b', 1234567],
        ],
      },
      charts: [
        {
          file: 'loss',
          chart: {
            title: 'Loss',
            xLabel: 'step',
            yLabel: 'loss',
            series: [
              {
                name: 'a',
                points: [
                  [1, 3],
                  [2, 2],
                ],
              },
            ],
          },
        },
      ],
    });
    const md = readFileSync(path, 'utf8');
    expect(md).toContain('| model | ppl |\n|---|---:|\n| a | 12.35 |\n| b | 1,234,567 |');
    expect(md).toContain('![Loss](loss.png)');
    expect(readFileSync(join(dir, 'loss.svg'), 'utf8')).toMatch(/^<svg/);
    expect(readFileSync(join(dir, 'loss.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(existsSync(join(dir, 'loss.png'))).toBe(true);
    expect(markdownTable({ columns: ['x'], rows: [[null]] })).toContain('| – |');
  });
});

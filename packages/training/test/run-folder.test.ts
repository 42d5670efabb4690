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
    const { writeFileSync } = await import('node:fs');
    writeFileSync(run.configPath, '{"a": 1,'); // garbage: a torn or hand-edited file
    await expect(run.readConfig()).rejects.toThrow(
      new RegExp(`^${run.configPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON .*restore it`),
    );
    await run.init({ a: 1 });
    for (const step of [1, 2, 3, 4]) await run.appendMetric({ type: 'train', step, loss: 5 - step });
    await run.appendMetric({ type: 'eval', step: 4, val_ppl: 9 });
    await run.truncateMetricsAfter(2);
    expect((await run.readMetrics()).map((r) => r.step)).toEqual([1, 2]);
  });

  it('keeps metrics.csv equal to metrics.jsonl: a header, widened for new fields, cut back with it', async () => {
    const run = new RunFolder(join(tmp(), 'run'));
    await run.init({ a: 1 });
    for (const step of [1, 2, 3]) await run.appendMetric({ type: 'train', step, loss: 5 - step / 3, lr: 1e-4 * step });
    await run.appendMetric({ type: 'eval', step: 3, val_ppl: 9.5, note: 'a, "b"' });
    await run.appendMetric({ type: 'train', step: 4, loss: 3, lr: 4e-4 });
    await run.appendMetric({ type: 'eval', step: 4, val_ppl: Number.NaN });
    expect(csvOf(run)).toEqual(asCsvCells(await run.readMetrics()));
    expect(readFileSync(run.metricsCsvPath, 'utf8').split('\n')[0]).toBe('type,step,loss,lr,val_ppl,note');
    await run.truncateMetricsAfter(3);
    expect(csvOf(run)).toEqual(asCsvCells(await run.readMetrics()));
    expect(csvOf(run).rows).toHaveLength(4);
    // a second process (a resume) appends under the header it reads from the file
    const again = new RunFolder(run.dir);
    await again.appendMetric({ type: 'train', step: 4, loss: 2.5, lr: 4e-4 });
    expect(csvOf(again)).toEqual(asCsvCells(await again.readMetrics()));
    expect(csvOf(again).rows).toHaveLength(5);
  });
});

/** metrics.csv as a header and rows of cells (RFC 4180 quotes undone). */
function csvOf(run: RunFolder): { header: string[]; rows: string[][] } {
  const [head, ...lines] = readFileSync(run.metricsCsvPath, 'utf8').trimEnd().split('\n');
  const cells = (l: string): string[] => {
    const out: string[] = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < l.length; i++) {
      const c = l[i] as string;
      if (quoted && c === '"' && l[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = !quoted;
      else if (c === ',' && !quoted) {
        out.push(cur);
        cur = '';
      } else cur += c;
    }
    return [...out, cur];
  };
  return { header: (head as string).split(','), rows: lines.map(cells) };
}

/** The records as the CSV must hold them: numbers as strings, null/absent as empty cells. */
function asCsvCells(records: ReadonlyArray<Record<string, unknown>>): { header: string[]; rows: string[][] } {
  const header: string[] = ['type', 'step'];
  for (const r of records) for (const k of Object.keys(r)) if (!header.includes(k)) header.push(k);
  return {
    header,
    rows: records.map((r) =>
      header.map((k) => (r[k] === undefined || r[k] === null ? '' : String(r[k] as string | number | boolean))),
    ),
  };
}

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

  it("refuses a checkpoint whose trainer step was edited (it must equal the optimizer's step)", async () => {
    const model = createModel(preset('tiny'), { seed: 3 });
    const opt = new AdamW(namedParameters(model));
    opt.apply(Object.fromEntries(model.trainableVariables().map((v) => [v.name, tf.onesLike(v)])), 0.01);
    const dir = join(tmp(), 'edited');
    const state = { step: 1, tokensSeen: 32, trainSeconds: 0.5, rng: new TrainingRng(5).state };
    const full = { ...state, data: { epoch: 0, position: 4, seed: 1 }, optimizer: opt.state, best: null };
    await saveTrainerCheckpoint(dir, model, opt, full);
    const { readFileSync, writeFileSync } = await import('node:fs');
    const path = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { extra: { trainer: { step: number } } };
    json.extra.trainer.step = 5; // as a user editing "step" by hand would
    writeFileSync(path, JSON.stringify(json));
    await expect(loadTrainerCheckpoint(dir)).rejects.toThrow(
      /trainer state is at step 5 but its optimizer state at step 1 .*config\.json was edited/,
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

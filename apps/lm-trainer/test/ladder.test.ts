import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '@grassflow/gpu-layers';
import { SyntheticTask } from '@grassflow/datasets';
import { UsageError } from '@grassflow/training';
import { beforeAll, describe, expect, it } from 'vitest';
import { ladderCli } from '../src/ladder/command.js';
import { parseLevels, parseModels } from '../src/ladder/options.js';
import { grassmannReach, reachableFraction, receptiveField } from '../src/ladder/reach.js';
import { spreadOf, type LadderResults } from '../src/ladder/report.js';
import { maskedLmLoss, scoreLogits } from '../src/ladder/task.js';
import { cli, tmp } from './helpers.js';

beforeAll(async () => {
  await initBackend({ backend: 'cpu' });
});

describe('ladder scoring', () => {
  it('scores greedy predictions only where the mask is set, and counts perfectly solved rows', () => {
    // B 3, L 3, V 4: row 0 right at both determined positions (its wrong argmax at t = 0 is unmasked),
    // row 1 wrong at t = 2 (a tie between 1 and 3 goes to the first index, 1; the target is 3), row 2 has no determined
    // position
    const logits = new Float32Array([
      9,
      0,
      0,
      0,
      /**/ 0,
      5,
      1,
      0,
      /**/ 0,
      0,
      0,
      7, // row 0: argmax 0, 1, 3
      0,
      0,
      2,
      0,
      /**/ 0,
      0,
      0,
      0,
      /**/ 0,
      4,
      0,
      4, // row 1: argmax 2, 0 (all equal), 1 (tie)
      1,
      0,
      0,
      0,
      /**/ 0,
      1,
      0,
      0,
      /**/ 0,
      0,
      1,
      0, // row 2
    ]);
    const y = new Int32Array([2, 1, 3, /**/ 2, 0, 3, /**/ 3, 3, 3]);
    const mask = new Uint8Array([0, 1, 1, /**/ 1, 1, 1, /**/ 0, 0, 0]);
    const s = scoreLogits(logits, [3, 3, 4], y, mask);
    expect(s).toEqual({ correct: 4, determined: 5, sequences: 2, solved: 1 });
    expect(() => scoreLogits(logits, [3, 3, 5], y, mask)).toThrow(/shape \[3, 3, 5\]/);
  });

  it('the masked loss is the mean cross-entropy of the determined positions only', () => {
    const values = [0.5, -1, 2, /**/ 1, 1, 1, /**/ 3, 0, -2, /**/ 0, 0.25, 0];
    const y = new Int32Array([2, 0, 1, 1]);
    const mask = new Uint8Array([1, 0, 0, 1]);
    const loss = maskedLmLoss(tf.tensor3d(values, [2, 2, 3]), y, mask);
    const nll = (row: number[], t: number): number =>
      Math.log(row.reduce((s, v) => s + Math.exp(v), 0)) - (row[t] as number);
    const want = (nll(values.slice(0, 3), 2) + nll(values.slice(9, 12), 1)) / 2;
    expect(loss.dataSync()[0]).toBeCloseTo(want, 5);
    expect(() => maskedLmLoss(tf.tensor3d(values, [2, 2, 3]), y, new Uint8Array(4))).toThrow(/marks no position/);
  });

  it('spread: mean and sample standard deviation over seeds', () => {
    const s = spreadOf([0.5, 0.7, 0.9]);
    expect(s.mean).toBeCloseTo(0.7, 12);
    expect(s.std).toBeCloseTo(0.2, 12);
    expect([s.min, s.max]).toEqual([0.5, 0.9]);
    expect(spreadOf([0.3]).std).toBe(0);
  });
});

describe('Grassmann reach', () => {
  it('reachable lags are the subset sums of one offset per layer; the receptive field is their largest', () => {
    expect(grassmannReach([[1], [2], [4]])).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(receptiveField([[1], [2], [4]])).toBe(7);
    expect(grassmannReach([[1], [1]])).toEqual([0, 1, 2]);
    expect(grassmannReach([[1, 2], [4]])).toEqual([0, 1, 2, 4, 5, 6]); // at most one offset per layer: 3 is out
    expect(receptiveField([[1, 2], [4]])).toBe(6);
  });

  it('lagged-sum level 3 (lags 1, 3, 7) is within reach of offsets 1, 2, 4; level 4 (lag 17) is not', () => {
    const reach = grassmannReach([[1], [2], [4]]);
    const task = (level: number): SyntheticTask =>
      new SyntheticTask({ family: 'lagged-sum', level, seqLen: 32, vocabSize: 4, seed: 3 });
    expect(reachableFraction(task(3), reach, 4)).toBe(1);
    expect(reachableFraction(task(4), reach, 4)).toBe(0);
    expect(reachableFraction(task(3), grassmannReach([[1], [2]]), 4)).toBe(0); // lag 7 needs input lag 6 > 3
  });

  it('recall: a query is within reach only when an earlier occurrence of its pair is', () => {
    const task = new SyntheticTask({ family: 'recall', level: 3, seqLen: 64, seed: 1 });
    const none = reachableFraction(task, [0], 16);
    const all = reachableFraction(
      task,
      Array.from({ length: 64 }, (_, i) => i),
      16,
    );
    const some = reachableFraction(task, grassmannReach([[1], [2], [4]]), 16);
    expect(none).toBe(0);
    expect(all).toBe(1);
    expect(some).toBeGreaterThan(0);
    expect(some).toBeLessThan(1);
  });
});

describe('ladder flags', () => {
  it('parses ranges and lists of levels and known model kinds', () => {
    expect(parseLevels('1..4')).toEqual([1, 2, 3, 4]);
    expect(parseLevels('5,2')).toEqual([2, 5]);
    expect(parseLevels('3')).toEqual([3]);
    expect(parseModels('transformer-ea, grassmann')).toEqual(['transformer-ea', 'grassmann']);
  });

  it.each([
    [['--levels', '3..1'], 'levels', /ends \(1\) before it starts \(3\)/],
    [['--levels', '0..2'], 'levels', /levels start at 1/],
    [['--levels', 'two'], 'levels', /not a level number/],
    [['--levels', '9'], 'levels', /lagged-sum has levels 1\.\.8/],
    [['--levels', '5', '--seq-len', '16'], 'seq-len', /--seq-len must be ≥ 33/],
    [['--family', 'recall', '--levels', '6'], 'vocab', /raise vocabSize/],
    [['--models', 'grassmann,lstm'], 'models', /unknown model kind 'lstm'/],
    [['--models', 'grassmann,grassmann'], 'models', /names a model twice/],
    [['--d-model', '30', '--heads', '4'], 'd-model', /divisible by --heads 4/],
    [['--steps', '10', '--warmup', '20'], 'warmup', /more than --steps/],
  ])('rejects %j naming --%s', async (args, flag, message) => {
    const err = await ladderCli.run(['--quick', ...args]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).flag).toBe(flag);
    expect((err as UsageError).message).toMatch(message);
  });
});

describe('a tiny ladder run', () => {
  it('trains, scores and reports every level and model; level 1 is learned; a used folder is refused', async () => {
    const out = join(tmp(), 'ladder');
    const args = [
      'ladder',
      '--levels',
      '1..2',
      '--models',
      'grassmann,transformer-dpa,transformer-ea',
      '--seeds',
      '1',
      '--vocab',
      '4',
      '--layers',
      '1',
      '--d-model',
      '16',
      '--heads',
      '2',
      '--r',
      '4',
      '--offsets',
      '1',
      '--seq-len',
      '12',
      '--steps',
      '40',
      '--batch',
      '16',
      '--lr',
      '1e-2',
      '--eval-seqs',
      '16',
      '--out',
      out,
    ]; // backend: wasm (helpers)
    const r = cli(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`report: ${join(out, 'report.md')}`);
    const report = readFileSync(join(out, 'report.md'), 'utf8');
    for (const m of ['grassmann', 'transformer-dpa', 'transformer-ea']) expect(report).toContain(m);
    expect(report).toMatch(/\| 1 \| lags 1 \|/);
    expect(report).toMatch(/\| 2 \| lags 1,3 \|/);
    for (const f of ['accuracy.png', 'accuracy.svg', 'solved.png', 'solved.svg', 'config.json'])
      expect(existsSync(join(out, f)), f).toBe(true);
    const res = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as LadderResults;
    expect(res.complete).toBe(true);
    expect(res.runs).toHaveLength(6);
    expect(res.cells).toHaveLength(6);
    for (const run of res.runs) {
      expect(run.accuracy).toBeGreaterThanOrEqual(0);
      expect(run.accuracy).toBeLessThanOrEqual(1);
      // L + 1 = 13 tokens, the first max lag (1 or 3) free
      expect(run.score.determined).toBe(16 * (run.level === 1 ? 12 : 10));
    }
    // level 1 (x_t = x_{t−1} + 1 mod 4) needs only the current token: every kind learns it in 40 steps
    for (const run of res.runs.filter((x) => x.level === 1)) expect(run.accuracy, run.model).toBeGreaterThan(0.9);
    const again = await ladderCli.run(args.slice(1)).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(UsageError);
    expect((again as UsageError).flag).toBe('out');
    expect((again as UsageError).message).toContain('already holds a ladder run');
  });
});

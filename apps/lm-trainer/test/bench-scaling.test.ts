import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOutOfMemory } from '../src/bench/scaling.js';
import { crossoverOf, lastLRan, scalingTable, type ScalingPoint } from '../src/bench/scaling-report.js';
import type { ModelKind } from '../src/shared/model-options.js';
import { cli, tmp } from './helpers.js';

const MODELS: ModelKind[] = ['grassmann', 'transformer-dpa', 'transformer-ea'];

describe('bench --scaling (smoke, tiny lengths: checks fields and files, not timings)', () => {
  it('times every (model, L), prints one JSON line and writes scaling.md, .json, .png, .svg', () => {
    const out = join(tmp(), 'scaling');
    const r = cli([
      'bench',
      '--scaling',
      '--lengths',
      '16,32',
      '--tokens',
      '64',
      '--repeats',
      '1',
      '--d-model',
      '32',
      '--r',
      '4',
      '--json',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const line = r.stdout.trim().split('\n').pop() as string;
    const res = JSON.parse(line) as Record<string, unknown> & {
      points: ScalingPoint[];
      crossover: Array<Record<string, unknown>>;
    };
    expect(res['backend']).toBe('wasm');
    expect(res['tokens_per_batch']).toBe(64);
    expect(res['repeats']).toBe(1);
    expect(res['stack']).toEqual({
      d: 32,
      d_ff: 128,
      layers: 1,
      r: 4,
      offsets: [1],
      heads: 4,
      norm: 'post',
      dropout: 0,
    });
    expect(res.points.map((p) => `${p.model}:${p.L}:${p.B}`).sort()).toEqual(
      [
        'grassmann:16:4',
        'grassmann:32:2',
        'transformer-dpa:16:4',
        'transformer-dpa:32:2',
        'transformer-ea:16:4',
        'transformer-ea:32:2',
      ].sort(),
    );
    for (const p of res.points) {
      expect(p.status).toBe('ok');
      expect(p.seconds).toHaveLength(1);
      expect(p.median_s).toBe(p.seconds[0]);
      expect(p.us_per_token).toBeCloseTo(((p.median_s as number) / 64) * 1e6, 6);
      expect(p.peak_rss_mb).toBeGreaterThan(0);
      expect(p.load_1m).toBeGreaterThanOrEqual(0);
    }
    expect(res['last_l_ran']).toEqual({ grassmann: 32, 'transformer-dpa': 32, 'transformer-ea': 32 });
    expect(res.crossover.map((c) => c['attention'])).toEqual(['transformer-dpa', 'transformer-ea']);
    for (const c of res.crossover) expect(typeof c['summary']).toBe('string');

    expect(JSON.parse(readFileSync(join(out, 'scaling.json'), 'utf8'))).toEqual(res);
    const md = readFileSync(join(out, 'scaling.md'), 'utf8');
    expect(md).toContain('| L | B | grassmann µs/token | transformer-dpa µs/token | transformer-ea µs/token |');
    expect(md).toContain('**Crossover vs transformer-dpa:**');
    expect(md).toContain('Command: `grassflow-lm bench --scaling --lengths 16,32');
    expect(md).toContain('![time per token against L, log-log](scaling.png)');
    const png = readFileSync(join(out, 'scaling.png'));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const svg = readFileSync(join(out, 'scaling.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('transformer-ea');
  });

  it('rejects tokens that L does not divide, unknown models and a width the heads do not divide (exit 2, no files)', () => {
    const out = join(tmp(), 'bad');
    const notMultiple = cli(['bench', '--scaling', '--lengths', '32,64', '--tokens', '96', '--out', out]);
    expect(notMultiple.code).toBe(2);
    expect(notMultiple.stderr).toContain('--tokens 96 must be a multiple of every L');
    const unknown = cli(['bench', '--scaling', '--models', 'grassmann,lstm', '--out', out]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--models: unknown model 'lstm'");
    const heads = cli(['bench', '--scaling', '--d-model', '30', '--heads', '4', '--out', out]);
    expect(heads.code).toBe(2);
    expect(heads.stderr).toContain('--d-model 30 must be divisible by --heads 4');
    expect(existsSync(out)).toBe(false);
  });
});

const pt = (model: ModelKind, L: number, us: number | 'oom' | 'oom-skipped'): ScalingPoint => ({
  model,
  L,
  B: 8192 / L,
  status: typeof us === 'number' ? 'ok' : us,
  us_per_token: typeof us === 'number' ? us : null,
  median_s: typeof us === 'number' ? (us * 8192) / 1e6 : null,
  seconds: [],
  peak_rss_mb: typeof us === 'number' ? 100 : null,
  load_1m: L / 4096,
});

describe('bench --scaling results', () => {
  it('finds the crossover and interpolates it on the log-log lines', () => {
    // t_G = 10 µs at every L; t_A = L/32 µs: the lines cross at L = 320
    const points = [128, 256, 512].flatMap((L) => [pt('grassmann', L, 10), pt('transformer-dpa', L, L / 32)]);
    const c = crossoverOf(points, 'transformer-dpa');
    expect(c.measured_l).toBe(512);
    expect(c.interpolated_l).toBe(320);
    expect(c.summary).toContain('from L 512 on');
  });

  it('needs Grassmann faster at every longer L; reports "never" and "always"; names where attention ran out of memory', () => {
    const flip = [
      pt('grassmann', 128, 1),
      pt('transformer-ea', 128, 2),
      pt('grassmann', 256, 3),
      pt('transformer-ea', 256, 2),
      pt('grassmann', 512, 1),
      pt('transformer-ea', 512, 2),
    ];
    expect(crossoverOf(flip, 'transformer-ea').measured_l).toBe(512);
    const never = [pt('grassmann', 128, 5), pt('transformer-dpa', 128, 1)];
    expect(crossoverOf(never, 'transformer-dpa')).toMatchObject({ measured_l: null, interpolated_l: null });
    const always = [
      pt('grassmann', 128, 1),
      pt('transformer-dpa', 128, 5),
      pt('grassmann', 256, 1),
      pt('transformer-dpa', 256, 'oom'),
    ];
    const c = crossoverOf(always, 'transformer-dpa');
    expect(c).toMatchObject({ measured_l: 128, interpolated_l: null });
    expect(c.summary).toContain('transformer-dpa ran up to L 128; grassmann ran up to L 256');
  });

  it('marks OOM points in the table and leaves them out of the ratios and last L', () => {
    const points = [
      pt('grassmann', 4096, 10),
      pt('transformer-dpa', 4096, 40),
      pt('transformer-ea', 4096, 'oom'),
      pt('grassmann', 8192, 10),
      pt('transformer-dpa', 8192, 'oom'),
      pt('transformer-ea', 8192, 'oom-skipped'),
    ];
    const t = scalingTable(points, MODELS);
    expect(t.columns.slice(0, 7)).toEqual([
      'L',
      'B',
      'grassmann µs/token',
      'transformer-dpa µs/token',
      'transformer-ea µs/token',
      'transformer-dpa ÷ grassmann',
      'transformer-ea ÷ grassmann',
    ]);
    expect(t.rows[0]?.slice(0, 7)).toEqual([4096, 2, 10, 40, 'OOM', 4, null]);
    expect(t.rows[1]?.slice(0, 7)).toEqual([8192, 1, 10, 'OOM', 'OOM (not run)', null, null]);
    expect(t.columns.slice(7)).toEqual([
      'grassmann peak RSS MB',
      'transformer-dpa peak RSS MB',
      'transformer-ea peak RSS MB',
      'load 1m',
    ]);
    expect(t.rows.map((r) => r.slice(7))).toEqual([
      [100, 100, null, 1],
      [100, null, null, 2],
    ]);
    expect(lastLRan(points, MODELS)).toEqual({ grassmann: 8192, 'transformer-dpa': 4096, 'transformer-ea': null });
  });

  it('classifies a wasm heap exhaustion as out of memory, other failures not', () => {
    expect(isOutOfMemory('RuntimeError: memory access out of bounds\n    at wasm://wasm/0019ea4a')).toBe(true);
    expect(isOutOfMemory('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory')).toBe(
      true,
    );
    expect(isOutOfMemory("Error: Cannot find module '@grassflow/gpu-layers'")).toBe(false);
  });
});

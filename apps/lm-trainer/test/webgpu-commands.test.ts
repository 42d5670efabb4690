// `inspect`, `ladder`, `bench` and `bench --generate` with `--backend webgpu` at tiny sizes: each runs (no synchronous
// read is left on their paths: dataSync throws on webgpu under Node) and its numbers agree with `--backend cpu` to
// 1e-4 relative where they are not timings; bench labels numbers from a software adapter as software rendering.
// Without a GPU it runs on Mesa's lavapipe (software Vulkan, slow). Skipped only when the webgpu packages or any
// adapter are missing and GRASSFLOW_REQUIRE_WEBGPU is not set (CI installs lavapipe and sets it); inspect also needs
// the data (GRASSFLOW_DATA_DIR) for its tokenizer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createModel, initBackend, preset, saveCheckpoint, webgpuSuiteGate } from '@grassflow/gpu-layers';
import type { GenerateBenchRow } from '../src/bench/generate.js';
import { formatTrainBench, type TrainBenchResult } from '../src/bench/train.js';
import { inspectCli } from '../src/inspect/command.js';
import { formatProfile, type ProfileResult } from '../src/bench/profile.js';
import type { ScalingResult } from '../src/bench/scaling-report.js';
import type { LadderResults } from '../src/ladder/report.js';
import { cli, DATA_DIR, tmp } from './helpers.js';

const { info, missing, skip } = await webgpuSuiteGate('webgpu command tests');
const fallback = info?.adapter?.fallback === true;

/**
 * Every number of `got` against the same place in `want` (same structure, same non-numbers):
 * |got − want| ≤ tol · max(1, |want|). Returns the largest such ratio, and fails naming the path where a value differs.
 */
function compareNumbers(got: unknown, want: unknown, tol: number, path = '$'): number {
  if (typeof want === 'number') {
    expect(typeof got, path).toBe('number');
    const err = Math.abs((got as number) - want) / Math.max(1, Math.abs(want));
    expect(err, `${path}: ${String(got)} vs ${want}`).toBeLessThanOrEqual(tol);
    return err;
  }
  if (Array.isArray(want)) {
    expect(Array.isArray(got), path).toBe(true);
    expect((got as unknown[]).length, path).toBe(want.length);
    return Math.max(0, ...want.map((w, i) => compareNumbers((got as unknown[])[i], w, tol, `${path}[${i}]`)));
  }
  if (want !== null && typeof want === 'object') {
    expect(Object.keys(got as object).sort(), path).toEqual(Object.keys(want).sort());
    return Math.max(
      0,
      ...Object.entries(want).map(([k, w]) =>
        compareNumbers((got as Record<string, unknown>)[k], w, tol, `${path}.${k}`),
      ),
    );
  }
  expect(got, path).toEqual(want);
  return 0;
}

describe.skipIf(skip)('commands with --backend webgpu (tiny)', () => {
  it.skipIf(DATA_DIR === undefined)(
    'inspect: the Grassmann and attention reports equal cpu to 1e-4 relative (needs GRASSFLOW_DATA_DIR)',
    async () => {
      expect(missing).toBeUndefined();
      for (const kind of ['grassmann', 'transformer'] as const) {
        const ck = join(tmp(), kind);
        await initBackend({ backend: 'cpu' });
        const model = createModel(
          preset('tiny', { kind, vocabSize: 30522, dModel: 8, dFF: 16, r: 4, maxLen: 16, offsets: [[1], [2, 3]] }),
          { seed: 4 },
        );
        await saveCheckpoint(ck, model, { extra: { run: { tokenizer: 'wordpiece' } } });
        model.dispose();
        const json: unknown[] = [];
        for (const backend of ['cpu', 'webgpu']) {
          // In this process (the command's own entry, as grassflow-lm runs it), so that the backend can be checked.
          const out = join(tmp(), `${kind}-${backend}`);
          const text = 'The game was released in Japan in 2011 and again in 2012.';
          const argv = [
            '--checkpoint',
            ck,
            '--text',
            text,
            '--backend',
            backend,
            '--data-dir',
            DATA_DIR ?? '',
            '--out',
            out,
          ];
          expect(await inspectCli.run(argv)).toBe(0);
          expect(tf.getBackend()).toBe(backend);
          json.push(JSON.parse(readFileSync(join(out, 'inspect.json'), 'utf8')));
        }
        await initBackend({ backend: 'cpu' });
        const [cpu, gpu] = json as [Record<string, unknown>, Record<string, unknown>];
        const part = kind === 'grassmann' ? 'grassmann' : 'attention';
        expect(gpu[part]).toBeDefined();
        for (const k of ['model', 'samples', part]) compareNumbers(gpu[k], cpu[k], 1e-4, k); // not the command line
      }
    },
  );

  it('ladder, one tiny level: training losses, loss curve and scores equal cpu to 1e-4 relative', () => {
    expect(missing).toBeUndefined();
    const results: LadderResults[] = [];
    for (const backend of ['cpu', 'webgpu']) {
      const out = join(tmp(), `ladder-${backend}`);
      const r = cli([
        'ladder',
        ...['--levels', '1', '--models', 'grassmann,transformer-dpa', '--seeds', '1', '--vocab', '4'],
        ...['--layers', '1', '--d-model', '16', '--heads', '2', '--r', '4', '--offsets', '1', '--seq-len', '8'],
        ...['--steps', '6', '--batch', '8', '--lr', '1e-2', '--eval-seqs', '8', '--backend', backend, '--out', out],
      ]);
      expect(r.code, r.stderr).toBe(0);
      results.push(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as LadderResults);
    }
    const [cpu, gpu] = results as [LadderResults, LadderResults];
    expect(gpu.complete).toBe(true);
    expect(gpu.runs.map((x) => x.model)).toEqual(['grassmann', 'transformer-dpa']);
    gpu.runs.forEach((run, i) => {
      const want = cpu.runs[i] as (typeof cpu.runs)[number];
      compareNumbers(run.lossCurve, want.lossCurve, 1e-4, `${run.model}.lossCurve`);
      compareNumbers(run.finalLoss, want.finalLoss, 1e-4, `${run.model}.finalLoss`);
      expect(run.score, run.model).toEqual(want.score);
    });
  });

  it('bench: the loss of the same steps equals cpu; the result says software rendering on a fallback adapter', () => {
    expect(missing).toBeUndefined();
    // V 256 and B 2: lavapipe takes minutes for tiny's default head over the 30,522 WordPiece ids
    const args = ['bench', '--model', 'grassmann', '--preset', 'tiny', '--vocab', '256', '--batch', '2'];
    const runs: TrainBenchResult[] = [];
    for (const backend of ['cpu', 'webgpu']) {
      const r = cli([...args, '--steps', '2', '--warmup', '1', '--backend', backend, '--json']);
      expect(r.code, r.stderr).toBe(0);
      runs.push(JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as TrainBenchResult);
    }
    const [cpu, gpu] = runs as [TrainBenchResult, TrainBenchResult];
    expect(gpu.backend).toBe('webgpu');
    expect(gpu.adapter).toEqual(expect.any(String));
    expect(gpu.software_rendering).toBe(fallback);
    expect(cpu).toMatchObject({ adapter: null, software_rendering: false });
    compareNumbers(gpu.last_loss, cpu.last_loss, 1e-4, 'last_loss');
    const text = formatTrainBench(gpu); // what bench prints without --json
    if (fallback === true) {
      expect(text).toMatch(/^NOTE +software rendering: a fallback WebGPU adapter .* not GPU numbers$/m);
      expect(text).toMatch(/^train tokens\/s +[\d.]+ \(software rendering\)$/m);
    } else expect(text).not.toContain('software rendering');
  });

  it('bench --generate: rows for both kinds, state bytes equal cpu, software rendering labelled', () => {
    expect(missing).toBeUndefined();
    const args = ['bench', '--generate', '--preset', 'tiny', '--vocab', '64', '--contexts', '4,8', '--steps', '2'];
    const rows: GenerateBenchRow[][] = [];
    for (const backend of ['cpu', 'webgpu']) {
      const r = cli([...args, '--baseline-runs', '1', '--backend', backend, '--json']);
      expect(r.code, r.stderr).toBe(0);
      rows.push(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as GenerateBenchRow),
      );
    }
    const [cpu, gpu] = rows as [GenerateBenchRow[], GenerateBenchRow[]];
    expect(gpu.map((x) => [x.model, x.context, x.backend])).toEqual(cpu.map((x) => [x.model, x.context, 'webgpu']));
    gpu.forEach((x, i) => {
      expect(x.state_bytes).toBe(cpu[i]?.state_bytes);
      expect(x.software_rendering).toBe(fallback);
      expect(x.adapter).toEqual(expect.any(String));
      for (const k of ['decode_tokens_per_s', 'full_forward_tokens_per_s'] as const)
        expect(Number.isFinite(x[k]) && (x[k] as number) > 0, k).toBe(true);
    });
    if (fallback === true) {
      const text = cli([...args, '--baseline-runs', '0', '--backend', 'webgpu']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stderr).toMatch(/^grassmann context 4: [\d.]+ tokens\/s \(software rendering\), \d+ state bytes$/m);
      expect(text.stdout).toMatch(/^software rendering: a fallback WebGPU adapter/m);
    }
  });

  it('bench --scaling: every point runs on webgpu; scaling.json and scaling.md label software rendering', () => {
    expect(missing).toBeUndefined();
    const out = join(tmp(), 'scaling');
    const r = cli([
      ...['bench', '--scaling', '--models', 'grassmann,transformer-dpa', '--lengths', '8', '--tokens', '16'],
      ...['--repeats', '1', '--d-model', '16', '--r', '4', '--backend', 'webgpu', '--json', '--out', out],
    ]);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(readFileSync(join(out, 'scaling.json'), 'utf8')) as ScalingResult;
    expect(res.points.map((p) => [p.model, p.status])).toEqual([
      ['grassmann', 'ok'],
      ['transformer-dpa', 'ok'],
    ]);
    expect(res).toMatchObject({ backend: 'webgpu', software_rendering: fallback });
    expect(res.adapter).toEqual(expect.any(String));
    const md = readFileSync(join(out, 'scaling.md'), 'utf8');
    if (fallback === true) expect(md).toMatch(/^\*\*software rendering: a fallback WebGPU adapter .*\*\*$/m);
    expect(md).toContain(`Backend webgpu on ${res.adapter ?? ''};`);
  });

  it('bench --profile: one step profiled on webgpu; the result and its text label software rendering', () => {
    expect(missing).toBeUndefined();
    const r = cli([
      ...['bench', '--profile', '--model', 'grassmann', '--preset', 'tiny', '--vocab', '256', '--batch', '2'],
      ...['--steps', '1', '--warmup', '1', '--backend', 'webgpu', '--json'],
    ]);
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as ProfileResult;
    expect(p).toMatchObject({ backend: 'webgpu', software_rendering: fallback });
    expect(p.adapter).toEqual(expect.any(String));
    expect(p.kernels_per_step.total).toBeGreaterThan(0);
    const text = formatProfile(p);
    expect(text).toContain(`; webgpu on ${p.adapter ?? ''}; `);
    if (fallback === true) expect(text).toMatch(/^\*\*software rendering: a fallback WebGPU adapter .*\*\*$/m);
  });
});

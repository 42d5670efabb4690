// `grassflow-lm bench --against pytorch`: the ratio and table (always), the missing-torch message (always), and
// where an interpreter imports torch, the command end to end and the PyTorch model's loss on grassflow's weights.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { countParams, createModel, initBackend, lmLoss, preset, type LanguageModel } from '@grassflow/gpu-layers';
import { writeSafetensorsFile } from '@grassflow/checkpoints';
import { parseFlags } from '@grassflow/training';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bestRun,
  compareResults,
  describeConfiguration,
  findPytorchScript,
  findTorchPython,
  formatComparison,
  pytorchArgs,
  PYTORCH_MISSING,
  type PytorchBenchResult,
} from '../src/bench/against-pytorch.js';
import { BENCH_FLAGS, benchModelConfig, type TrainBenchResult } from '../src/bench/train.js';
import { cli, DATA_DIR, tmp } from './helpers.js';

/** A result of either benchmark with the given throughput and CPU time (the other fields fixed). */
function result(tokensPerS: number, cpuPerStep: number): TrainBenchResult {
  return {
    model: 'grassmann',
    preset: 'paper-6l',
    batch: 8,
    micro_batch: 8,
    block: 128,
    vocab: 30522,
    params: 12_606_656,
    steps: 5,
    warmup_steps: 1,
    loss: 'chunked',
    head: 'tied',
    ids: 'synthetic',
    train_tokens_per_s: tokensPerS,
    sec_per_step: 1024 / tokensPerS,
    sec_per_step_min: 1,
    sec_per_step_max: 2,
    cpu_sec_per_step: cpuPerStep,
    last_loss: 10.3,
    backend: 'wasm',
    threads: 2,
    simd: true,
    blas: 'openblas 0.3.21, 2 threads',
    adapter: null,
    software_rendering: false,
    peak_rss_mb: 900,
    wasm_heap_peak_mb: 1200,
    loadavg_start: 0.5,
    loadavg_end: 1,
  };
}

const TORCH_FIELDS = {
  torch_version: '1.13.1',
  blas: '/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3, /usr/lib/x86_64-linux-gnu/libopenblasp-r0.3.21.so',
  init_std: 0.02,
  dtype: 'float32',
};

describe('bench --against pytorch: ratio and table', () => {
  const paper = preset('paper-6l');
  const configuration = describeConfiguration(paper, 'grassmann', 'paper-6l', 8);
  const torch: PytorchBenchResult = {
    ...result(1580, 2.5),
    backend: 'pytorch',
    simd: null,
    adapter: null,
    loss: 'full',
    ...TORCH_FIELDS,
  };
  const c = compareResults(configuration, result(790, 10), torch, { before: 0.54, after: 2 }, '/usr/bin/python3');

  it('describes the configuration in words', () => {
    expect(configuration).toBe('grassmann paper-6l (d 256, 6 layers, V 30,522), B 8, L 128');
  });

  it('ratio = grassflow tokens/s ÷ PyTorch tokens/s; cpu_ratio = PyTorch CPU s ÷ grassflow CPU s', () => {
    expect(c.ratio).toBeCloseTo(0.5, 12);
    expect(c.cpu_ratio).toBeCloseTo(0.25, 12);
    expect(compareResults(configuration, result(400, 1), torch, { before: 0, after: 0 }, 'p').ratio).toBeCloseTo(
      400 / 1580,
      12,
    );
  });

  it('prints a Markdown table row with both throughputs, the ratio, CPU seconds and the load average', () => {
    const text = formatComparison(c);
    const lines = text.split('\n');
    expect(lines[0]).toContain(
      'wasm SIMD, 2 threads (products: openblas 0.3.21, 2 threads), chunked loss, tied head; ' +
        'PyTorch 1.13.1 (libblas.so.3, libopenblasp-r0.3.21.so), 2 threads, float32',
    );
    expect(lines[0]).toContain('12,606,656 params');
    expect(lines[2]).toMatch(/^\| configuration \| grassflow tokens\/s \| PyTorch tokens\/s \| ratio \|/);
    expect(lines[4]).toBe(
      '| grassmann paper-6l (d 256, 6 layers, V 30,522), B 8, L 128 | 790 | 1,580 | 0.50 | 10.00 | 2.50 | 0.54 → 2.00 |',
    );
  });

  it('with --rounds: the best run of each side, a row per round and one for the best', () => {
    const slow = { ...torch, train_tokens_per_s: 900 };
    expect(bestRun([result(700, 9), result(790, 10), result(650, 8)]).train_tokens_per_s).toBe(790);
    expect(bestRun([slow, torch]).train_tokens_per_s).toBe(1580);
    const round = (first: 'grassflow' | 'pytorch', g: number, p: number) => ({
      first,
      grassflow_tokens_per_s: g,
      pytorch_tokens_per_s: p,
      ratio: g / p,
      grassflow_cpu_sec_per_step: 10,
      pytorch_cpu_sec_per_step: 2.5,
      loadavg_before: 1,
      loadavg_after: 2,
    });
    const text = formatComparison({ ...c, rounds: [round('grassflow', 700, 900), round('pytorch', 790, 1580)] });
    const rows = text.split('\n').slice(4);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain(', round 1 (grassflow first) | 700 | 900 | 0.78 |');
    expect(rows[1]).toContain(', round 2 (pytorch first) | 790 | 1,580 | 0.50 |');
    expect(rows[2]).toContain(', best of 2 each | 790 | 1,580 | 0.50 |');
  });

  it('passes bench_lm.py the exact model config, the steps and the expected parameter count', () => {
    const f = parseFlags(
      ['--d-model', '128', '--layers', '4', '--vocab', '8192', '--batch', '32', '--steps', '3'],
      BENCH_FLAGS,
    );
    const config = benchModelConfig(f);
    const args = pytorchArgs(f, config, 2);
    const at = (flag: string) => args[args.indexOf(flag) + 1];
    expect(JSON.parse(at('--config') as string)).toEqual(config);
    expect(config).toMatchObject({ dModel: 128, dFF: 512, nLayers: 4, vocabSize: 8192, maxLen: 128 });
    expect((config as { offsets: number[][] }).offsets).toEqual([[1], [2], [4], [8]]);
    expect(at('--batch')).toBe('32');
    expect(at('--steps')).toBe('3');
    expect(at('--threads')).toBe('2');
    expect(at('--expect-params')).toBe(String(countParams(config)));
  });

  it('finds the reference script of this repository', () => {
    expect(findPytorchScript()).toMatch(/bench\/pytorch\/bench_lm\.py$/);
  });
});

describe('bench --against pytorch without torch', () => {
  it('says how to install it, one line, exit code 2', () => {
    const r = cli(['bench', '--against', 'pytorch', '--preset', 'tiny', '--python', '/nonexistent/python3']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('apt-get install python3-torch');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.startsWith(PYTORCH_MISSING)).toBe(true);
    expect(r.stdout).toBe('');
  });
});

const found = findTorchPython(); // once: a second search could find what the first did not (an import timed out)
const torchPython = found.python;
const why = `no Python interpreter here imports torch (${found.tried.join('; ')}): apt-get install python3-torch`;
if (torchPython === null) console.log(`skipping the PyTorch runs of bench --against pytorch: ${why}`);

describe.skipIf(torchPython === null)('bench --against pytorch with torch', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('runs both on a tiny configuration and prints the table, then the JSON line with the ratio', () => {
    const r = cli([
      'bench',
      '--against',
      'pytorch',
      '--preset',
      'tiny',
      '--batch',
      '2',
      '--steps',
      '2',
      '--vocab',
      '101',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const j = JSON.parse(lines[lines.length - 1] as string) as {
      ratio: number;
      grassflow: TrainBenchResult;
      pytorch: PytorchBenchResult;
    };
    const params = countParams(preset('tiny', { vocabSize: 101 }));
    expect(j.grassflow.params).toBe(params);
    expect(j.pytorch.params).toBe(params);
    expect(j.pytorch).toMatchObject({ backend: 'pytorch', batch: 2, block: 16, vocab: 101, steps: 2, threads: 2 });
    expect(j.ratio).toBeCloseTo(j.grassflow.train_tokens_per_s / j.pytorch.train_tokens_per_s, 10);
    // both trained V-way: the loss at initialisation is ≈ ln V
    expect(Math.abs(j.pytorch.last_loss - Math.log(101))).toBeLessThan(0.5);
    expect(r.stdout).toContain('| grassmann tiny (d 16, 2 layers, V 101), B 2, L 16 |');
  });

  it.skipIf(DATA_DIR === undefined)(
    'the adaptive head on both sides: the same parameter count, WikiText-2 ids, a loss near ln V at initialisation',
    () => {
      const flags = ['--preset', 'tiny', '--vocab', '30522', '--head', 'adaptive', '--batch', '2', '--steps', '2'];
      const r = cli(['bench', '--against', 'pytorch', ...flags, '--ids', 'wiki', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout.trim()) as { grassflow: TrainBenchResult; pytorch: PytorchBenchResult };
      const params = countParams(preset('tiny', { vocabSize: 30522, head: 'adaptive', cutoffs: [2000, 10000] }));
      expect(j.grassflow.params).toBe(params);
      expect(j.pytorch.params).toBe(params);
      expect(j.pytorch).toMatchObject({ head: 'adaptive', ids: 'wiki' });
      for (const side of [j.grassflow, j.pytorch]) expect(Math.abs(side.last_loss - Math.log(30522))).toBeLessThan(1);
      const refused = cli(['bench', '--against', 'pytorch', ...flags]); // synthetic ids with an adaptive head
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('give both --head adaptive and --ids wiki');
    },
  );

  /** PyTorch's loss (eval mode) on grassflow's weights and token ids, from grassflow's state dict. */
  async function pytorchLossOf(model: LanguageModel, x: number[][], y: number[][]): Promise<number> {
    const dir = tmp();
    const dict = model.stateDict();
    const tensors = new Map(
      [...dict].map(([name, t]) => [
        name,
        { dtype: 'F32' as const, shape: t.shape, data: t.dataSync() as Float32Array },
      ]),
    );
    await writeSafetensorsFile(join(dir, 'model.safetensors'), tensors);
    tf.dispose([...dict.values()]);
    writeFileSync(join(dir, 'ids.json'), JSON.stringify({ x, y }));
    const r = spawnSync(
      torchPython as string,
      [
        findPytorchScript() as string,
        '--config',
        JSON.stringify(model.config),
        '--state-dict',
        join(dir, 'model.safetensors'),
        '--loss-of',
        join(dir, 'ids.json'),
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    return (JSON.parse(r.stdout.trim()) as { loss: number }).loss;
  }

  it.each([
    ['grassmann post-LN, one offset a layer', preset('tiny', { vocabSize: 37 })],
    [
      'grassmann pre-LN, several offsets, pairs missing near t = 0',
      preset('tiny', {
        vocabSize: 37,
        norm: 'pre',
        offsets: [
          [1, 3],
          [2, 5, 9],
        ],
      }),
    ],
    ['transformer-dpa post-LN', preset('tiny', { kind: 'transformer', vocabSize: 37 })],
    ['transformer-ea pre-LN', preset('tiny', { kind: 'transformer', attention: 'ea', vocabSize: 37, norm: 'pre' })],
  ])('the PyTorch model is grassflow’s: same loss on the same weights (%s)', async (_, config) => {
    const B = 3;
    const L = config.maxLen;
    const ids = Array.from({ length: B }, (_, b) => Array.from({ length: L + 1 }, (_, t) => (7 * b + 11 * t + 3) % 37));
    const x = ids.map((row) => row.slice(0, L));
    const y = ids.map((row) => row.slice(1));
    const model = createModel(config, { seed: 5 });
    const ours = tf.tidy(() =>
      lmLoss(model.apply(tf.tensor2d(x, [B, L], 'int32')), tf.tensor2d(y, [B, L], 'int32')).dataSync(),
    )[0] as number;
    const theirs = await pytorchLossOf(model, x, y);
    model.dispose();
    expect(Math.abs(theirs - ours) / ours).toBeLessThan(1e-5);
  });
});

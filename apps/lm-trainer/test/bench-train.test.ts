// `grassflow-lm bench` (training throughput) at a tiny size: the JSON line's fields and types, never timings.
import { describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

describe('grassflow-lm bench (training step)', () => {
  it('prints one JSON line with throughput, backend and memory fields', () => {
    const r = cli([
      'bench',
      '--model',
      'grassmann',
      '--preset',
      'tiny',
      '--batch',
      '2',
      '--steps',
      '2',
      '--vocab',
      '101',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const j = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(j).toMatchObject({
      model: 'grassmann',
      preset: 'tiny',
      batch: 2,
      block: 16,
      vocab: 101,
      steps: 2,
      warmup_steps: 1,
      loss: 'chunked',
      backend: 'wasm',
      simd: true,
    });
    for (const k of [
      'train_tokens_per_s',
      'sec_per_step',
      'sec_per_step_min',
      'sec_per_step_max',
      'cpu_sec_per_step',
      'peak_rss_mb',
      'wasm_heap_peak_mb',
      'params',
      'threads',
      'loadavg_start',
      'loadavg_end',
    ]) {
      expect(typeof j[k], k).toBe('number');
      expect(j[k] as number, k).toBeGreaterThan(k.startsWith('loadavg') ? -1 : 0);
    }
    expect(j['train_tokens_per_s'] as number).toBeCloseTo((2 * 16) / (j['sec_per_step'] as number), 6);
    expect(Number.isInteger(j['threads'])).toBe(true);
    // Loss at initialisation ≈ ln V (the step really trained on V-way targets).
    expect(Math.abs((j['last_loss'] as number) - Math.log(101))).toBeLessThan(0.5);
  });

  it('both loss paths and both attention kinds run; the table form is human-readable', () => {
    const full = cli([
      'bench',
      '--model',
      'transformer-ea',
      '--preset',
      'tiny',
      '--batch',
      '2',
      '--steps',
      '1',
      '--warmup',
      '0',
      '--vocab',
      '50',
      '--loss',
      'full',
    ]);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toMatch(/train tokens\/s\s+\d/);
    expect(full.stdout).toContain('transformer-ea (tiny');
    expect(full.stdout).toContain('full loss');
  });

  it('rejects bad flags with a usage error', () => {
    const r = cli(['bench', '--steps', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--steps must be >= 1');
    const t = cli(['bench', '--threads', 'two']);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('--threads must be an integer');
  });
});

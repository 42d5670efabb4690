// `grassflow-lm bench --profile`: the kernel summary (synthetic kernels) and the JSON line at a tiny size (its
// structure and sums, never timings).
import { describe, expect, it } from 'vitest';
import { kernelKind, summariseKernels, type ProfileResult } from '../src/bench/profile.js';
import { cli } from './helpers.js';

describe('bench --profile: kernel summary', () => {
  it('groups kernels by kind', () => {
    expect(kernelKind('BatchMatMul')).toBe('matmul');
    expect(kernelKind('_FusedMatMul')).toBe('matmul');
    expect(kernelKind('Multiply')).toBe('elementwise');
    expect(kernelKind('Erf')).toBe('elementwise');
    expect(kernelKind('Sum')).toBe('reduction');
    expect(kernelKind('Transpose')).toBe('data movement');
    expect(kernelKind('UnsortedSegmentSum')).toBe('data movement');
  });

  it('counts and times per step, largest first, totals by kind', () => {
    const kernels = [
      { name: 'Add', kernelTimeMs: 1 },
      { name: 'BatchMatMul', kernelTimeMs: 10 },
      { name: 'Add', kernelTimeMs: 3 },
      { name: 'Transpose', kernelTimeMs: 2 },
      { name: 'Multiply', kernelTimeMs: NaN }, // a backend without kernel times: counted, 0 ms
    ];
    const { byName, byKind } = summariseKernels(kernels, 2);
    expect(byName.map((r) => r.name)).toEqual(['BatchMatMul', 'Add', 'Transpose', 'Multiply']);
    expect(byName[1]).toEqual({ name: 'Add', kind: 'elementwise', count: 1, ms: 2 });
    expect(byKind).toEqual([
      { name: 'matmul', kind: 'matmul', count: 0.5, ms: 5 },
      { name: 'elementwise', kind: 'elementwise', count: 1.5, ms: 2 },
      { name: 'reduction', kind: 'reduction', count: 0, ms: 0 },
      { name: 'data movement', kind: 'data movement', count: 0.5, ms: 1 },
    ]);
  });
});

describe('bench --profile at a tiny size', () => {
  it('prints phases that add up to the step, kernels per phase, and the dispatch cost', () => {
    const r = cli([
      'bench',
      '--profile',
      '--preset',
      'tiny',
      '--batch',
      '2',
      '--steps',
      '1',
      '--vocab',
      '101',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const p = JSON.parse(lines[0] as string) as ProfileResult;
    expect(p).toMatchObject({ model: 'grassmann', preset: 'tiny', batch: 2, block: 16, vocab: 101, backend: 'wasm' });
    const ph = p.phases_ms;
    const parts = ph.forward_loss_backward + ph.clip + ph.readback + ph.adamw + ph.dispose;
    expect(Math.abs(parts - ph.step)).toBeLessThan(0.05 * ph.step);
    const k = p.kernels_per_step;
    expect(k.total).toBe(k.forward_loss_backward + k.clip + k.adamw);
    // on wasm the norm is one loop over the gradients' storage (no kernel) and AdamW one loop per parameter whose
    // only kernel makes the new tensor θ is written into: 30 parameters (2 embeddings + 2 layers × 14)
    expect(k.clip).toBe(0);
    expect(k.adamw).toBe(30);
    expect(p.by_kind.find((row) => row.name === 'matmul')?.count).toBeGreaterThan(0);
    expect(Math.round(p.by_kind.reduce((s, row) => s + row.count, 0))).toBe(k.total);
    expect(p.top_kernels.length).toBeGreaterThan(0);
    expect(p.dispatch_us_per_op).toBeGreaterThan(0);
    expect(p.dispatch_us_per_taped_op).toBeGreaterThan(0);
  });

  it('refuses --micro-batch (it times one pass per step)', () => {
    const r = cli(['bench', '--profile', '--preset', 'tiny', '--batch', '2', '--micro-batch', '1', '--steps', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--micro-batch');
  });
});

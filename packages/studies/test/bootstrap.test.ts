import { describe, expect, it } from 'vitest';
import { pairedBootstrap } from '@grassflow/studies';

/** Deterministic per-window NLL sums of `units` windows of `len` targets, with some spread between windows. */
function windows(units: number, len: number, salt: number): { sums: Float64Array; counts: Float64Array } {
  const sums = new Float64Array(units);
  const counts = new Float64Array(units).fill(len);
  for (let u = 0; u < units; u++) sums[u] = len * (4 + Math.sin(u * 1.7 + salt));
  return { sums, counts };
}

describe('pairedBootstrap', () => {
  it('identical runs give a zero difference with a zero-width interval', () => {
    const { sums, counts } = windows(200, 128, 0);
    const r = pairedBootstrap({ runs: [sums, sums], counts }, { runs: [Float64Array.from(sums)], counts });
    expect(r).toEqual({ estimate: 0, lo: 0, hi: 0, draws: 10_000, seed: 1, units: 200 });
  });

  it('a constant shift of every target gives exactly that shift on every draw', () => {
    const { sums, counts } = windows(300, 64, 1);
    counts[299] = 17; // a short last window
    const shifted = sums.map((s, u) => s + 0.25 * (counts[u] as number));
    const r = pairedBootstrap({ runs: [shifted], counts }, { runs: [sums], counts }, { draws: 2000, seed: 3 });
    expect(r.estimate).toBeCloseTo(0.25, 12);
    expect(r.lo).toBeCloseTo(0.25, 12);
    expect(r.hi).toBeCloseTo(0.25, 12);
  });

  it('averages a group over its runs, pairs the windows, and is reproducible from its seed', () => {
    const a = windows(400, 128, 0);
    const b = windows(400, 128, 2);
    const r = pairedBootstrap({ runs: [a.sums], counts: a.counts }, { runs: [b.sums], counts: b.counts });
    const mean = (xs: Float64Array) => xs.reduce((s, x) => s + x, 0) / (400 * 128);
    expect(r.estimate).toBeCloseTo(mean(a.sums) - mean(b.sums), 12);
    expect(r.lo).toBeLessThan(r.estimate);
    expect(r.hi).toBeGreaterThan(r.estimate);
    expect(pairedBootstrap({ runs: [a.sums], counts: a.counts }, { runs: [b.sums], counts: b.counts })).toEqual(r);
    // two runs of a group: the group's value is their mean, so a and its mirror around b average to b
    const mirror = a.sums.map((s, u) => 2 * (b.sums[u] as number) - s);
    const g = pairedBootstrap({ runs: [a.sums, mirror], counts: a.counts }, { runs: [b.sums], counts: b.counts });
    expect(Math.abs(g.estimate)).toBeLessThan(1e-12);
    expect(Math.max(Math.abs(g.lo), Math.abs(g.hi))).toBeLessThan(1e-12);
  });

  it('refuses groups scored on different windows', () => {
    const a = windows(10, 128, 0);
    const b = windows(11, 128, 0);
    expect(() => pairedBootstrap({ runs: [a.sums], counts: a.counts }, { runs: [b.sums], counts: b.counts })).toThrow(
      /same ones/,
    );
  });
});

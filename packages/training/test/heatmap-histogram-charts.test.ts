import { describe, expect, it } from 'vitest';
import {
  heatmapChartSpec,
  histogramBins,
  histogramChartSpec,
  renderHeatmapChart,
  renderHistogramChart,
} from '@grassflow/training';

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];

describe('histogramBins', () => {
  it('counts values into equal bins, closes the last bin and skips non-finite or out-of-domain values', () => {
    const h = histogramBins([0, 0.5, 1, 1.5, 2, 3.999, 4, NaN, Infinity, -1, 5], { bins: 4, domain: [0, 4] });
    expect(h.edges).toEqual([0, 1, 2, 3, 4]);
    // [0,1): 0, 0.5 · [1,2): 1, 1.5 · [2,3): 2 · [3,4]: 3.999, 4
    expect(h.counts).toEqual([2, 2, 1, 2]);
    expect(h.skipped).toBe(4);
  });

  it('takes the data range by default, and widens a single value to a unit interval', () => {
    expect(histogramBins([2, 4, 6], { bins: 2 })).toEqual({ edges: [2, 4, 6], counts: [1, 2], skipped: 0 });
    expect(histogramBins([3, 3], { bins: 1 })).toEqual({ edges: [2.5, 3.5], counts: [2], skipped: 0 });
    expect(() => histogramBins([1], { bins: 0 })).toThrow(/bins must be an integer >= 1/);
    expect(() => histogramBins([1], { domain: [1, 1] })).toThrow(/domain must be two finite numbers lo < hi/);
  });
});

describe('histogramChartSpec', () => {
  it('draws each sample as fractions over shared bins, one row per sample when there are several', () => {
    const spec = histogramChartSpec({
      title: 't',
      xLabel: 'x',
      bins: 2,
      domain: [0, 2],
      series: [
        { name: 'a', values: [0.5, 1.5, 1.7, 1.9] },
        { name: 'b', values: [0.1] },
      ],
    });
    const data = (spec['data'] as { values: Array<{ x0: number; x1: number; y: number; series: string }> }).values;
    expect(data).toEqual([
      { x0: 0, x1: 1, y: 0.25, series: 'a' },
      { x0: 1, x1: 2, y: 0.75, series: 'a' },
      { x0: 0, x1: 1, y: 1, series: 'b' },
      { x0: 1, x1: 2, y: 0, series: 'b' },
    ]);
    expect((spec['encoding'] as Record<string, unknown>)['row']).toBeDefined();
    const one = histogramChartSpec({
      title: 't',
      xLabel: 'x',
      normalize: false,
      series: [{ name: 'a', values: [1, 2] }],
    });
    expect((one['encoding'] as Record<string, unknown>)['row']).toBeUndefined();
    expect((one['data'] as { values: Array<{ y: number }> }).values.reduce((s, v) => s + v.y, 0)).toBe(2);
  });
});

describe('heatmapChartSpec', () => {
  it('keeps repeated column labels as separate columns and skips empty cells', () => {
    const spec = heatmapChartSpec({
      title: 'α',
      xLabel: 'token',
      yLabel: 'layer',
      xLabels: ['the', 'the', '"q\\'],
      yLabels: ['layer 0', 'layer 1'],
      values: [
        [0.1, null, 0.3],
        [0.4, 0.5, NaN],
      ],
      colorLabel: 'α',
    });
    const data = (spec['data'] as { values: Array<{ x: number; y: number; v: number }> }).values;
    expect(data).toEqual([
      { x: 0, y: 0, v: 0.1 },
      { x: 2, y: 0, v: 0.3 },
      { x: 0, y: 1, v: 0.4 },
      { x: 1, y: 1, v: 0.5 },
    ]);
    const mid = heatmapChartSpec({
      title: 'g',
      xLabel: '',
      yLabel: '',
      xLabels: ['a'],
      yLabels: ['r'],
      values: [[0.4]],
      colorLabel: 'α',
      scheme: 'blueorange',
      domainMid: 0.5,
    });
    expect((mid['encoding'] as { color: { scale: unknown } }).color.scale).toEqual({
      scheme: 'blueorange',
      domainMid: 0.5,
    });
    expect(() =>
      heatmapChartSpec({
        title: 'bad',
        xLabel: '',
        yLabel: '',
        xLabels: ['a'],
        yLabels: ['r'],
        values: [[1, 2]],
        colorLabel: '',
      }),
    ).toThrow(/1 rows of 1/);
  });

  it('renders SVG with every token on the axis (quotes and backslashes intact) and a PNG', async () => {
    const { svg, png } = await renderHeatmapChart({
      title: 'gate',
      xLabel: 'token',
      yLabel: 'layer',
      xLabels: ['the', 'cat', 'the', 'say"s', 'a\\b'],
      yLabels: ['layer 0', 'layer 1'],
      values: [
        [0, 0.25, 0.5, 0.75, 1],
        [1, 0.75, 0.5, 0.25, 0],
      ],
      colorLabel: 'mean α',
      domain: [0, 1],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/>the</g)?.length).toBe(2);
    for (const label of ['cat', 'say"s', 'a\\b', 'layer 0', 'layer 1']) expect(svg).toContain(`>${label}<`);
    expect(svg.match(/aria-roledescription="rect mark"/g)?.length).toBe(10); // one cell per value
    expect(Array.from(png.slice(0, 4))).toEqual(PNG_MAGIC);
  });

  it('renders a histogram with one row per sample', async () => {
    const { svg, png } = await renderHistogramChart({
      title: 'angles',
      xLabel: 'degrees',
      bins: 6,
      domain: [0, 180],
      series: [
        { name: 'layer 0', values: [10, 20, 100] },
        { name: 'layer 1', values: [170] },
      ],
    });
    expect(svg).toContain('>layer 0<');
    expect(svg).toContain('>layer 1<');
    expect(Array.from(png.slice(0, 4))).toEqual(PNG_MAGIC);
  });
});

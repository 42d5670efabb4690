import * as vega from 'vega';
import * as vl from 'vega-lite';
import { describe, expect, it } from 'vitest';
import { lineChartSpec, renderLineChart, type LineChart } from '@grassflow/training';

const chart = (extra: Partial<LineChart> = {}): LineChart => ({
  title: 'time per token',
  xLabel: 'L',
  yLabel: 'µs',
  width: 400,
  series: [
    { name: 'a', points: [128, 1024, 8192].map((x) => [x, x / 10] as const) },
    { name: 'b', points: [128, 1024, 8192].map((x) => [x, 50] as const) },
  ],
  ...extra,
});

/** Pixel position of x = v on the compiled chart's x scale. */
async function xPixel(c: LineChart, v: number): Promise<number> {
  const compiled = vl.compile(lineChartSpec(c) as unknown as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    await view.runAsync();
    return (view.scale('x') as (x: number) => number)(v);
  } finally {
    view.finalize();
  }
}

describe('lineChartSpec axis scales', () => {
  it('keeps a linear x axis by default and makes it logarithmic with logX', () => {
    const plain = lineChartSpec(chart()) as { encoding: { x: Record<string, unknown>; y: Record<string, unknown> } };
    expect(plain.encoding.x['scale']).toBeUndefined();
    expect(plain.encoding.y['scale']).toEqual({ zero: false });
    const logLog = lineChartSpec(chart({ logX: true, logY: true })) as {
      encoding: { x: Record<string, unknown>; y: Record<string, unknown> };
    };
    expect(logLog.encoding.x['scale']).toEqual({ type: 'log' });
    expect(logLog.encoding.y['scale']).toEqual({ type: 'log' });
  });

  it('places 1024 halfway between 128 and 8192 on a log x axis, and at (1024 − 128)/(8192 − 128) on a linear one', async () => {
    // log: (log 1024 − log 128) / (log 8192 − log 128) = 3/6; ratios of positions do not depend on how the domain is
    // rounded
    const logAt = await xPixel(chart({ logX: true }), 1024);
    const [logLo, logHi] = [await xPixel(chart({ logX: true }), 128), await xPixel(chart({ logX: true }), 8192)];
    expect((logAt - logLo) / (logHi - logLo)).toBeCloseTo(0.5, 2);
    const linLo = await xPixel(chart(), 128);
    const linHi = await xPixel(chart(), 8192);
    const linAt = await xPixel(chart(), 1024);
    expect((linAt - linLo) / (linHi - linLo)).toBeCloseTo((1024 - 128) / (8192 - 128), 2);
  });

  it('renders a log-log chart to SVG and PNG', async () => {
    const { svg, png } = await renderLineChart(chart({ logX: true, logY: true }));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('time per token');
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it("shows a study group's whole name in the legend (Vega-Lite's default cuts it at 160 px)", async () => {
    const name = 'transformer-dpa, dModel 64, dFF 256, norm post, lr 0.0005 (n 2)';
    const { svg } = await renderLineChart(chart({ series: [{ name, points: [[1, 2] as const, [2, 1] as const] }] }));
    expect(svg).toContain(`>${name}</text>`);
    expect(svg).not.toContain('…');
  });
});

/** The tick labels of the axis titled `title` in a rendered SVG (vega puts each axis in a role-axis group). */
function tickLabels(svg: string, title: string): string[] {
  const axes = svg.split('<g class="mark-group role-axis"').slice(1);
  const axis = axes.find((a) => a.includes(`>${title}</text>`));
  if (axis === undefined) throw new Error(`no axis titled ${title}`);
  const labels = axis.split('role-axis-label')[1] ?? '';
  return [...labels.split('role-axis-title')[0]!.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] as string);
}

describe('one-point and constant charts', () => {
  const onePoint: LineChart = {
    title: 'one point',
    xLabel: 'step',
    yLabel: 'PPL',
    series: [{ name: 'run', points: [[40, 1234.5678]] }],
  };

  it('gives a single point at step 40 whole-step ticks around it, not one tick at full precision', async () => {
    const { svg } = await renderLineChart(onePoint);
    const xs = tickLabels(svg, 'step');
    expect(xs.length).toBeGreaterThanOrEqual(2);
    expect(xs).toContain('40');
    for (const t of xs) expect(t).toMatch(/^\d+$/);
    const ys = tickLabels(svg, 'PPL');
    expect(ys.length).toBeGreaterThanOrEqual(2);
    for (const t of ys) expect(t.replace(/,/g, '').length).toBeLessThanOrEqual(6);
  });

  it('pads a constant series on a log axis to [v/2, 2v] and leaves a range alone', () => {
    const spec = lineChartSpec({
      ...onePoint,
      logY: true,
      series: [
        {
          name: 'a',
          points: [
            [1, 8],
            [2, 8],
          ],
        },
      ],
    }) as {
      encoding: { y: { scale: Record<string, unknown> } };
    };
    expect(spec.encoding.y.scale).toEqual({ type: 'log', domain: [4, 16] });
    const ranged = lineChartSpec(chart()) as { encoding: { y: { scale: Record<string, unknown> } } };
    expect(ranged.encoding.y.scale['domain']).toBeUndefined();
  });
});

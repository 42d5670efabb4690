// Line charts rendered with vega-lite → vega (SVG) and resvg (PNG).

/** One line of a chart. */
export interface ChartSeries {
  name: string;
  points: ReadonlyArray<readonly [number, number]>;
}

/** A line chart: x against y for one or more series. */
export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
  /** Logarithmic y axis (e.g. perplexity). */
  logY?: boolean;
  width?: number;
  height?: number;
}

/** The vega-lite spec of a {@link LineChart} (inline data, one colour per series). */
export function lineChartSpec(chart: LineChart): Record<string, unknown> {
  const values = chart.series.flatMap((s) => s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).map(([x, y]) => ({ x, y, series: s.name })));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: chart.width ?? 520,
    height: chart.height ?? 300,
    background: 'white',
    data: { values },
    mark: { type: 'line', point: values.length <= 60 },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: chart.xLabel },
      y: { field: 'y', type: 'quantitative', title: chart.yLabel, scale: chart.logY === true ? { type: 'log' } : { zero: false } },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
}

/** Render a chart to an SVG string (vega-lite compile, vega headless view) and a PNG (resvg, system fonts, 2× scale). */
export async function renderLineChart(chart: LineChart): Promise<{ svg: string; png: Uint8Array }> {
  // ESM-only packages, loaded on first use (keeps the CJS build and start-up light)
  const [vega, vl, { Resvg }] = await Promise.all([import('vega'), import('vega-lite'), import('@resvg/resvg-js')]);
  const compiled = vl.compile(lineChartSpec(chart) as unknown as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    const png = new Resvg(svg, { background: 'white', fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } })
      .render()
      .asPng();
    return { svg, png: new Uint8Array(png) };
  } finally {
    view.finalize();
  }
}

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
  /** Logarithmic x axis (e.g. sequence length; with logY a log-log plot). Default false: linear. */
  logX?: boolean;
  width?: number;
  height?: number;
}

/**
 * The scale domain of an axis whose values are all one number v (one point, or a constant series), padded so
 * the axis gets ordinary ticks around v instead of one tick printed at full precision ("40.000000"): [v/2, 2v]
 * on a log axis, else v ± 1 for integers (steps) and v ± 5% (at least 1e-9) otherwise. Undefined when the values
 * span a range (vega's own domain) or there are none.
 */
export function degenerateDomain(vs: readonly number[], log: boolean): [number, number] | undefined {
  if (vs.length === 0) return undefined;
  const v = vs[0] as number;
  if (vs.some((x) => x !== v)) return undefined;
  if (log && v > 0) return [v / 2, v * 2];
  const pad = Number.isInteger(v) ? 1 : Math.max(Math.abs(v) * 0.05, 1e-9);
  return [v - pad, v + pad];
}

/** The vega-lite spec of a {@link LineChart} (inline data, one colour per series). */
export function lineChartSpec(chart: LineChart): Record<string, unknown> {
  const values = chart.series.flatMap((s) =>
    s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).map(([x, y]) => ({ x, y, series: s.name })),
  );
  const xDomain = degenerateDomain(
    values.map((v) => v.x),
    chart.logX === true,
  );
  const yDomain = degenerateDomain(
    values.map((v) => v.y),
    chart.logY === true,
  );
  // steps are whole numbers: no ticks between them (a one-point chart at step 40 reads 39, 40, 41)
  const intX = values.length > 0 && values.every((v) => Number.isInteger(v.x));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: chart.width ?? 520,
    height: chart.height ?? 300,
    background: 'white',
    data: { values },
    mark: { type: 'line', point: values.length <= 60 },
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: chart.xLabel,
        ...(chart.logX === true || xDomain !== undefined
          ? {
              scale: {
                ...(chart.logX === true ? { type: 'log' } : {}),
                ...(xDomain === undefined ? {} : { domain: xDomain, nice: false }),
              },
            }
          : {}),
        ...(intX && chart.logX !== true ? { axis: { tickMinStep: 1 } } : {}),
      },
      y: {
        field: 'y',
        type: 'quantitative',
        title: chart.yLabel,
        scale: {
          ...(chart.logY === true ? { type: 'log' } : { zero: false }),
          ...(yDomain === undefined ? {} : { domain: yDomain }),
        },
      },
      // labelLimit: Vega-Lite cuts legend labels at 160 px, shorter than the name of a study's group
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 600 } },
    },
  };
}

/** Render a line chart to an SVG string and a PNG ({@link renderChartSpec} of {@link lineChartSpec}). */
export async function renderLineChart(chart: LineChart): Promise<{ svg: string; png: Uint8Array }> {
  return renderChartSpec(lineChartSpec(chart));
}

/** Render any vega-lite spec to an SVG string (vega headless view) and a PNG (resvg, system fonts, 2× scale). */
export async function renderChartSpec(spec: Record<string, unknown>): Promise<{ svg: string; png: Uint8Array }> {
  // ESM-only packages, loaded on first use (keeps the CJS build and start-up light)
  const [vega, vl, { Resvg }] = await Promise.all([import('vega'), import('vega-lite'), import('@resvg/resvg-js')]);
  const compiled = vl.compile(spec as unknown as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    const png = new Resvg(svg, {
      background: 'white',
      fitTo: { mode: 'zoom', value: 2 },
      font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
    })
      .render()
      .asPng();
    return { svg, png: new Uint8Array(png) };
  } finally {
    view.finalize();
  }
}

/** A heatmap: values[row][column] as coloured cells, each row and column with its own label (labels may repeat). */
export interface HeatmapChart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** One label per column (e.g. the tokens of a text); repeated labels stay separate columns. */
  xLabels: readonly string[];
  /** One label per row (e.g. 'layer 0'). */
  yLabels: readonly string[];
  /** values[row][column]; null or non-finite: an empty cell. */
  values: ReadonlyArray<ReadonlyArray<number | null>>;
  /** Title of the colour legend. */
  colorLabel: string;
  /** Colour scale domain [lo, hi] (default: the data's range). */
  domain?: readonly [number, number];
  /** Vega colour scheme (default 'viridis'). */
  scheme?: string;
  /** Value at the middle of a diverging scheme (e.g. 0.5 for a gate with scheme 'blueorange'). */
  domainMid?: number;
  /** Cell size in pixels (default 14). */
  cell?: number;
}

/**
 * A vega expression that maps an ordinal index (datum.value) to its label; JSON string literals are valid vega
 * expression literals.
 */
function indexLabelExpr(labels: readonly string[]): string {
  return `${JSON.stringify(labels)}[datum.value]`;
}

/**
 * The vega-lite spec of a {@link HeatmapChart}: rect marks on ordinal axes of the row and column indices,
 * labelled through labelExpr (so two columns with the same token stay two columns).
 */
export function heatmapChartSpec(chart: HeatmapChart): Record<string, unknown> {
  const rows = chart.yLabels.length;
  const cols = chart.xLabels.length;
  if (chart.values.length !== rows || chart.values.some((r) => r.length !== cols)) {
    throw new RangeError(`heatmap '${chart.title}': values must be ${rows} rows of ${cols} (one per y and x label)`);
  }
  const values = chart.values.flatMap((r, y) =>
    r.flatMap((v, x) => (v !== null && Number.isFinite(v) ? [{ x, y, v }] : [])),
  );
  const cell = chart.cell ?? 14;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: Math.max(120, cell * cols),
    height: Math.max(60, cell * rows),
    background: 'white',
    data: { values },
    mark: { type: 'rect' },
    encoding: {
      x: {
        field: 'x',
        type: 'ordinal',
        title: chart.xLabel,
        scale: { domain: Array.from({ length: cols }, (_, i) => i) },
        axis: { labelExpr: indexLabelExpr(chart.xLabels), labelAngle: -90, labelOverlap: false, labelLimit: 90 },
      },
      y: {
        field: 'y',
        type: 'ordinal',
        title: chart.yLabel,
        scale: { domain: Array.from({ length: rows }, (_, i) => i) },
        axis: { labelExpr: indexLabelExpr(chart.yLabels), labelOverlap: false },
      },
      color: {
        field: 'v',
        type: 'quantitative',
        title: chart.colorLabel,
        legend: { format: '.3~g' }, // three significant digits: a narrow range (0.487–0.503) stays readable
        scale: {
          scheme: chart.scheme ?? 'viridis',
          ...(chart.domain === undefined ? {} : { domain: [...chart.domain] }),
          ...(chart.domainMid === undefined ? {} : { domainMid: chart.domainMid }),
        },
      },
    },
  };
}

/** Render a heatmap to SVG and PNG (see {@link renderChartSpec}). */
export async function renderHeatmapChart(chart: HeatmapChart): Promise<{ svg: string; png: Uint8Array }> {
  return renderChartSpec(heatmapChartSpec(chart));
}

/** Bin edges and counts of a histogram. */
export interface HistogramBins {
  /** bins + 1 increasing edges; bin k is [edges[k], edges[k+1]), the last one closed. */
  edges: number[];
  counts: number[];
  /** Values left out: non-finite, or outside the given domain. */
  skipped: number;
}

/**
 * Histogram of `values` in `bins` equal bins over `domain` (default [min, max] of the finite values; a
 * single value v gets [v − 0.5, v + 0.5]). Bin k counts lo + k·w ≤ x < lo + (k+1)·w, w = (hi − lo)/bins;
 * x = hi falls in the last bin.
 */
export function histogramBins(
  values: Iterable<number>,
  options: { bins?: number; domain?: readonly [number, number] } = {},
): HistogramBins {
  const bins = options.bins ?? 30;
  if (!Number.isInteger(bins) || bins < 1)
    throw new RangeError(`histogramBins: bins must be an integer >= 1, got ${bins}`);
  const xs = [...values];
  let [lo, hi] = options.domain ?? [Infinity, -Infinity];
  if (options.domain === undefined) {
    for (const x of xs) {
      if (!Number.isFinite(x)) continue;
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
    }
    if (lo > hi) [lo, hi] = [0, 1];
    if (lo === hi) [lo, hi] = [lo - 0.5, hi + 0.5];
  } else if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi)) {
    throw new RangeError(`histogramBins: domain must be two finite numbers lo < hi, got [${lo}, ${hi}]`);
  }
  const w = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  let skipped = 0;
  for (const x of xs) {
    if (!Number.isFinite(x) || x < lo || x > hi) {
      skipped++;
      continue;
    }
    const k = Math.min(bins - 1, Math.floor((x - lo) / w));
    counts[k] = (counts[k] as number) + 1;
  }
  return { edges: Array.from({ length: bins + 1 }, (_, k) => (k === bins ? hi : lo + k * w)), counts, skipped };
}

/** Histograms of one or more named samples over shared bins; several samples are drawn as rows of small multiples. */
export interface HistogramChart {
  title: string;
  xLabel: string;
  series: ReadonlyArray<{ name: string; values: readonly number[] }>;
  /** Number of bins (default 30). */
  bins?: number;
  /** Shared bin domain (default: the range of all samples). */
  domain?: readonly [number, number];
  /** y = fraction of each sample (default) or raw counts. */
  normalize?: boolean;
  width?: number;
  /** Height of each row (default 200 for one sample, 90 for several). */
  height?: number;
}

/**
 * The vega-lite spec of a {@link HistogramChart}: bins computed here by {@link histogramBins}, bars from edge to edge.
 */
export function histogramChartSpec(chart: HistogramChart): Record<string, unknown> {
  const normalize = chart.normalize ?? true;
  let domain = chart.domain;
  if (domain === undefined) {
    const all = histogramBins(
      chart.series.flatMap((s) => s.values),
      { bins: 1 },
    );
    domain = [all.edges[0] as number, all.edges[1] as number];
  }
  const values = chart.series.flatMap((s) => {
    const h = histogramBins(s.values, { bins: chart.bins ?? 30, domain });
    const total = h.counts.reduce((a, b) => a + b, 0);
    return h.counts.map((c, k) => ({
      x0: h.edges[k],
      x1: h.edges[k + 1],
      y: normalize ? (total === 0 ? 0 : c / total) : c,
      series: s.name,
    }));
  });
  const many = chart.series.length > 1;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: chart.width ?? 520,
    height: chart.height ?? (many ? 90 : 200),
    background: 'white',
    data: { values },
    mark: { type: 'rect', stroke: 'white', strokeWidth: 0.3 },
    encoding: {
      x: { field: 'x0', type: 'quantitative', title: chart.xLabel, scale: { domain: [...domain], nice: false } },
      x2: { field: 'x1' },
      y: { field: 'y', type: 'quantitative', title: normalize ? 'fraction' : 'count' },
      y2: { datum: 0 },
      ...(many
        ? {
            row: {
              field: 'series',
              type: 'nominal',
              title: null,
              sort: chart.series.map((s) => s.name),
              header: { labelAngle: 0, labelAlign: 'left' },
            },
            color: { field: 'series', type: 'nominal', legend: null, sort: chart.series.map((s) => s.name) },
          }
        : {}),
    },
  };
}

/** Render a histogram chart to SVG and PNG (see {@link renderChartSpec}). */
export async function renderHistogramChart(chart: HistogramChart): Promise<{ svg: string; png: Uint8Array }> {
  return renderChartSpec(histogramChartSpec(chart));
}

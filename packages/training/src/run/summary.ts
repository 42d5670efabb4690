// The numbers a run report shows, read from metrics.jsonl: curves, last values, the best evaluation.
import type { ChartSeries, LineChart } from '../charts.js';
import type { MetricRecord, RunFolder } from '../run-folder.js';
import { writeReport, type Report } from '../report.js';

/** A run's metrics, summarised for its report. */
export interface RunSummary {
  /** Step of the last train record. */
  steps: number;
  /** Training tokens at the last train record (0 when not recorded). */
  tokens: number;
  lastLoss: number | null;
  /** Median tokens/s of the train records after step 1 (the first step includes warm-up). */
  tokensPerSec: number | null;
  /** [step, loss] of every train record. */
  train: Array<[number, number]>;
  /** [step, learning rate] of every train record that has `lr`. */
  lr: Array<[number, number]>;
  /** [step, gradient norm before clipping] of every train record that has `grad_norm`. */
  gradNorm: Array<[number, number]>;
  /** Eval records that carry the best metric, in order. */
  evals: MetricRecord[];
  /** The eval record with the lowest best metric (the one of checkpoints/best), null before any. */
  best: MetricRecord | null;
  /** The last eval record, null before any. */
  lastEval: MetricRecord | null;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Summarise metrics records; `bestMetric` (lower is better) selects the best evaluation, as the training loop does. */
export function summariseRun(records: readonly MetricRecord[], bestMetric: string): RunSummary {
  const train = records.filter((r) => r.type === 'train');
  const evals = records.filter((r) => r.type === 'eval' && typeof r[bestMetric] === 'number');
  const last = train[train.length - 1];
  const value = (r: MetricRecord): number => r[bestMetric] as number;
  const best = evals.reduce<MetricRecord | null>((b, r) => (b === null || value(r) < value(b) ? r : b), null);
  return {
    steps: last?.step ?? 0,
    tokens: (last?.['tokens'] as number | undefined) ?? 0,
    lastLoss: (last?.['loss'] as number | undefined) ?? null,
    tokensPerSec: median(train.filter((r) => r.step > 1).map((r) => r['tokens_per_s'] as number)),
    train: train.map((r) => [r.step, r['loss'] as number]),
    lr: metricCurve(train, 'lr'),
    gradNorm: metricCurve(train, 'grad_norm'),
    evals,
    best,
    lastEval: evals[evals.length - 1] ?? null,
  };
}

/** [step, value] of `metric` in each record that has it (a curve for a chart). */
export function metricCurve(records: readonly MetricRecord[], metric: string): Array<[number, number]> {
  return records.filter((r) => typeof r[metric] === 'number').map((r) => [r.step, r[metric] as number]);
}

/** `metric` of a record, or null (no record, or not a number). */
export function metricOf(record: MetricRecord | null, metric: string): number | null {
  const v = record?.[metric];
  return typeof v === 'number' ? v : null;
}

/** A chart of a run report: written as `<file>.svg` and `<file>.png` (see writeReport). */
export interface ReportChart {
  file: string;
  chart: LineChart;
}

/** loss.svg/png: the training loss (cross-entropy, nats) of each series against `xLabel` (default: step). */
export function trainingLossChart(series: readonly ChartSeries[], xLabel = 'step'): ReportChart {
  return { file: 'loss', chart: { title: 'Training loss', xLabel, yLabel: 'cross-entropy (nats)', series } };
}

/** lr.svg/png: the learning rate of each series against the step (warmup, then the cosine decay). */
export function learningRateChart(series: readonly ChartSeries[]): ReportChart {
  return { file: 'lr', chart: { title: 'Learning rate', xLabel: 'step', yLabel: 'learning rate', series } };
}

/**
 * grad-norm.svg/png: the global gradient norm of each series against the step, before clipping (log y: it spans
 * orders of magnitude early on); `clip` adds the clipping threshold as a line.
 */
export function gradNormChart(series: readonly ChartSeries[], clip?: number): ReportChart {
  const steps = series.flatMap((s) => s.points.map(([x]) => x));
  const clipLine: ChartSeries[] =
    clip === undefined || steps.length === 0
      ? []
      : [
          {
            name: `clip ${clip}`,
            points: [
              [Math.min(...steps), clip],
              [Math.max(...steps), clip],
            ],
          },
        ];
  return {
    file: 'grad-norm',
    chart: {
      title: 'Gradient norm (before clipping)',
      xLabel: 'step',
      yLabel: 'global L2 norm',
      series: [...series, ...clipLine],
      logY: true,
    },
  };
}

/** `<file>.svg/png`: a validation metric of each series against the step (log y for perplexities). */
export function evalMetricChart(
  file: string,
  title: string,
  yLabel: string,
  series: readonly ChartSeries[],
  logY = false,
): ReportChart {
  return { file, chart: { title, xLabel: 'step', yLabel, series, ...(logY ? { logY } : {}) } };
}

/**
 * Summarise the run's metrics.jsonl (best by `bestMetric`) and write the report `build` makes of it; returns its path.
 */
export async function reportRun(
  run: RunFolder,
  bestMetric: string,
  build: (summary: RunSummary) => Report,
): Promise<string> {
  return writeReport(run.dir, build(summariseRun(await run.readMetrics(), bestMetric)));
}

// `bench --scaling` results: the crossover length, the table, the log-log chart and the files they go to.
import { join } from 'node:path';
import { writeFileAtomic } from '@grassflow/checkpoints';
import { markdownTable, renderLineChart, writeJsonAtomic, type LineChart } from '@grassflow/training';
import { SOFTWARE_RENDERING_NOTE, type DeviceLabel } from './device-label.js';
import type { ScalingStack } from './scaling-point.js';
import type { ModelKind } from '../shared/model-options.js';

/**
 * How one (model, L) point ended: timed, out of memory, not run because a shorter L was out of memory, or failed
 * otherwise.
 */
export type PointStatus = 'ok' | 'oom' | 'oom-skipped' | 'error';

/** One row of the JSON output (snake_case, as the other bench commands). */
export interface ScalingPoint {
  model: ModelKind;
  L: number;
  B: number;
  status: PointStatus;
  /** Median forward+backward time per token (µs); null unless status is 'ok'. */
  us_per_token: number | null;
  /** Median seconds of one forward+backward pass over B·L tokens. */
  median_s: number | null;
  /** Every timed pass (s). */
  seconds: number[];
  /** Peak resident memory of the process that ran the point (MB); null if it did not finish. */
  peak_rss_mb: number | null;
  /** 1-minute load average of the machine when the point ended (other jobs slow every point down). */
  load_1m: number;
  /** Why it did not finish (status 'oom' / 'error'), or which L ran out of memory first ('oom-skipped'). */
  error?: string;
}

/** Where Grassmann becomes faster per token than one attention kind. */
export interface Crossover {
  attention: ModelKind;
  /**
   * Smallest measured L from which Grassmann is faster at that L and at every longer L where both ran; null if none.
   */
  measured_l: number | null;
  /**
   * L where the log-log lines of the two cross, interpolated between the measured L on either side; null unless
   * bracketed.
   */
  interpolated_l: number | null;
  /** One sentence for people. */
  summary: string;
}

/** Everything `bench --scaling --json` prints, and scaling.json holds. */
export interface ScalingResult extends DeviceLabel {
  backend: string;
  simd: boolean | null;
  threads: number | null;
  stack: {
    d: number;
    d_ff: number;
    layers: number;
    r: number;
    offsets: number[];
    heads: number;
    norm: 'post';
    dropout: 0;
  };
  tokens_per_batch: number;
  repeats: number;
  command: string;
  cpus: number;
  /** 1-minute load average when the run started and when it ended. */
  load_avg: { start: number; end: number };
  points: ScalingPoint[];
  /** Per model: the longest L that ran (null: none). */
  last_l_ran: Partial<Record<ModelKind, number | null>>;
  crossover: Crossover[];
  files: { table: string; json: string; png: string; svg: string };
}

/** The stack fields of the JSON. */
export function stackJson(s: ScalingStack): ScalingResult['stack'] {
  return {
    d: s.d,
    d_ff: s.dFF,
    layers: s.layers,
    r: s.r,
    offsets: [...s.offsets],
    heads: s.nHeads,
    norm: 'post',
    dropout: 0,
  };
}

function timed(points: readonly ScalingPoint[], model: ModelKind): Map<number, number> {
  return new Map(
    points
      .filter((p) => p.model === model && p.status === 'ok' && p.us_per_token !== null)
      .map((p) => [p.L, p.us_per_token as number]),
  );
}

/**
 * Crossover of Grassmann against one attention kind from time per token t(L): the smallest measured L_k with
 * t_G(L_j) < t_A(L_j) for every j ≥ k (over the L where both ran), and the L where log(t_G/t_A) crosses 0 on the
 * straight line between log L_{k−1} and log L_k.
 */
export function crossoverOf(points: readonly ScalingPoint[], attention: ModelKind): Crossover {
  const g = timed(points, 'grassmann');
  const a = timed(points, attention);
  const Ls = [...g.keys()].filter((L) => a.has(L)).sort((x, y) => x - y);
  const ratio = (L: number) => Math.log((g.get(L) as number) / (a.get(L) as number)); // < 0: Grassmann faster
  const none = (summary: string): Crossover => ({ attention, measured_l: null, interpolated_l: null, summary });
  if (Ls.length === 0) return none(`no L where both grassmann and ${attention} ran`);
  let k = Ls.length;
  while (k > 0 && ratio(Ls[k - 1] as number) < 0) k--;
  const longestG = Math.max(...g.keys());
  const longestA = Math.max(...a.keys());
  const beyond =
    longestG > longestA
      ? ` ${attention} ran up to L ${longestA.toLocaleString('en-US')}; grassmann ran up to L ${longestG.toLocaleString('en-US')}.`
      : '';
  if (k === Ls.length) {
    return none(
      `grassmann is not faster per token than ${attention} at any L where both ran (up to L ${(Ls[Ls.length - 1] as number).toLocaleString('en-US')}).${beyond}`,
    );
  }
  const measured = Ls[k] as number;
  if (k === 0) {
    return {
      attention,
      measured_l: measured,
      interpolated_l: null,
      summary: `grassmann is faster per token than ${attention} at every L measured (from L ${measured.toLocaleString('en-US')}).${beyond}`,
    };
  }
  const prev = Ls[k - 1] as number;
  const [r0, r1] = [ratio(prev), ratio(measured)]; // r0 ≥ 0 > r1
  const interpolated = Math.round(Math.exp(Math.log(prev) + (r0 / (r0 - r1)) * (Math.log(measured) - Math.log(prev))));
  return {
    attention,
    measured_l: measured,
    interpolated_l: interpolated,
    summary:
      `grassmann is faster per token than ${attention} from L ${measured.toLocaleString('en-US')} on ` +
      `(slower at L ${prev.toLocaleString('en-US')}; the log-log lines cross near L ≈ ${interpolated.toLocaleString('en-US')}).${beyond}`,
  };
}

/** Longest L that ran per model (null: none did). */
export function lastLRan(
  points: readonly ScalingPoint[],
  models: readonly ModelKind[],
): Partial<Record<ModelKind, number | null>> {
  const entries = models.map((m): [ModelKind, number | null] => {
    const L = Math.max(...timed(points, m).keys(), -Infinity);
    return [m, L === -Infinity ? null : L];
  });
  return Object.fromEntries(entries);
}

function cell(p: ScalingPoint | undefined): string | number | null {
  if (p === undefined) return null;
  if (p.status === 'ok') return Number((p.us_per_token as number).toPrecision(4));
  return p.status === 'oom' ? 'OOM' : p.status === 'oom-skipped' ? 'OOM (not run)' : 'error';
}

/**
 * The table: one row per L; µs per token of each model, attention ÷ Grassmann, peak RSS of each point, the highest load
 * average.
 */
export function scalingTable(
  points: readonly ScalingPoint[],
  models: readonly ModelKind[],
): { columns: string[]; rows: Array<Array<string | number | null>> } {
  const Ls = [...new Set(points.map((p) => p.L))].sort((x, y) => x - y);
  const at = (m: ModelKind, L: number) => points.find((p) => p.model === m && p.L === L);
  const attention = models.includes('grassmann') ? models.filter((m) => m !== 'grassmann') : [];
  const columns = [
    'L',
    'B',
    ...models.map((m) => `${m} µs/token`),
    ...attention.map((m) => `${m} ÷ grassmann`),
    ...models.map((m) => `${m} peak RSS MB`),
    'load 1m',
  ];
  const rows = Ls.map((L) => {
    const ratio = (m: ModelKind): number | null => {
      const [g, a] = [at('grassmann', L), at(m, L)];
      return g?.status === 'ok' && a?.status === 'ok'
        ? Number(((a.us_per_token as number) / (g.us_per_token as number)).toFixed(2))
        : null;
    };
    return [
      L,
      points.find((p) => p.L === L)?.B ?? null,
      ...models.map((m) => cell(at(m, L))),
      ...attention.map(ratio),
      ...models.map((m) => at(m, L)?.peak_rss_mb ?? null),
      Number(Math.max(...points.filter((p) => p.L === L).map((p) => p.load_1m)).toFixed(2)),
    ];
  });
  return { columns, rows };
}

/** The log-log chart: time per token against L, one line per model (points that did not run are left out). */
export function scalingChart(r: ScalingResult, models: readonly ModelKind[]): LineChart {
  return {
    title: `Forward+backward time per token vs sequence length (${r.backend}, d ${r.stack.d}, ${r.stack.layers} block${r.stack.layers === 1 ? '' : 's'})`,
    xLabel: 'sequence length L (log)',
    yLabel: 'µs per token (log)',
    logX: true,
    logY: true,
    series: models.map((m) => ({ name: m, points: [...timed(r.points, m)].sort((x, y) => x[0] - y[0]) })),
  };
}

/** scaling.md: setup, command, table, crossover, last L per model, plot. */
export function scalingMarkdown(r: ScalingResult, models: readonly ModelKind[]): string {
  const s = r.stack;
  const backend =
    r.backend === 'wasm'
      ? `wasm (${r.simd === true ? 'SIMD' : 'no SIMD'}, ${r.threads ?? 1} thread${r.threads === 1 ? '' : 's'})`
      : r.adapter === null
        ? r.backend
        : `${r.backend} on ${r.adapter}`;
  const oomNotRun = r.points.some((p) => p.status === 'oom-skipped');
  const lines = [
    '# Time per token against sequence length',
    '',
    `Command: \`${r.command}\``,
    '',
    ...(r.software_rendering ? [`**${SOFTWARE_RENDERING_NOTE}.**`, ''] : []),
    `Backend ${backend}; ${r.cpus} CPUs; 1-minute load average ${r.load_avg.start.toFixed(2)} at the start, ${r.load_avg.end.toFixed(2)} at the end` +
      // The benchmark's own thread pool accounts for up to `threads` of the load; more than that is other jobs.
      (Math.max(r.load_avg.start, r.load_avg.end) > Math.min(r.cpus, r.threads ?? 1) + 0.75
        ? ' (other jobs shared the machine: absolute times are inflated and noisy).'
        : '.'),
    '',
    `Each point times forward + backward (gradients of every weight and of the input) of a stack of ${s.layers} block${s.layers === 1 ? '' : 's'} ` +
      `(d ${s.d}, d_ff ${s.d_ff}, post-LN, dropout 0; Grassmann r ${s.r}, offsets ${s.offsets.join(',')} one per layer; attention ${s.heads} heads) ` +
      `on ${r.tokens_per_batch.toLocaleString('en-US')} tokens per batch (B = ${r.tokens_per_batch.toLocaleString('en-US')} / L), ` +
      `median of ${r.repeats} pass${r.repeats === 1 ? '' : 'es'} after one warm-up pass, each (model, L) in its own process. µs/token = median / (B·L).`,
    '',
    markdownTable(scalingTable(r.points, models)),
    '',
    ...r.crossover.map((c) => `- **Crossover vs ${c.attention}:** ${c.summary}`),
    ...models.map((m) => `- Longest L that ran for ${m}: ${r.last_l_ran[m]?.toLocaleString('en-US') ?? 'none'}.`),
    ...(r.points.some((p) => p.status === 'oom' || p.status === 'oom-skipped')
      ? [
          `- OOM: the process ran out of memory${r.backend === 'wasm' ? ' (the wasm heap is at most 4 GB)' : ''}; attention holds B·H scores of L × L, ` +
            `${r.tokens_per_batch.toLocaleString('en-US')}·H·L floats at fixed tokens per batch.` +
            (oomNotRun
              ? ' OOM (not run): a shorter L of the same model was already out of memory, so this one was recorded without running (--keep-after-oom runs it).'
              : ''),
        ]
      : []),
    ...(r.points.some((p) => p.status === 'error')
      ? [
          `- error: ${r.points
            .filter((p) => p.status === 'error')
            .map((p) => `${p.model} L ${p.L}: ${p.error ?? ''}`)
            .join('; ')}`,
        ]
      : []),
    '',
    '![time per token against L, log-log](scaling.png)',
    '',
    '(vector: [scaling.svg](scaling.svg))',
    '',
  ];
  return lines.join('\n');
}

/** Write scaling.json, scaling.md, scaling.svg and scaling.png into `dir` (each atomically). */
export async function writeScalingFiles(dir: string, r: ScalingResult, models: readonly ModelKind[]): Promise<void> {
  const { svg, png } = await renderLineChart(scalingChart(r, models));
  await writeFileAtomic(join(dir, 'scaling.svg'), new TextEncoder().encode(svg));
  await writeFileAtomic(join(dir, 'scaling.png'), png);
  await writeFileAtomic(join(dir, 'scaling.md'), new TextEncoder().encode(scalingMarkdown(r, models)));
  await writeJsonAtomic(join(dir, 'scaling.json'), r);
}

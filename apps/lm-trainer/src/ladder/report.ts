// The ladder's results: per level × model statistics over seeds, results.json, and report.md with two charts.
import { join } from 'node:path';
import { LAGGED_SUM_LAGS } from '@grassflow/datasets';
import { countParams, type ModelConfig } from '@grassflow/gpu-layers';
import { formatCell, markdownTable, writeJsonAtomic, writeReport, type ChartSeries } from '@grassflow/training';
import type { LadderConfig } from './options.js';
import type { RungResult } from './task.js';

/** Mean, sample standard deviation (0 for one value), min and max of some values. */
export interface Spread {
  mean: number;
  std: number;
  min: number;
  max: number;
  values: number[];
}

/** mean = Σx/n, std = sqrt(Σ(x − mean)² / (n − 1)) (0 when n = 1). */
export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spreadOf needs at least one value');
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const std = n < 2 ? 0 : Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  return { mean, std, min: Math.min(...values), max: Math.max(...values), values: [...values] };
}

/** One cell of the ladder: a level and a model over its seeds. */
export interface LadderCell {
  level: number;
  model: string;
  seeds: number[];
  accuracy: Spread;
  solved: Spread;
}

/** What a level needs: lagged-sum lags, recall pairs; and how much of it a Grassmann stack can see. */
export interface LevelInfo {
  level: number;
  rule: string;
  /** Share of held-out targets whose rule inputs lie within the Grassmann stack's reachable lags. */
  grassmannReachable: number | null;
}

/** results.json of a ladder run folder. */
export interface LadderResults {
  format: 'grassflow-lm-ladder-results';
  formatVersion: 1;
  /** false while the ladder is still running (or was stopped). */
  complete: boolean;
  chance: number;
  grassmann: { reach: number[]; receptiveField: number } | null;
  levels: LevelInfo[];
  cells: LadderCell[];
  runs: RungResult[];
}

/** Chance accuracy of a greedy guess: 1/V for lagged-sum (uniform residues), 1/⌊V/2⌋ for recall (uniform values). */
export function chanceAccuracy(cfg: Pick<LadderConfig, 'family' | 'vocabSize'>): number {
  return cfg.family === 'lagged-sum' ? 1 / cfg.vocabSize : 1 / Math.floor(cfg.vocabSize / 2);
}

/** The rule of a level in words. */
export function ruleOf(family: string, level: number): string {
  return family === 'lagged-sum' ? `lags ${LAGGED_SUM_LAGS.slice(0, level).join(',')}` : `${2 ** level} pairs`;
}

/** Cells (level × model, over seeds) of the finished runs, in ladder order. */
export function cellsOf(cfg: Pick<LadderConfig, 'levels' | 'models'>, runs: readonly RungResult[]): LadderCell[] {
  const cells: LadderCell[] = [];
  for (const level of cfg.levels) {
    for (const model of cfg.models) {
      const mine = runs.filter((r) => r.level === level && r.model === model);
      if (mine.length === 0) continue;
      cells.push({
        level,
        model,
        seeds: mine.map((r) => r.seed),
        accuracy: spreadOf(mine.map((r) => r.accuracy)),
        solved: spreadOf(mine.map((r) => r.solvedFraction)),
      });
    }
  }
  return cells;
}

/** Write results.json (atomically) from the runs so far. */
export async function writeLadderResults(dir: string, results: LadderResults): Promise<void> {
  await writeJsonAtomic(join(dir, 'results.json'), results);
}

const pm = (s: Spread | undefined, digits = 3): string | null =>
  s === undefined
    ? null
    : s.values.length < 2
      ? s.mean.toFixed(digits)
      : `${s.mean.toFixed(digits)} ± ${s.std.toFixed(digits)}`;

/** The level × model table of one metric ('accuracy' or 'solved'), with EA − DPA and Grassmann's reachable share. */
function metricTable(cfg: LadderConfig, r: LadderResults, metric: 'accuracy' | 'solved'): string {
  const hasMargin = cfg.models.includes('transformer-ea') && cfg.models.includes('transformer-dpa');
  const hasGrassmann = cfg.models.includes('grassmann');
  const columns = [
    'level',
    'rule',
    ...cfg.models,
    ...(hasMargin ? ['EA − DPA'] : []),
    ...(hasGrassmann && metric === 'accuracy' ? ['Grassmann can see'] : []),
  ];
  const rows = cfg.levels.map((level) => {
    const cell = (m: string): LadderCell | undefined => r.cells.find((c) => c.level === level && c.model === m);
    const margin = ((): string | null => {
      const ea = cell('transformer-ea')?.[metric];
      const dpa = cell('transformer-dpa')?.[metric];
      if (ea === undefined || dpa === undefined) return null;
      const d = ea.mean - dpa.mean;
      return `${d >= 0 ? '+' : ''}${d.toFixed(3)}`;
    })();
    const info = r.levels.find((l) => l.level === level);
    const reach = info?.grassmannReachable;
    return [
      level,
      info?.rule ?? '',
      ...cfg.models.map((m) => pm(cell(m)?.[metric])),
      ...(hasMargin ? [margin] : []),
      ...(hasGrassmann && metric === 'accuracy'
        ? [reach === null || reach === undefined ? null : `${(100 * reach).toFixed(0)}% of targets`]
        : []),
    ];
  });
  return markdownTable({ columns, rows });
}

/** Charts of the mean over seeds against level: one line per model (and chance, for accuracy). */
function levelSeries(cfg: LadderConfig, r: LadderResults, metric: 'accuracy' | 'solved'): ChartSeries[] {
  const series: ChartSeries[] = cfg.models.map((m) => ({
    name: m,
    points: r.cells.filter((c) => c.model === m).map((c) => [c.level, c[metric].mean] as const),
  }));
  if (metric === 'accuracy') series.push({ name: 'chance', points: cfg.levels.map((l) => [l, r.chance] as const) });
  return series;
}

/** Write report.md (+ accuracy.{svg,png}, solved.{svg,png}) in `dir`; returns its path. */
export async function writeLadderReport(
  dir: string,
  cfg: LadderConfig,
  r: LadderResults,
  meta: { command: string; backend: string; loadavg: string; seconds: number },
): Promise<string> {
  const mc = cfg.modelConfigs[cfg.models[0] as string];
  const g = r.grassmann;
  const famLine =
    cfg.family === 'lagged-sum'
      ? `Task lagged-sum: x_t = (1 + Σ_{i≤level} x_{t−a_i}) mod ${cfg.vocabSize}, lags a = ${LAGGED_SUM_LAGS.slice(0, Math.max(...cfg.levels)).join(', ')} (level ℓ uses the first ℓ); the first max(a) tokens of a sequence are free (uniform) and not scored.`
      : `Task recall: 2^level key→value pairs (keys 0..${Math.floor(cfg.vocabSize / 2) - 1}, values ${Math.floor(cfg.vocabSize / 2)}..${cfg.vocabSize - 1}), then queries; each query's value is scored.`;
  const intro = [
    `Command: \`${meta.command}\`; backend ${meta.backend}; ${meta.seconds.toFixed(0)} s in all; load average at the end ${meta.loadavg} (other jobs share the machine).`,
    famLine,
    `Every model: ${mc?.nLayers} layers, d ${mc?.dModel}, d_ff ${mc?.dFF}, seqLen = maxLen ${cfg.seqLen}, ${mc?.norm}-LN, no dropout; attention ${mc?.nHeads} heads; ` +
      `Grassmann r ${mc?.r}, offsets ${JSON.stringify(mc?.offsets)}${g === null ? '' : ` (receptive field ${g.receptiveField} positions back, reachable lags ${g.reach.join(',')})`}; ` +
      `parameters ${cfg.models.map((m) => `${m} ${formatCell(countParams(cfg.modelConfigs[m] as ModelConfig))}`).join(', ')}. ` +
      `Each run trains from scratch for ${cfg.steps} steps of ${cfg.batch} sequences (AdamW lr ${cfg.lr}, warmup ${cfg.warmup}, cosine to ${Number(cfg.minLr.toPrecision(3))}); ` +
      `seed${cfg.seeds.length === 1 ? '' : 's'} ${cfg.seeds.join(', ')} fix${cfg.seeds.length === 1 ? 'es' : ''} the initialisation and the training sequences, the same for every model.`,
    `Scores: greedy (argmax) next-token prediction on ${cfg.evalSeqs} held-out sequences (task seed ${cfg.evalSeed}, never a training seed), ` +
      `only at positions the rule determines. *accuracy* = correct / determined positions; *solved* = share of sequences with every determined position right. ` +
      `Cells: mean ± sample standard deviation over ${cfg.seeds.length} seed${cfg.seeds.length === 1 ? '' : 's'}; chance accuracy ${r.chance.toFixed(3)}. ` +
      '"Grassmann can see": the share of held-out targets whose rule inputs lie at lags the Grassmann stack reaches; elsewhere its expected accuracy is chance by construction.',
    ...(r.complete
      ? []
      : ['**Incomplete: the ladder was stopped before every run finished; the table holds the runs that did.**']),
    '### Accuracy on determined positions',
    metricTable(cfg, r, 'accuracy'),
    '### Sequences solved perfectly',
    metricTable(cfg, r, 'solved'),
  ];
  return writeReport(dir, {
    title: `Attention-geometry ladder: ${cfg.models.join(' vs ')} on ${cfg.family}`,
    intro,
    charts: [
      {
        file: 'accuracy',
        chart: {
          title: `Held-out accuracy against level (${cfg.family})`,
          xLabel: 'level',
          yLabel: 'accuracy (determined positions)',
          series: levelSeries(cfg, r, 'accuracy'),
        },
      },
      {
        file: 'solved',
        chart: {
          title: `Sequences solved perfectly (${cfg.family})`,
          xLabel: 'level',
          yLabel: 'fraction solved',
          series: levelSeries(cfg, r, 'solved'),
        },
      },
    ],
    notes: [
      'Every number per level × model × seed (with loss curves and timings) is in [results.json](results.json); the settings are in [config.json](config.json).',
    ],
  });
}

// Reports of a study on any trainer: runs grouped over seeds (mean ± sd, 95% t-interval) and per-seed paired
// differences between two kinds of run (e.g. Grassmann − Transformer); the pieces a trainer's own report builds on,
// and a plain report of named metrics with curves (writeSeedReport).
import {
  formatCell,
  markdownTable,
  writeReport,
  type ChartSeries,
  type ReportChart,
  type ReportTable,
} from '@grassflow/training';
import { canonicalJson, runKey } from './key.js';
import { pairedDifferences, spread, type Spread } from './stats.js';

/**
 * A run's resolved config as reports read it: `model.kind`, what a comparison pairs across (e.g. 'grassmann' and
 * 'transformer'), and `training.seed`, what a group is taken over. The rest is the trainer's.
 */
export interface StudyConfig {
  model: { kind: string };
  training: { seed: number };
}

/** A group: the runs whose resolved configs agree in every field but the seed (records in seed order). */
export interface RunGroup<C extends StudyConfig, R extends { config: C }> {
  key: string;
  /** The shared config, seed removed. */
  config: C;
  records: R[];
}

/** The config without its seed. */
export function withoutSeed<C extends StudyConfig>(c: C): C {
  const { seed: _s, ...training } = c.training;
  return { ...c, training: training as C['training'] };
}

/** Group records by their config without the seed (groups in the order of their first record; records by seed). */
export function groupBySeed<C extends StudyConfig, R extends { config: C }>(records: readonly R[]): RunGroup<C, R>[] {
  const groups = new Map<string, { config: C; records: R[] }>();
  for (const r of records) {
    const config = withoutSeed(r.config);
    const key = runKey(config);
    const g = groups.get(key) ?? { config, records: [] };
    g.records.push(r);
    groups.set(key, g);
  }
  return [...groups].map(([key, g]) => ({
    key,
    config: g.config,
    records: [...g.records].sort((a, b) => a.config.training.seed - b.config.training.seed),
  }));
}

/**
 * Model fields that only one of the two kinds has (present in some config of one kind and in none of the other),
 * e.g. r and offsets of Grassmann, attention and nHeads of the Transformer; with `kind` they are what a comparison
 * ignores.
 */
export function kindFields(configs: readonly StudyConfig[], kinds: readonly [string, string]): Set<string> {
  const by = (kind: string): Set<string> =>
    new Set(configs.filter((c) => c.model.kind === kind).flatMap((c) => Object.keys(c.model)));
  const a = by(kinds[0]);
  const b = by(kinds[1]);
  return new Set(['kind', ...[...a].filter((k) => !b.has(k)), ...[...b].filter((k) => !a.has(k))]);
}

/**
 * What a config shares with the configs of the other kind it is compared with: the config without its `kindColumn`
 * (the top field naming the kind) and without kind fields (model fields of one kind, and the training fields the
 * study lets each kind choose, its `pairAcross`).
 */
export function cellOf(c: StudyConfig, kindOnly: ReadonlySet<string>, kindColumn: string): string {
  const model = Object.fromEntries(Object.entries(c.model).filter(([k]) => !kindOnly.has(k)));
  const training = Object.fromEntries(Object.entries(c.training).filter(([k]) => !kindOnly.has(k)));
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => k !== kindColumn));
  return canonicalJson({ ...rest, model, training });
}

/** Every group of the first kind against every group of the second kind in the same cell (in group order). */
export function cellPairs<G extends { config: StudyConfig }>(
  groups: readonly G[],
  kinds: readonly [string, string],
  kindOnly: ReadonlySet<string>,
  kindColumn: string,
): Array<[G, G]> {
  const out: Array<[G, G]> = [];
  for (const a of groups.filter((x) => x.config.model.kind === kinds[0])) {
    for (const b of groups.filter((x) => x.config.model.kind === kinds[1])) {
      if (cellOf(a.config, kindOnly, kindColumn) === cellOf(b.config, kindOnly, kindColumn)) out.push([a, b]);
    }
  }
  return out;
}

/** Per-seed differences a − b of a number of each record, over the seeds both groups have. */
export function seedDifferences<R extends { config: StudyConfig }>(
  a: readonly R[],
  b: readonly R[],
  of: (r: R) => number | undefined,
): ReturnType<typeof pairedDifferences> {
  const bySeed = (rs: readonly R[]): Map<number, number> =>
    new Map(
      rs.flatMap((r) => {
        const v = of(r);
        return v === undefined ? [] : [[r.config.training.seed, v] as [number, number]];
      }),
    );
  return pairedDifferences(bySeed(a), bySeed(b));
}

/** The config's leaves as `path → JSON value`, paths without their first segment (dModel, lr, length.tokens). */
export function leaves(v: unknown, path: string[] = [], out: Map<string, string> = new Map()): Map<string, string> {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) leaves(x, [...path, k], out);
  } else {
    out.set(path.length > 1 ? path.slice(1).join('.') : path.join('.'), typeof v === 'string' ? v : JSON.stringify(v));
  }
  return out;
}

/**
 * Fields whose values differ between the configs (`kindColumn` first): the columns that tell the groups apart. A
 * field of one kind only (`kindOnly`, e.g. r) counts when it differs among the configs of that kind; a config of that
 * kind without it (an option left at its default) has the value '–'. `hidden` fields are never columns.
 */
export function varyingFields(
  configs: readonly StudyConfig[],
  kindOnly: ReadonlySet<string>,
  kindColumn: string,
  hidden: readonly string[] = [],
  skip: ReadonlySet<string> = new Set(),
): string[] {
  const all = configs.map((c) => ({ kind: c.model.kind, m: leaves(c) }));
  const names = [...new Set(all.flatMap(({ m }) => [...m.keys()]))].filter((k) => !skip.has(k));
  const varying = names.filter((k) => {
    const kinds = kindOnly.has(k) ? new Set(all.filter(({ m }) => m.has(k)).map(({ kind }) => kind)) : null;
    const values = all.filter(({ kind }) => kinds?.has(kind) ?? true).map(({ m }) => m.get(k) ?? '–');
    return new Set(values).size > 1;
  });
  return [kindColumn, ...varying.filter((k) => ![kindColumn, 'kind', ...hidden].includes(k))];
}

/** A group's name: its value of the first field and its values of the other fields (those it has). */
export function label(config: StudyConfig, fields: readonly string[]): string {
  const m = leaves(config);
  return fields.flatMap((f, i) => (i === 0 ? [m.get(f) ?? '–'] : m.has(f) ? [`${f} ${m.get(f)}`] : [])).join(', ');
}

/** A spread's 95% interval as a table cell ('–' without one). */
export function interval(s: Spread | null): string {
  return s === null || s.lo === null || s.hi === null ? '–' : `${formatCell(s.lo)} … ${formatCell(s.hi)}`;
}

/** The mean of curves ([x, y] points): at each x that every curve has (in the first curve's order). */
export function meanCurve(curves: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): Array<[number, number]> {
  const maps = curves.map((c) => new Map(c.map(([t, p]) => [t, p])));
  const xs = [...(maps[0] ?? new Map<number, number>()).keys()].filter((t) => maps.every((m) => m.has(t)));
  return xs.map((t) => [t, maps.reduce((s, m) => s + (m.get(t) as number), 0) / maps.length]);
}

/** A number of each run that a {@link writeSeedReport} aggregates (undefined: the run has none). */
export interface ReportMetric<R> {
  /** Column name, e.g. 'val accuracy'. */
  name: string;
  of: (r: R) => number | undefined;
}

/** What a {@link writeSeedReport} shows. */
export interface SeedReport<C extends StudyConfig, R extends { config: C }> {
  title: string;
  /** Paragraphs before the tables. */
  intro: readonly string[];
  records: readonly R[];
  /** The top config field that names the kind (its first column), e.g. 'head'. */
  kindColumn: string;
  /** The two kinds a paired comparison takes: first − second. */
  kinds: readonly [string, string];
  /** Training fields each kind may choose (the study's pairAcross). */
  pairAcross?: readonly string[];
  metrics: ReadonlyArray<ReportMetric<R>>;
  /** Config fields never shown as columns. */
  hidden?: readonly string[];
  /** A curve of each run ([x, y]) and its axes: one chart of the groups' mean curves per cell. */
  curve?: { of: (r: R) => ReadonlyArray<readonly [number, number]>; title: string; xLabel: string; yLabel: string };
}

/** A group of a seed report: its runs and the spread of each metric over them (null where a run lacks it). */
export interface MetricGroup<C extends StudyConfig, R extends { config: C }> extends RunGroup<C, R> {
  spreads: Array<Spread | null>;
}

/** A paired comparison of a seed report: the two groups, their common seeds and each metric's differences. */
export interface MetricPair<C extends StudyConfig, R extends { config: C }> {
  a: MetricGroup<C, R>;
  b: MetricGroup<C, R>;
  seeds: number[];
  diffs: Array<Spread | null>;
}

/** The groups and pairs of a seed report (what its tables show). */
export function seedComparison<C extends StudyConfig, R extends { config: C }>(
  r: SeedReport<C, R>,
): { groups: MetricGroup<C, R>[]; pairs: MetricPair<C, R>[]; fields: string[]; kindOnly: Set<string> } {
  const groups = groupBySeed<C, R>(r.records).map((g) => ({
    ...g,
    spreads: r.metrics.map((m) => {
      const xs = g.records.map(m.of);
      return xs.every((x): x is number => x !== undefined) ? spread(xs) : null;
    }),
  }));
  const configs = groups.map((g) => g.config);
  const kindOnly = new Set([...kindFields(configs, r.kinds), ...(r.pairAcross ?? [])]);
  const fields = varyingFields(configs, kindOnly, r.kindColumn, r.hidden);
  const pairs = cellPairs(groups, r.kinds, kindOnly, r.kindColumn).flatMap(([a, b]) => {
    const all = r.metrics.map((m) => seedDifferences(a.records, b.records, m.of));
    const seeds = all.reduce<number[]>((s, d) => (d.seeds.length > s.length ? d.seeds : s), []);
    return seeds.length === 0 ? [] : [{ a, b, seeds, diffs: all.map((d) => d.spread) }];
  });
  return { groups, pairs, fields, kindOnly };
}

/**
 * Write report.md (and a curves-N chart per cell with `curve`) into `dir`: a table of the groups (each metric's mean,
 * sd and 95% interval over seeds) and a table of the paired differences first kind − second kind by seed. Returns
 * the report's path.
 */
export async function writeSeedReport<C extends StudyConfig, R extends { config: C }>(
  dir: string,
  r: SeedReport<C, R>,
): Promise<string> {
  const { groups, pairs, fields, kindOnly } = seedComparison(r);
  const seedsOf = (g: RunGroup<C, R>): string => g.records.map((x) => x.config.training.seed).join(' ');
  const groupTable: ReportTable = {
    columns: [...fields, 'n', 'seeds', ...r.metrics.flatMap((m) => [m.name, 'sd', '95% interval'])],
    rows: groups.map((g) => {
      const m = leaves(g.config);
      return [
        ...fields.map((f) => m.get(f) ?? '–'),
        g.records.length,
        seedsOf(g),
        ...g.spreads.flatMap((s) => [s?.mean ?? null, s?.sd ?? null, interval(s)]),
      ];
    }),
  };
  const [ka, kb] = r.kinds;
  const pairText =
    pairs.length === 0
      ? `No ${ka} run has a ${kb} run with the same config and seed yet.`
      : markdownTable({
          columns: [ka, kb, 'pairs', ...r.metrics.flatMap((m) => [`Δ ${m.name}`, 'sd', '95% interval'])],
          rows: pairs.map((p) => [
            label(p.a.config, fields),
            label(p.b.config, fields),
            p.seeds.length,
            ...p.diffs.flatMap((s) => [s?.mean ?? null, s?.sd ?? null, interval(s)]),
          ]),
        });
  const charts: ReportChart[] = [];
  if (r.curve !== undefined) {
    const curve = r.curve;
    const cells = new Map<string, Array<RunGroup<C, R>>>();
    for (const g of groups) {
      const c = cellOf(g.config, kindOnly, r.kindColumn);
      cells.set(c, [...(cells.get(c) ?? []), g]);
    }
    for (const gs of cells.values()) {
      const series: ChartSeries[] = gs.map((g) => ({
        name: `${label(g.config, fields)} (n ${g.records.length})`,
        points: meanCurve(g.records.map(curve.of)),
      }));
      charts.push({
        file: `curves-${charts.length + 1}`,
        chart: { title: curve.title, xLabel: curve.xLabel, yLabel: curve.yLabel, series },
      });
    }
  }
  const pairAcross = r.pairAcross ?? [];
  return writeReport(dir, {
    title: r.title,
    intro: [
      ...r.intro,
      'sd with n − 1; 95% interval: mean ± t(0.975, n − 1)·sd/√n (none for one seed).',
      '## Groups',
      markdownTable(groupTable),
      `## ${ka} − ${kb}, paired by seed`,
      'Per seed (same initialisation seed and data order, every other shared field equal' +
        (pairAcross.length === 0 ? '' : ` but ${pairAcross.join(', ')}: each kind at its own value`) +
        `): ${ka} − ${kb}.`,
      pairText,
      ...(charts.length === 0 ? [] : ['## Curves']),
    ],
    charts,
  });
}

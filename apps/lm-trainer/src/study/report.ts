// `study report`: a ledger's runs grouped over seeds (mean ± sd, 95% t-interval), per-seed paired differences
// Grassmann − Transformer, and validation PPL against training tokens; report.md with SVG and PNG charts.
import { paramBreakdown } from '@grassflow/gpu-layers';
import { markdownTable, writeReport, type ChartSeries, type ReportChart } from '@grassflow/training';
import {
  cellOf as cellOfConfig,
  cellPairs,
  groupBySeed,
  interval,
  kindFields as kindFieldsOf,
  label as labelOf,
  leaves,
  meanCurve as meanOf,
  seedDifferences,
  spread,
  varyingFields as varyingOf,
  type ReportArgs,
  type Spread,
} from '@grassflow/studies';
import { baselineSeries, smoothingLines, standingLines, validationBaselines, xRange } from '../baselines/report.js';
import type { BaselineResult } from '../baselines/ngram.js';
import { referenceBaselines } from '../baselines/standing.js';
import { dataDirOrThrow } from '../shared/corpus.js';
import type { ResolvedRunConfig } from './key.js';
import type { LedgerRecord } from './ledger.js';
import { gapRows, measureName, TOKEN_BOOTSTRAP, type GapRow } from './uncertainty.js';

/** A group: the runs whose resolved configs agree in every field but the seed. */
export interface StudyGroup {
  key: string;
  /** The shared config, seed removed. */
  config: ResolvedRunConfig;
  records: LedgerRecord[];
  final: Spread;
  best: Spread;
  /** The final checkpoint on all of wiki.valid and wiki.test, where every run of the group was scored so. */
  heldOutValid: Spread | null;
  heldOutTest: Spread | null;
}

/** Grassmann group − Transformer group on the same seeds (every other shared field equal). */
export interface PairedComparison {
  grassmann: StudyGroup;
  transformer: StudyGroup;
  seeds: number[];
  final: Spread | null;
  best: Spread | null;
  /** Per-seed differences of test PPL (all of wiki.test, final checkpoint), where both groups were scored so. */
  test: Spread | null;
  /** Per-seed final-PPL differences, in seed order. */
  finalDiffs: number[];
}

const seedOf = (r: LedgerRecord): number => r.config.training.seed;

/** The two kinds a study compares, Grassmann − Transformer (model.kind), and the config field naming the kind. */
const KINDS = ['grassmann', 'transformer'] as const;
const KIND_COLUMN = 'modelKind';

/** Group records by their config without the seed (groups in the order of their first record; records by seed). */
export function groupRuns(records: readonly LedgerRecord[]): StudyGroup[] {
  return groupBySeed<ResolvedRunConfig, LedgerRecord>(records).map(({ key, config, records: rs }) => {
    const scored = rs.every((r) => r.heldOut !== undefined);
    return {
      key,
      config,
      records: rs,
      final: spread(rs.map((r) => r.finalValPpl)),
      best: spread(rs.map((r) => r.bestValPpl)),
      heldOutValid: scored
        ? spread(rs.map((r) => (r.heldOut as NonNullable<LedgerRecord['heldOut']>).valid.ppl))
        : null,
      heldOutTest: scored ? spread(rs.map((r) => (r.heldOut as NonNullable<LedgerRecord['heldOut']>).test.ppl)) : null,
    };
  });
}

/**
 * Model fields that only one kind has (present in some config of one kind and in none of the other), e.g. r and
 * offsets of Grassmann, attention and nHeads of the Transformer; with `kind` they are what a comparison ignores.
 */
function kindFields(groups: readonly StudyGroup[]): Set<string> {
  return kindFieldsOf(
    groups.map((g) => g.config),
    KINDS,
  );
}

/**
 * What a group shares with the groups of the other kind it is compared with: the config without kind fields (model
 * fields of one kind, and the training fields the study lets each kind choose, its `pairAcross`).
 */
function cellOf(g: StudyGroup, kindOnly: ReadonlySet<string>): string {
  return cellOfConfig(g.config, kindOnly, KIND_COLUMN);
}

/**
 * Every Grassmann group against every Transformer group of the same cell, paired by seed; training fields named in
 * `pairAcross` (e.g. lr: each kind at its own tuned value) may differ within a pair.
 */
export function pairedComparisons(
  groups: readonly StudyGroup[],
  pairAcross: readonly string[] = [],
): PairedComparison[] {
  const kindOnly = new Set([...kindFields(groups), ...pairAcross]);
  const out: PairedComparison[] = [];
  for (const [g, t] of cellPairs(groups, KINDS, kindOnly, KIND_COLUMN)) {
    const fin = seedDifferences(g.records, t.records, (r) => r.finalValPpl);
    if (fin.seeds.length === 0) continue;
    const best = seedDifferences(g.records, t.records, (r) => r.bestValPpl);
    const test = seedDifferences(g.records, t.records, (r) => r.heldOut?.test.ppl);
    out.push({
      grassmann: g,
      transformer: t,
      seeds: fin.seeds,
      final: fin.spread,
      best: best.spread,
      test: test.seeds.length === 0 ? null : test.spread,
      finalDiffs: fin.diffs,
    });
  }
  return out;
}

/**
 * Fields whose values differ between the groups (modelKind first): the columns that tell the groups apart. A field of
 * one kind only (`kindOnly`, e.g. r) counts when it differs among the groups of that kind; a group of that kind
 * without it (an option left at its default, e.g. dropoutAt) has the value '–'.
 */
function varyingFields(
  groups: readonly StudyGroup[],
  kindOnly: ReadonlySet<string>,
  skip: ReadonlySet<string> = new Set(),
): string[] {
  return varyingOf(
    groups.map((g) => g.config),
    kindOnly,
    KIND_COLUMN,
    ['attention'],
    skip,
  );
}

/** A group's name: its model kind and its values of the other varying fields (those it has). */
function label(g: StudyGroup, fields: readonly string[]): string {
  return labelOf(g.config, fields);
}

/** The mean validation-PPL curve of a group: at each token count that every run of the group evaluated. */
function meanCurve(g: StudyGroup): Array<[number, number]> {
  return meanOf(g.records.map((r) => r.curve));
}

/** The group's block parameters (what a size match compares; embeddings and head are shared or kind-free). */
function blockParams(g: StudyGroup): number | string {
  try {
    return paramBreakdown(g.config.model).blocks;
  } catch {
    return '–'; // a config this version cannot validate: the table still shows the rest
  }
}

/** exp of the mean over seeds of each window position's mean test NLL: [position 1 … L, PPL]. */
function pplByPosition(g: StudyGroup): Array<[number, number]> {
  const rows = g.records.map((r) => (r.heldOut as NonNullable<LedgerRecord['heldOut']>).test.nllByPosition);
  const L = Math.min(...rows.map((x) => x.length));
  return Array.from({ length: L }, (_, t) => [
    t + 1,
    Math.exp(rows.reduce((s, x) => s + (x[t] as number), 0) / rows.length),
  ]);
}

/** A config without its lr (and floor): what the groups of one kind at several lr share. */
const withoutLr = (c: ResolvedRunConfig): string =>
  JSON.stringify({ ...c, training: { ...c.training, lr: null, minLr: null } });

/** The groups of `x`'s config at the next lr below and above it in the ledger (those that exist). */
function lrNeighbours(
  x: StudyGroup,
  groups: readonly StudyGroup[],
): Array<{ side: '−' | '+'; lr: number; group: StudyGroup }> {
  const same = groups.filter((g) => g !== x && withoutLr(g.config) === withoutLr(x.config));
  const lr = x.config.training.lr;
  const below = same
    .filter((g) => g.config.training.lr < lr)
    .sort((p, q) => q.config.training.lr - p.config.training.lr)[0];
  const above = same
    .filter((g) => g.config.training.lr > lr)
    .sort((p, q) => p.config.training.lr - q.config.training.lr)[0];
  return [
    ...(below === undefined ? [] : [{ side: '−' as const, lr: below.config.training.lr, group: below }]),
    ...(above === undefined ? [] : [{ side: '+' as const, lr: above.config.training.lr, group: above }]),
  ];
}

const pct = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)}%`;
const range = (i: { lo: number; hi: number } | null): string => (i === null ? '–' : `${pct(i.lo)} … ${pct(i.hi)}`);

/** The uncertainty table of one pair: each measure's gap with its seed, token and tuning terms. */
function uncertaintyTable(rows: readonly GapRow[]): string {
  return markdownTable({
    columns: ['measure', 'gap', 'seeds 95%', 'tokens 95%', 'tuning (gap at the neighbouring lr)'],
    rows: rows.map((r) => [
      measureName(r.measure),
      pct(r.gap),
      range(r.seeds),
      range(r.tokens),
      r.tuning.length === 0 ? '–' : r.tuning.map((t) => `${t.which} ${t.lr}: ${pct(t.gap)}`).join('; '),
    ]),
  });
}

/** The uncertainty sections of the pairs scored on test: a heading and a table each. */
function uncertaintySections(
  pairs: readonly PairedComparison[],
  groups: readonly StudyGroup[],
  fields: readonly string[],
): string[] {
  const out: string[] = [];
  for (const p of pairs) {
    const neighbours = [
      ...lrNeighbours(p.grassmann, groups).map((n) => ({
        which: `Grassmann lr${n.side}`,
        lr: n.lr,
        a: n.group,
        b: p.transformer,
      })),
      ...lrNeighbours(p.transformer, groups).map((n) => ({
        which: `Transformer lr${n.side}`,
        lr: n.lr,
        a: p.grassmann,
        b: n.group,
      })),
    ];
    const rows = gapRows(p.grassmann, p.transformer, neighbours);
    if (rows.length === 0) continue;
    out.push(`### ${label(p.grassmann, fields)} − ${label(p.transformer, fields)} (${p.seeds.length} seeds)`);
    out.push(uncertaintyTable(rows));
  }
  return out;
}

/**
 * The n-gram baselines of a tokenizer scored on the first `evalTokens` of wiki.valid (null: all), as the runs
 * validate; undefined when they cannot be had (no data folder).
 */
export type BaselinesOf = (tokenizer: string, evalTokens: number | null) => Promise<BaselineResult[] | undefined>;

/**
 * Write report.md (+ curves-N.svg/png) of the ledger's records into `dir`; returns its path. With `baselines`, each
 * chart shows unigram, bigram and trigram as reference lines and the report says where each group stands.
 */
export async function writeStudyReport(
  dir: string,
  study: string,
  records: readonly LedgerRecord[],
  source: string,
  baselines?: BaselinesOf,
  pairAcross: readonly string[] = [],
): Promise<string> {
  const groups = groupRuns(records);
  const kindOnly = new Set([...kindFields(groups), ...pairAcross]);
  const fields = varyingFields(groups, kindOnly);
  const pairs = pairedComparisons(groups, pairAcross);
  const anyHeldOut = groups.some((g) => g.heldOutTest !== null);
  const groupTable = markdownTable({
    columns: [
      ...fields,
      'n',
      'seeds',
      'final val PPL',
      'sd',
      '95% interval',
      'best val PPL',
      'sd',
      '95% interval',
      ...(anyHeldOut ? ['valid PPL (all)', 'test PPL', 'sd', '95% interval'] : []),
      'block params',
    ],
    rows: groups.map((g) => {
      const m = leaves(g.config);
      return [
        ...fields.map((f) => m.get(f) ?? '–'),
        g.final.n,
        g.records.map(seedOf).join(' '),
        g.final.mean,
        g.final.sd,
        interval(g.final),
        g.best.mean,
        g.best.sd,
        interval(g.best),
        ...(anyHeldOut
          ? [
              g.heldOutValid?.mean ?? '–',
              g.heldOutTest?.mean ?? '–',
              g.heldOutTest?.sd ?? null,
              interval(g.heldOutTest),
            ]
          : []),
        blockParams(g),
      ];
    }),
  });
  const pairTable =
    pairs.length === 0
      ? 'No Grassmann run has a Transformer run with the same config and seed yet.'
      : markdownTable({
          columns: [
            'Grassmann',
            'Transformer',
            'pairs',
            'Δ final PPL',
            'sd',
            '95% interval',
            'Δ best PPL',
            'sd',
            '95% interval',
            'Δ/T',
            ...(anyHeldOut ? ['Δ test PPL', 'sd', '95% interval'] : []),
          ],
          rows: pairs.map((p) => [
            label(p.grassmann, fields),
            label(p.transformer, fields),
            p.seeds.length,
            p.final?.mean ?? null,
            p.final?.sd ?? null,
            interval(p.final),
            p.best?.mean ?? null,
            p.best?.sd ?? null,
            interval(p.best),
            p.final === null ? '–' : `${((100 * p.final.mean) / p.transformer.final.mean).toFixed(1)}%`,
            ...(anyHeldOut ? [p.test?.mean ?? '–', p.test?.sd ?? null, interval(p.test)] : []),
          ]),
        });
  // one chart per cell: the groups that differ only in kind fields (e.g. the three models of one size)
  const cells = new Map<string, StudyGroup[]>();
  for (const g of groups) cells.set(cellOf(g, kindOnly), [...(cells.get(cellOf(g, kindOnly)) ?? []), g]);
  const cellFields = varyingFields(groups, kindOnly, new Set(['modelKind', ...kindOnly])).slice(1);
  const refs = new Map<string, BaselineResult[] | undefined>(); // per tokenizer and validation slice
  const refsOf = async (g: StudyGroup): Promise<BaselineResult[] | undefined> => {
    const k = `${g.config.tokenizer} ${g.config.training.evalTokens}`;
    if (!refs.has(k)) refs.set(k, await baselines?.(g.config.tokenizer, g.config.training.evalTokens));
    return refs.get(k);
  };
  const charts: ReportChart[] = [];
  const standing: string[] = [];
  for (const gs of cells.values()) {
    const first = gs[0] as StudyGroup;
    // the title names the cell's fields; the legend only what tells the cell's groups apart
    const seriesFields = fields.filter((f) => !cellFields.includes(f));
    const series: ChartSeries[] = gs.map((g) => ({
      name: `${label(g, seriesFields)} (n ${g.final.n})`,
      points: meanCurve(g),
    }));
    const ref = await refsOf(first);
    const what =
      cellFields.length === 0 ? '' : `: ${cellFields.map((f) => `${f} ${leaves(first.config).get(f)}`).join(', ')}`;
    charts.push({
      file: `curves-${charts.length + 1}`,
      chart: {
        title: `Validation PPL${what}`,
        xLabel: 'training tokens',
        yLabel: 'PPL (mean over seeds)',
        series: ref === undefined ? series : [...series, ...baselineSeries(ref, ...xRange(series))],
        logY: true,
      },
    });
    if (ref !== undefined) {
      const models = gs.map((g) => ({ name: label(g, fields), ppl: g.final.mean }));
      standing.push(standingLines(models, ref, 'mean final validation PPL'));
    }
  }
  // test NLL by position in the window, one chart per cell, for the groups scored on held-out data
  for (const gs of cells.values()) {
    const scored = gs.filter((g) => g.heldOutTest !== null);
    if (scored.length === 0) continue;
    const first = scored[0] as StudyGroup;
    const seriesFields = fields.filter((f) => !cellFields.includes(f));
    const what =
      cellFields.length === 0 ? '' : `: ${cellFields.map((f) => `${f} ${leaves(first.config).get(f)}`).join(', ')}`;
    charts.push({
      file: `by-position-${charts.length + 1}`,
      chart: {
        title: `Test PPL by position in the window${what}`,
        xLabel: 'position of the target in its window (tokens of context + 1)',
        yLabel: 'PPL at that position (exp of the mean NLL over seeds)',
        series: scored.map((g) => ({ name: `${label(g, seriesFields)} (n ${g.final.n})`, points: pplByPosition(g) })),
        logY: true,
      },
    });
  }
  const refSets = [...refs.values()].filter((r): r is BaselineResult[] => r !== undefined);
  const anyRef = refSets[0];
  const refTable = markdownTable({
    columns: ['baseline', 'validation tokens', 'val PPL'],
    rows: refSets.flatMap((r) => referenceBaselines(r).map((b) => [b.name, b.tokens, b.ppl])),
  });
  const baselineNotes =
    anyRef === undefined
      ? ['No n-gram baselines: give --data-dir (or GRASSFLOW_DATA_DIR) to show them.']
      : [
          'Where each group stands against the n-gram baselines (fitted on wiki.train, scored on the validation tokens ' +
            'the runs validate on; reference lines in the charts):',
          refTable,
          standing.join('\n'),
          smoothingLines(anyRef),
        ];
  const codes = [...new Set(records.map((r) => r.code ?? 'unknown'))];
  const backends = [...new Set(records.map((r) => r.backend.name))];
  const machines = [...new Set(records.map((r) => `${r.machine.cpu} ×${r.machine.cpus}`))];
  return writeReport(dir, {
    title: `Study ${study}`,
    intro: [
      `${records.length} finished run${records.length === 1 ? '' : 's'} from \`${source}\` in ${groups.length} group${groups.length === 1 ? '' : 's'} ` +
        `(runs that agree in every resolved field but the seed). Code: ${codes.join(', ')}; backend ${backends.join(', ')}; ` +
        `machines: ${machines.join('; ')}.`,
      'Final val PPL: the evaluation at the last step; best: the lowest evaluation of the run. sd with n − 1; ' +
        '95% interval: mean ± t(0.975, n − 1)·sd/√n (none for one seed).' +
        (anyHeldOut
          ? ' valid PPL (all) and test PPL: the final checkpoint on every target of wiki.valid and wiki.test once ' +
            '(windows of the model length). Choices (lr, variants) are made on validation; test is the headline.'
          : ''),
      '## Groups',
      groupTable,
      '## Grassmann − Transformer, paired by seed',
      'Per seed (same initialisation seed and data order, every other shared field equal' +
        (pairAcross.length === 0 ? '' : ` but ${pairAcross.join(', ')}: each kind at its own value`) +
        '): Grassmann PPL − Transformer PPL; ' +
        'negative means Grassmann is better. Δ/T: mean final difference relative to the Transformer mean.',
      pairTable,
      ...(anyHeldOut
        ? [
            '## Test gaps: seeds, tokens and tuning',
            'Gap: 100·(exp(ΔNLL) − 1) of the seed means, Grassmann against the Transformer (negative: Grassmann ' +
              'better), on all test targets, on each band of window positions (non-overlapping windows) and in ' +
              'sliding windows of the model length with stride 64 (each target once, with at least L − 64 tokens of ' +
              'context but the first 64). seeds 95%: t-interval of the per-seed differences (n − 1 df). tokens 95%: ' +
              `paired bootstrap over the test windows (the same windows for both kinds; ${TOKEN_BOOTSTRAP.draws.toLocaleString('en-US')} ` +
              `draws, seed ${TOKEN_BOOTSTRAP.seed}, each kind averaged over the paired seeds; – where a record lacks ` +
              'its per-window sums). Tuning: the gap of the seed means when one kind moves to the next lr below (lr−) ' +
              'or above (lr+) in this ledger, where it has one; the gap changes by that much with one grid step.',
            ...uncertaintySections(pairs, groups, fields),
          ]
        : []),
      '## Against the n-gram baselines',
      ...baselineNotes,
      '## Validation PPL against training tokens',
    ],
    charts,
  });
}

/** `study report`: the n-gram baselines where a data folder is given (or GRASSFLOW_DATA_DIR), then the report. */
export async function writeLmStudyReport(a: ReportArgs<LedgerRecord>): Promise<string> {
  let dataDir: string | undefined;
  try {
    dataDir = dataDirOrThrow(a.dataDir);
  } catch (e) {
    process.stderr.write(`n-gram baselines left out of the report: ${(e as Error).message}\n`);
  }
  const baselines: BaselinesOf = async (tokenizer, evalTokens) =>
    dataDir === undefined
      ? undefined
      : validationBaselines({ tokenizer, dataDir, evalTokens: evalTokens ?? Number.MAX_SAFE_INTEGER });
  return writeStudyReport(a.dir, a.study, a.records, a.source, baselines, a.spec?.pairAcross ?? []);
}

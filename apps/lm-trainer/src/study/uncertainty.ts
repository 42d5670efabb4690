// The uncertainty of a test gap between two kinds, in three parts: seeds (the per-seed differences' t-interval),
// tokens (a paired bootstrap over the test windows both kinds were scored on) and tuning (the gap when either kind
// moves to its neighbouring lr in the ledger). Gaps are relative PPL, 100·(exp(ΔNLL) − 1) %: negative means the
// first kind (Grassmann) is better.
import { pairedBootstrap, seedDifferences, spread } from '@grassflow/studies';
import type { HeldOutScore, LedgerRecord } from './ledger.js';
import { bandColumn, decodeWindowNll, windowCounts, type WindowNll } from './windows.js';
import { positionBandEdges } from '@grassflow/training';

/** Bootstrap draws and seed of every token interval (fixed, so a report is reproducible). */
export const TOKEN_BOOTSTRAP = { draws: 10_000, seed: 1 } as const;

/** A gap in percent of the second kind's PPL. */
export const gapPercent = (dNll: number): number => 100 * Math.expm1(dNll);

/** What a row of the table measures: all test targets, a band of window positions, or sliding-window test PPL. */
export type Measure = { kind: 'all' } | { kind: 'band'; band: number; from: number; to: number } | { kind: 'sliding' };

/** The measures of a window length: all, each position band (1, 2–8, 9–16, … for L = 128), sliding. */
export function measuresOf(seqLen: number): Measure[] {
  const edges = positionBandEdges(seqLen);
  const bands = edges.map((to, band): Measure => ({
    kind: 'band',
    band,
    from: band === 0 ? 1 : (edges[band - 1] as number) + 1,
    to,
  }));
  return [{ kind: 'all' }, ...bands, { kind: 'sliding' }];
}

/** A measure's name in a table. */
export function measureName(m: Measure): string {
  if (m.kind === 'all') return 'test PPL';
  if (m.kind === 'sliding') return 'test PPL, sliding windows (stride 64)';
  return m.from === m.to ? `position ${m.from}` : `positions ${m.from}–${m.to}`;
}

/** Targets at each window position 1 … L of non-overlapping windows over `targets` targets. */
function positionCounts(targets: number, seqLen: number): number[] {
  return Array.from({ length: seqLen }, (_, t) => (targets > t ? Math.floor((targets - t - 1) / seqLen) + 1 : 0));
}

/** A run's mean test NLL under a measure (a band: from its NLL by position), undefined when the record lacks it. */
export function measureNll(h: HeldOutScore, m: Measure): number | undefined {
  if (m.kind === 'all') return h.nll;
  if (m.kind === 'sliding') return h.sliding?.nll;
  const counts = positionCounts(h.tokens, h.nllByPosition.length);
  let s = 0;
  let n = 0;
  for (let t = m.from - 1; t < Math.min(m.to, counts.length); t++) {
    s += (h.nllByPosition[t] as number) * (counts[t] as number);
    n += counts[t] as number;
  }
  return n > 0 ? s / n : undefined;
}

/** The windows a measure is bootstrapped over, and the band column in them (null: all bands summed). */
function windowsOf(h: HeldOutScore, m: Measure): { w: WindowNll; band: number | null } | undefined {
  if (m.kind === 'sliding') return h.sliding?.windows === undefined ? undefined : { w: h.sliding.windows, band: null };
  if (h.windows === undefined) return undefined;
  return { w: h.windows, band: m.kind === 'band' ? m.band : null };
}

/** One row: a measure's gap with its seed, token and tuning terms. */
export interface GapRow {
  measure: Measure;
  /** Gap of the seed means, %. */
  gap: number;
  /** 95% t-interval of the per-seed differences, % (null with fewer than 2 pairs). */
  seeds: { lo: number; hi: number } | null;
  /** 95% paired-bootstrap interval over the test windows, % (null when a record lacks its per-window sums). */
  tokens: { lo: number; hi: number } | null;
  /** The gap with either kind at its neighbouring lr in the ledger (those it has), %. */
  tuning: Array<{ which: string; lr: number; gap: number }>;
}

/** A group of runs of one config but the seed. */
export interface RunGroupLike {
  records: readonly LedgerRecord[];
}

const test = (r: LedgerRecord): HeldOutScore | undefined => r.heldOut?.test;

/** Mean over a group's records of a measure (undefined when one lacks it). */
function groupNll(g: RunGroupLike, m: Measure): number | undefined {
  const xs = g.records.map((r) => {
    const h = test(r);
    return h === undefined ? undefined : measureNll(h, m);
  });
  if (xs.length === 0 || xs.some((x) => x === undefined)) return undefined;
  return (xs as number[]).reduce((s, x) => s + x, 0) / xs.length;
}

/** The paired bootstrap of a measure over the windows of the paired seeds' records, % (null without windows). */
function tokenInterval(
  a: readonly LedgerRecord[],
  b: readonly LedgerRecord[],
  m: Measure,
): { lo: number; hi: number } | null {
  const sums = (rs: readonly LedgerRecord[]) => {
    const ws = rs.map((r) => {
      const h = test(r);
      return h === undefined ? undefined : windowsOf(h, m);
    });
    if (ws.some((w) => w === undefined)) return null;
    return (ws as Array<{ w: WindowNll; band: number | null }>).map(({ w, band }) => ({
      w,
      column: bandColumn(decodeWindowNll(w), w.bandEdges.length, band),
      band,
    }));
  };
  const sa = sums(a);
  const sb = sums(b);
  const first = sa?.[0];
  if (sa === null || sb === null || first === undefined || sb.length === 0) return null;
  const h = test(a[0] as LedgerRecord) as HeldOutScore;
  const targets = m.kind === 'sliding' ? (h.sliding?.tokens ?? h.tokens) : h.tokens;
  const counts = bandColumn(windowCounts(targets, first.w), first.w.bandEdges.length, first.band);
  const r = pairedBootstrap(
    { runs: sa.map((x) => x.column), counts },
    { runs: sb.map((x) => x.column), counts },
    TOKEN_BOOTSTRAP,
  );
  return { lo: gapPercent(r.lo), hi: gapPercent(r.hi) };
}

/**
 * The rows of a pair of groups (a − b, paired by seed) for each measure: the gap of the seed means, the seed
 * interval, the token-bootstrap interval over the paired seeds' test windows (the same windows for both kinds) and
 * the tuning term: the gap with `a` or `b` replaced by its group at the neighbouring lr below and above
 * (`neighbours`, where the ledger has them).
 */
export function gapRows(
  a: RunGroupLike,
  b: RunGroupLike,
  neighbours: ReadonlyArray<{ which: string; lr: number; a: RunGroupLike; b: RunGroupLike }>,
): GapRow[] {
  const h = a.records.map(test).find((x) => x !== undefined);
  if (h === undefined) return [];
  const rows: GapRow[] = [];
  for (const m of measuresOf(h.nllByPosition.length)) {
    const value = (r: LedgerRecord) => {
      const t = test(r);
      return t === undefined ? undefined : measureNll(t, m);
    };
    const d = seedDifferences(a.records, b.records, value);
    if (d.seeds.length === 0) continue;
    const s = spread(d.diffs);
    const paired = (rs: readonly LedgerRecord[]) => rs.filter((r) => d.seeds.includes(r.config.training.seed));
    const tuning = neighbours.flatMap((n) => {
      const ga = groupNll(n.a, m);
      const gb = groupNll(n.b, m);
      return ga === undefined || gb === undefined ? [] : [{ which: n.which, lr: n.lr, gap: gapPercent(ga - gb) }];
    });
    rows.push({
      measure: m,
      gap: gapPercent(s.mean),
      seeds: s.lo === null || s.hi === null ? null : { lo: gapPercent(s.lo), hi: gapPercent(s.hi) },
      tokens: tokenInterval(paired(a.records), paired(b.records), m),
      tuning,
    });
  }
  return rows;
}

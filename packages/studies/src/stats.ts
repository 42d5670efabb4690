// Small-sample statistics of a study: mean, sample sd (n − 1), Student-t 95% intervals, paired differences, and a
// paired bootstrap over evaluation units (e.g. test windows) for the token-sampling part of a difference.
import { TrainingRng } from '@grassflow/training';

/** t_{0.975, df} for df = 1 … 30 (two-sided 95%). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
/** Beyond 30: (df, t) knots, interpolated linearly in 1/df (∞ → 1.960). */
const T975_TAIL: ReadonlyArray<readonly [number, number]> = [
  [30, 2.042],
  [40, 2.021],
  [60, 2.0],
  [120, 1.98],
  [Infinity, 1.96],
];

/** The 0.975 quantile of Student's t with `df` ≥ 1 degrees of freedom (table; 1/df interpolation above 30). */
export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be an integer ≥ 1, got ${df}`);
  if (df <= 30) return T975[df - 1] as number;
  for (let i = 1; i < T975_TAIL.length; i++) {
    const [d1, t1] = T975_TAIL[i] as readonly [number, number];
    if (df <= d1) {
      const [d0, t0] = T975_TAIL[i - 1] as readonly [number, number];
      const w = (1 / d0 - 1 / df) / (1 / d0 - 1 / d1); // 1/∞ = 0
      return t0 + w * (t1 - t0);
    }
  }
  return 1.96;
}

/** n, mean, sample sd and the 95% t-interval mean ± t_{0.975,n−1}·sd/√n (sd and interval null when n < 2). */
export interface Spread {
  n: number;
  mean: number;
  sd: number | null;
  lo: number | null;
  hi: number | null;
}

/** The {@link Spread} of `xs` (n ≥ 1): sd = √(Σ(x − x̄)² / (n − 1)). */
export function spread(xs: readonly number[]): Spread {
  const n = xs.length;
  if (n === 0) throw new RangeError('spread of no values');
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { n, mean, sd: null, lo: null, hi: null };
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  const half = (tQuantile975(n - 1) * sd) / Math.sqrt(n);
  return { n, mean, sd, lo: mean - half, hi: mean + half };
}

/** Per-seed differences a − b over the seeds both have (sorted by seed), and their spread (null without a pair). */
export function pairedDifferences(
  a: ReadonlyMap<number, number>,
  b: ReadonlyMap<number, number>,
): { seeds: number[]; diffs: number[]; spread: Spread | null } {
  const seeds = [...a.keys()].filter((s) => b.has(s)).sort((x, y) => x - y);
  const diffs = seeds.map((s) => (a.get(s) as number) - (b.get(s) as number));
  return { seeds, diffs, spread: diffs.length === 0 ? null : spread(diffs) };
}

/** Units (e.g. test windows) scored by several runs: each run's per-unit sums and the units' counts (shared). */
export interface UnitSums {
  /** Per run, the sum over each unit (e.g. NLL of its targets, nats); every run holds one value per unit. */
  runs: ReadonlyArray<ArrayLike<number>>;
  /** Targets of each unit (the same for every run: the same units). */
  counts: ArrayLike<number>;
}

/** A difference and its percentile bootstrap interval. */
export interface BootstrapInterval {
  /** The difference on the units as they are. */
  estimate: number;
  /** 2.5% and 97.5% percentiles of the difference over the draws. */
  lo: number;
  hi: number;
  draws: number;
  seed: number;
  /** Units resampled (with replacement) in each draw. */
  units: number;
}

/** Options of {@link pairedBootstrap}: 10,000 draws and seed 1 unless given. */
export interface BootstrapOptions {
  draws?: number;
  seed?: number;
}

/** Per unit, the mean of the runs' sums (n runs averaged: the group's value of the unit). */
function unitMeans(g: UnitSums, units: number): Float64Array {
  if (g.runs.length === 0) throw new RangeError('a bootstrap group needs at least one run');
  const m = new Float64Array(units);
  for (const r of g.runs) {
    if (r.length !== units) throw new RangeError(`a run holds ${r.length} unit sums where the units are ${units}`);
    for (let u = 0; u < units; u++) m[u] = (m[u] as number) + (r[u] as number) / g.runs.length;
  }
  return m;
}

/**
 * Paired bootstrap of a − b over units: the statistic of a group is Σ_u mean-over-runs(sum_u) / Σ_u count_u (e.g.
 * the mean NLL per target, averaged over the group's seeds), and each draw resamples the units with replacement,
 * the same units for both groups (paired: what both runs saw). `b.counts` must equal `a.counts`. Returns the
 * difference and its 95% percentile interval; identical groups give 0 with a zero-width interval, and groups whose
 * every target differs by a constant c give exactly c (up to float rounding) on every draw.
 */
export function pairedBootstrap(a: UnitSums, b: UnitSums, opts: BootstrapOptions = {}): BootstrapInterval {
  const draws = opts.draws ?? 10_000;
  const seed = opts.seed ?? 1;
  const units = a.counts.length;
  if (units === 0) throw new RangeError('a bootstrap over no units');
  if (b.counts.length !== units || Array.from(a.counts).some((c, u) => c !== b.counts[u]))
    throw new RangeError('the two groups were scored on different units: a paired bootstrap needs the same ones');
  if (!Number.isInteger(draws) || draws < 1) throw new RangeError(`draws must be an integer ≥ 1, got ${draws}`);
  const ma = unitMeans(a, units);
  const mb = unitMeans(b, units);
  const diff = (pick: (i: number) => number): number => {
    let sa = 0;
    let sb = 0;
    let n = 0;
    for (let i = 0; i < units; i++) {
      const u = pick(i);
      sa += ma[u] as number;
      sb += mb[u] as number;
      n += a.counts[u] as number;
    }
    return n > 0 ? (sa - sb) / n : 0;
  };
  const estimate = diff((i) => i);
  const rng = new TrainingRng(seed);
  const out = new Float64Array(draws);
  for (let d = 0; d < draws; d++) out[d] = diff(() => rng.nextUint32() % units);
  out.sort();
  const at = (q: number): number => out[Math.min(draws - 1, Math.max(0, Math.round(q * (draws - 1))))] as number;
  return { estimate, lo: at(0.025), hi: at(0.975), draws, seed, units };
}

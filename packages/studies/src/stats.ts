// Small-sample statistics of a study: mean, sample sd (n − 1), Student-t 95% intervals, paired differences.

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

// Float64 views of a model's activations and weights for `inspect` (from @grassflow/gpu-layers, which the playground
// shares), and the summary statistics it reports.

export { blockInputs, blockWeights, inspectableModel, mixerInput, type Mat } from '@grassflow/gpu-layers/internals';

/** Distribution summary of a sample: count, mean, standard deviation (population), min, quantiles, max. */
export interface Summary {
  count: number;
  mean: number | null;
  std: number | null;
  min: number | null;
  p05: number | null;
  p25: number | null;
  p50: number | null;
  p75: number | null;
  p95: number | null;
  max: number | null;
}

/** Quantile q of sorted values by linear interpolation between order statistics (numpy's default). */
function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return (sorted[lo] as number) + (pos - lo) * ((sorted[hi] as number) - (sorted[lo] as number));
}

/** Summary of the finite values (nulls and non-finite values are left out); all fields null for none. */
export function summarize(values: Iterable<number | null>): Summary {
  const xs: number[] = [];
  for (const v of values) if (v !== null && Number.isFinite(v)) xs.push(v);
  if (xs.length === 0)
    return {
      count: 0,
      mean: null,
      std: null,
      min: null,
      p05: null,
      p25: null,
      p50: null,
      p75: null,
      p95: null,
      max: null,
    };
  const sorted = Float64Array.from(xs).sort();
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= xs.length;
  let v = 0;
  for (const x of xs) v += (x - mean) ** 2;
  return {
    count: xs.length,
    mean,
    std: Math.sqrt(v / xs.length),
    min: sorted[0] as number,
    p05: quantile(sorted, 0.05),
    p25: quantile(sorted, 0.25),
    p50: quantile(sorted, 0.5),
    p75: quantile(sorted, 0.75),
    p95: quantile(sorted, 0.95),
    max: sorted[sorted.length - 1] as number,
  };
}

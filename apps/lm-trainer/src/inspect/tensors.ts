// Float64 views of a model's activations and weights for `inspect` (from @grassflow/gpu-layers, which the playground
// shares), and the summary statistics it reports.
import * as tf from '@tensorflow/tfjs-core';
import type { Mat } from '@grassflow/gpu-layers';

export {
  blockInputs,
  blockWeights,
  blockWeight as weight,
  inspectableModel,
  layerNormRows,
  matOf,
  matRow as row,
  mixerInput,
  LN_EPS,
  type Mat,
} from '@grassflow/gpu-layers';

/** y = x · W + b for x [n, in], W [in, out] (internal layout), b [out]: [n, out]. */
export function affine(x: Mat, w: Mat, b: Mat): Mat {
  if (x.cols !== w.rows || b.cols !== w.cols)
    throw new RangeError(`affine: [${x.rows}, ${x.cols}] · [${w.rows}, ${w.cols}] + [${b.cols}]`);
  const out = new Float64Array(x.rows * w.cols);
  for (let i = 0; i < x.rows; i++) {
    const o = i * w.cols;
    for (let j = 0; j < w.cols; j++) out[o + j] = b.data[j] as number;
    for (let k = 0; k < x.cols; k++) {
      const xik = x.data[i * x.cols + k] as number;
      if (xik === 0) continue;
      const wk = k * w.cols;
      for (let j = 0; j < w.cols; j++) out[o + j] = (out[o + j] as number) + xik * (w.data[wk + j] as number);
    }
  }
  return { rows: x.rows, cols: w.cols, data: out };
}

/** Largest |a_i − b_i| between a float64 matrix and a tensor of the same size. */
export async function maxAbsDiff(a: Mat, b: tf.Tensor): Promise<number> {
  const v = await b.data();
  if (v.length !== a.data.length) throw new RangeError(`maxAbsDiff: ${a.data.length} vs ${v.length} values`);
  let m = 0;
  for (let i = 0; i < v.length; i++) m = Math.max(m, Math.abs((a.data[i] as number) - (v[i] as number)));
  return m;
}

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

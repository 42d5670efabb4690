// Index map between k-subsets of {0,…,n−1} and coordinates of k-vectors, in lexicographic order.
//
// Order (binding for the whole package and the neural layer): subsets are sorted tuples
// I = (i_1 < … < i_k), ordered lexicographically. For k = 2 this is
// (0,1), (0,2), …, (0,n−1), (1,2), …, (n−2,n−1).
import { GrassmannInputError, checkInteger, describe } from './errors.js';

/** Largest number of coordinates a k-vector may have here (2^24 doubles = 128 MiB). */
export const MAX_KVECTOR_DIMENSION = 1 << 24;

/** Binomial coefficient C(n, k) = n! / (k! (n−k)!), 0 when k < 0 or k > n. Exact below 2^53. */
export function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(k) || k < 0 || n < 0 || k > n) return 0;
  const m = Math.min(k, n - k);
  let c = 1;
  // c_i = c_{i−1} · (n − m + i) / i is an integer at every step.
  for (let i = 1; i <= m; i++) c = (c * (n - m + i)) / i;
  return Math.round(c);
}

/** Checks 0 ≤ k ≤ n and C(n, k) ≤ MAX_KVECTOR_DIMENSION; returns C(n, k). */
export function checkGrade(fn: string, n: number, k: number, kName = 'k'): number {
  checkInteger(fn, 'n', n, 1);
  if (!Number.isInteger(k) || k < 0 || k > n) {
    throw new GrassmannInputError(
      fn,
      kName,
      `an integer in [0, n] = [0, ${n}]`,
      describe(k),
      'A k-vector on R^n needs k ≤ n.',
    );
  }
  const dim = binomial(n, k);
  if (dim > MAX_KVECTOR_DIMENSION) {
    throw new GrassmannInputError(
      fn,
      kName,
      `a grade with C(n, k) ≤ ${MAX_KVECTOR_DIMENSION}`,
      `C(${n}, ${k}) = ${dim}`,
    );
  }
  return dim;
}

const tableCache = new Map<string, Int32Array>();

/**
 * All k-subsets of {0,…,n−1} in lexicographic order as one flat row-major table
 * [C(n,k), k]: row q holds the indices of basis element q. Cached; do not mutate.
 */
export function combinationTable(n: number, k: number): Int32Array {
  const key = `${n},${k}`;
  const hit = tableCache.get(key);
  if (hit !== undefined) return hit;
  const count = checkGrade('combinationTable', n, k);
  const table = new Int32Array(count * k);
  const c = new Int32Array(k);
  for (let t = 0; t < k; t++) c[t] = t;
  for (let q = 0; q < count; q++) {
    table.set(c, q * k);
    // Advance to the next subset: bump the rightmost index that can still move.
    let t = k - 1;
    while (t >= 0 && c[t]! === n - k + t) t--;
    if (t < 0) break;
    c[t]!++;
    for (let s = t + 1; s < k; s++) c[s] = c[s - 1]! + 1;
  }
  if (tableCache.size > 64) tableCache.clear();
  tableCache.set(key, table);
  return table;
}

/** All k-subsets of {0,…,n−1} in lexicographic order, e.g. combinations(4, 2)[3] = [1, 2]. */
export function combinations(n: number, k: number): number[][] {
  const table = combinationTable(n, k);
  const count = k === 0 ? 1 : table.length / k;
  const out: number[][] = [];
  for (let q = 0; q < count; q++) out.push(Array.from(table.subarray(q * k, q * k + k)));
  return out;
}

/**
 * Lexicographic rank of a sorted k-subset I = (c_0 < … < c_{k−1}) of {0,…,n−1}:
 * rank(I) = C(n,k) − 1 − Σ_t C(n−1−c_t, k−t).
 */
export function rankCombination(indices: ArrayLike<number>, n: number): number {
  const k = indices.length;
  checkGrade('rankCombination', n, k, 'indices.length');
  let sum = 0;
  let prev = -1;
  for (let t = 0; t < k; t++) {
    const c = indices[t]!;
    if (!Number.isInteger(c) || c <= prev || c >= n) {
      throw new GrassmannInputError(
        'rankCombination',
        'indices',
        `strictly increasing integers in [0, ${n - 1}]`,
        `${String(c)} at position ${t}`,
      );
    }
    sum += binomial(n - 1 - c, k - t);
    prev = c;
  }
  return binomial(n, k) - 1 - sum;
}

/** Inverse of rankCombination: the k-subset of {0,…,n−1} with the given lexicographic rank. */
export function unrankCombination(rank: number, n: number, k: number): number[] {
  const count = checkGrade('unrankCombination', n, k);
  checkInteger('unrankCombination', 'rank', rank, 0, count - 1);
  const out: number[] = [];
  let rest = rank;
  let x = 0;
  for (let t = 0; t < k; t++) {
    // Subsets that continue with x at position t: C(n−1−x, k−1−t).
    for (;;) {
      const block = binomial(n - 1 - x, k - 1 - t);
      if (rest < block) break;
      rest -= block;
      x++;
    }
    out.push(x);
    x++;
  }
  return out;
}

/** Position of the pair (i, j), i < j, among the C(n,2) Plücker coordinates: i(2n−i−1)/2 + (j−i−1). */
export function pairIndex(i: number, j: number, n: number): number {
  if (!Number.isInteger(i) || !Number.isInteger(j) || i < 0 || i >= j || j >= n) {
    throw new GrassmannInputError(
      'pairIndex',
      'i, j',
      `integers with 0 ≤ i < j < n = ${n}`,
      `i = ${String(i)}, j = ${String(j)}`,
    );
  }
  return (i * (2 * n - i - 1)) / 2 + (j - i - 1);
}

/** Inverse of pairIndex: the pair [i, j] at position q of the C(n,2) coordinates. */
export function pairFromIndex(q: number, n: number): [number, number] {
  checkInteger('pairFromIndex', 'n', n, 2);
  checkInteger('pairFromIndex', 'q', q, 0, (n * (n - 1)) / 2 - 1);
  let i = 0;
  let rowStart = 0;
  while (rowStart + (n - 1 - i) <= q) {
    rowStart += n - 1 - i;
    i++;
  }
  return [i, i + 1 + (q - rowStart)];
}

/**
 * The two index arrays of the C(r,2) pairs in order: pair q is (I[q], J[q]).
 * Used by the batch kernels.
 */
export function pairIndexArrays(r: number): { I: Int32Array; J: Int32Array } {
  const table = combinationTable(r, 2);
  const count = table.length / 2;
  const I = new Int32Array(count);
  const J = new Int32Array(count);
  for (let q = 0; q < count; q++) {
    I[q] = table[2 * q]!;
    J[q] = table[2 * q + 1]!;
  }
  return { I, J };
}

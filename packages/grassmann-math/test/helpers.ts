// Shared fast-check arbitraries and tolerance assertions for the identity tests.
import fc from 'fast-check';
import { expect } from 'vitest';

/** A finite coordinate in [-10, 10]. */
export const coord = fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true });

/** A vector of R^n. */
export const vec = (n: number): fc.Arbitrary<number[]> => fc.array(coord, { minLength: n, maxLength: n });

/** n in [lo, hi] together with `count` vectors of R^n. */
export const vectors = (count: number, lo = 2, hi = 7): fc.Arbitrary<{ n: number; vs: number[][] }> =>
  fc
    .integer({ min: lo, max: hi })
    .chain((n) => fc.array(vec(n), { minLength: count, maxLength: count }).map((vs) => ({ n, vs })));

/**
 * k linearly independent vectors of R^n: k distinct identity columns (random order) plus noise with
 * ‖noise‖_F ≤ 0.9, so the smallest singular value is ≥ 0.1.
 */
export const wellConditioned = (n: number, k: number): fc.Arbitrary<number[][]> => {
  const b = 0.9 / Math.sqrt(n * k);
  return fc
    .array(fc.array(fc.double({ min: -b, max: b, noNaN: true }), { minLength: n, maxLength: n }), {
      minLength: k,
      maxLength: k,
    })
    .chain((noise) =>
      fc
        .shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })
        .map((perm) => noise.map((e, j) => e.map((x, i) => x + (perm[j] === i ? 1 : 0)))),
    );
};

export function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

/**
 * |a_i − b_i| ≤ tol · (1 + scale) for all i, scale = max(|a|, |b|, inputScale); inputScale is the
 * magnitude of the terms that cancelled to give a and b (rounding errors are relative to it).
 */
export function expectAllClose(a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-10, inputScale = 0): void {
  expect(a.length).toBe(b.length);
  const scale = Math.max(maxAbs(a), maxAbs(b), inputScale);
  for (let i = 0; i < a.length; i++) {
    if (!(Math.abs(a[i]! - b[i]!) <= tol * (1 + scale))) {
      throw new Error(`index ${i}: ${a[i]} vs ${b[i]} (tol ${tol}, scale ${scale})`);
    }
  }
}

export const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

export const norm = (a: ArrayLike<number>): number => Math.sqrt(dot(a, a));

/** det of a small square matrix given as rows, by cofactor expansion (independent of the library). */
export function det(m: number[][]): number {
  const k = m.length;
  if (k === 1) return m[0]![0]!;
  let s = 0;
  for (let c = 0; c < k; c++) {
    const minor = m.slice(1).map((row) => row.filter((_, j) => j !== c));
    s += (c % 2 === 0 ? 1 : -1) * m[0]![c]! * det(minor);
  }
  return s;
}

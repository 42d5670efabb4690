import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  binomial,
  combinations,
  pairFromIndex,
  pairIndexArrays,
  pairIndex,
  rankCombination,
  unrankCombination,
} from '@grassflow/grassmann-math';

describe('index map of k-vector coordinates', () => {
  it('binomial: C(4,2)=6, C(32,2)=496 (the layer width), C(64,2)=2016, C(n,k)=0 for k>n', () => {
    expect(binomial(4, 2)).toBe(6);
    expect(binomial(32, 2)).toBe(496);
    expect(binomial(64, 2)).toBe(2016);
    expect(binomial(10, 0)).toBe(1);
    expect(binomial(52, 5)).toBe(2598960);
    expect(binomial(3, 4)).toBe(0);
  });

  it('combinations(4,2) = (0,1),(0,2),(0,3),(1,2),(1,3),(2,3): lexicographic, the Plücker feature order', () => {
    expect(combinations(4, 2)).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 2],
      [1, 3],
      [2, 3],
    ]);
    expect(combinations(3, 0)).toEqual([[]]);
  });

  it('combinations(n,k) has C(n,k) strictly increasing tuples in strictly increasing lexicographic order', () => {
    for (let n = 1; n <= 8; n++) {
      for (let k = 0; k <= n; k++) {
        const all = combinations(n, k);
        expect(all.length).toBe(binomial(n, k));
        for (let q = 1; q < all.length; q++) {
          const a = all[q - 1]!;
          const b = all[q]!;
          const t = a.findIndex((x, s) => x !== b[s]);
          expect(t).toBeGreaterThanOrEqual(0);
          expect(a[t]!).toBeLessThan(b[t]!);
        }
      }
    }
  });

  it('rankCombination(combinations(n,k)[q]) = q and unrankCombination(q) = combinations(n,k)[q]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))),
        ([n, k]) => {
          const all = combinations(n, k);
          all.forEach((c, q) => {
            expect(rankCombination(c, n)).toBe(q);
            expect(unrankCombination(q, n, k)).toEqual(c);
          });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pairIndex(i,j,n) = i(2n−i−1)/2 + (j−i−1) follows combinations(n,2); pairFromIndex is its inverse', () => {
    for (let n = 2; n <= 40; n += 3) {
      combinations(n, 2).forEach(([i, j], q) => {
        expect(pairIndex(i!, j!, n)).toBe(q);
        expect(pairFromIndex(q, n)).toEqual([i, j]);
      });
    }
  });

  it('pairIndexArrays(r): the C(r,2) = r(r−1)/2 pairs in pairIndex order, pair q = (I[q], J[q]) with I[q] < J[q]', () => {
    for (const r of [2, 3, 4, 7, 32]) {
      const { I, J } = pairIndexArrays(r);
      expect(I.length).toBe(binomial(r, 2));
      expect(I.length).toBe((r * (r - 1)) / 2);
      I.forEach((i, q) => {
        expect(i).toBeLessThan(J[q]!);
        expect(pairIndex(i, J[q]!, r)).toBe(q);
      });
    }
  });
});

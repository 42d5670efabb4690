import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  chordalDistance,
  geodesicDistance,
  orthonormalBasis,
  principalAngles,
  projectionDistance,
} from '@grassflow/grassmann-math';
import { dot, expectAllClose, wellConditioned } from './helpers.js';

/** n in [lo, hi] with `count` random k-dimensional subspaces of R^n (k ≤ n). */
const subspaces = (count: number, lo = 2, hi = 6) =>
  fc
    .integer({ min: lo, max: hi })
    .chain((n) => fc.integer({ min: 1, max: n }).map((k) => ({ n, k })))
    .chain(({ n, k }) =>
      fc.array(wellConditioned(n, k), { minLength: count, maxLength: count }).map((S) => ({ n, k, S })),
    );

/** Orthogonal projector Q Qᵀ onto span(A), as an n×n array. */
function projector(A: number[][]): number[][] {
  const Q = orthonormalBasis(A);
  const n = A[0]!.length;
  return [...Array(n).keys()].map((i) => [...Array(n).keys()].map((j) => Q.reduce((s, q) => s + q[i]! * q[j]!, 0)));
}

describe('principalAngles', () => {
  it('explicit: span(e0, e1) vs span(cos a e0 + sin a e2, cos b e1 + sin b e3) has angles {a, b}', () => {
    const a = 0.3;
    const b = 1.1;
    const th = principalAngles(
      [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
      ],
      [
        [Math.cos(a), 0, Math.sin(a), 0],
        [0, Math.cos(b), 0, Math.sin(b)],
      ],
    );
    expectAllClose(th, [a, b], 1e-14);
    // Same subspaces as a row-major 4×2 matrix {data, rows, cols}: columns are the vectors.
    const thM = principalAngles({ data: [1, 0, 0, 1, 0, 0, 0, 0], rows: 4, cols: 2 }, [
      [Math.cos(a), 0, Math.sin(a), 0],
      [0, Math.cos(b), 0, Math.sin(b)],
    ]);
    expectAllClose(thM, [a, b], 1e-14);
  });

  it('θ_i ∈ [0, π/2], ascending, and symmetric: θ(A, B) = θ(B, A)', () => {
    fc.assert(
      fc.property(subspaces(2), ({ S: [A, B] }) => {
        const th = principalAngles(A!, B!);
        for (let i = 0; i < th.length; i++) {
          expect(th[i]!).toBeGreaterThanOrEqual(0);
          expect(th[i]!).toBeLessThanOrEqual(Math.PI / 2);
          if (i > 0) expect(th[i]!).toBeGreaterThanOrEqual(th[i - 1]!);
        }
        expectAllClose(th, principalAngles(B!, A!), 1e-9);
      }),
    );
  });

  it('basis independence: θ(span A, B) does not change when A is replaced by an orthonormal basis of it', () => {
    fc.assert(
      fc.property(subspaces(2), ({ S: [A, B] }) => {
        const Q = orthonormalBasis(A!).map((q) => Array.from(q));
        expectAllClose(principalAngles(Q, B!), principalAngles(A!, B!), 1e-9);
      }),
    );
  });

  it('small angles keep relative accuracy: θ = 1e-9 is returned to 1e-6 relative (arccos alone would give 0 or 1.5e-8)', () => {
    const t = 1e-9;
    const th = principalAngles([[1, 0, 0]], [[Math.cos(t), Math.sin(t), 0]]);
    expect(Math.abs(th[0]! - t) / t).toBeLessThan(1e-6);
  });

  it('different dimensions: line ⊂ plane gives θ = [0]; line ⟂ plane gives [π/2]', () => {
    expectAllClose(
      principalAngles(
        [[1, 1, 0]],
        [
          [1, 0, 0],
          [0, 1, 0],
        ],
      ),
      [0],
      1e-15,
    );
    expectAllClose(
      principalAngles(
        [[0, 0, 2]],
        [
          [1, 0, 0],
          [0, 1, 0],
        ],
      ),
      [Math.PI / 2],
      1e-15,
    );
  });
});

describe('principalAngles: regressions found by fast-check', () => {
  it('entries of 1e-300…5e-324 next to 1 (subnormals): θ(span(e2, (1, .367, 0)), span(e2, e0)) = [0, atan .367]', () => {
    const A = [
      [1, 0.36742346141747634, 6.4e-323],
      [7e-323, 9e-323, 1],
    ];
    const B = [
      [-4.588004167025245e-62, 8.4e-323, 1],
      [0.999999999999997, -1.1723303670916141e-57, 5e-324],
    ];
    const th = principalAngles(A, B);
    expect(th[0]!).toBeLessThan(1e-15);
    expect(Math.abs(th[1]! - Math.atan(0.36742346141747634))).toBeLessThan(1e-14);
  });

  it('θ(A, A) = 0 for a basis of R^6 equal to a permutation matrix up to entries of 1e-9…1e-323', () => {
    const A = [
      [
        -1.3769975957880247e-164, 1, 5.276348090092113e-215, -2.2945257916984412e-28, 5.791790680693094e-250,
        1.0691472209048184e-290,
      ],
      [
        0.9999993428768859, 2.637780501548477e-92, -4.648081779205733e-23, -1.7146957871980749e-127,
        -1.1141541872275039e-233, -1.0539273387038461e-222,
      ],
      [
        -1.0621734817299619e-156, -1.2186552666409425e-238, 3.6663070566666846e-51, 1, -8.655066028560164e-166,
        1.1616672388123073e-9,
      ],
      [9.227441579585016e-205, 6.663966148326628e-272, 1, 2.894116611527248e-63, 8e-323, 1.1192731134757393e-306],
      [-1.9248471729493692e-217, 9.52543569522285e-211, 1.4095557203748603e-241, -3.792781034580048e-229, 2.5e-323, 1],
      [
        -5.656793623319904e-210, 7.999883558511744e-260, 1.4948123091512925e-288, -1.088157285083339e-57, 1,
        -6.4194195535861375e-264,
      ],
    ];
    expect(Math.max(...principalAngles(A, A))).toBeLessThan(1e-7);
    expect(geodesicDistance(A, A)).toBeLessThan(1e-7);
  });
});

describe('Grassmann distances', () => {
  it('identity: d(A, A) = 0 for geodesic, chordal and projection distances (also for another basis of A)', () => {
    fc.assert(
      fc.property(subspaces(1), ({ S: [A] }) => {
        const Q = orthonormalBasis(A!).map((q) => Array.from(q));
        for (const d of [geodesicDistance, chordalDistance, projectionDistance]) {
          expect(d(A!, A!)).toBeLessThan(1e-7);
          expect(d(A!, Q)).toBeLessThan(1e-7);
        }
      }),
    );
  });

  it('symmetry: d(A, B) = d(B, A); geodesic(span e0, span e1) = π/2', () => {
    fc.assert(
      fc.property(subspaces(2), ({ S: [A, B] }) => {
        for (const d of [geodesicDistance, chordalDistance, projectionDistance]) {
          expect(Math.abs(d(A!, B!) - d(B!, A!))).toBeLessThan(1e-9);
        }
      }),
    );
    expect(geodesicDistance([[1, 0, 0]], [[0, 1, 0]])).toBeCloseTo(Math.PI / 2, 14);
  });

  it('triangle inequality: d(A, C) ≤ d(A, B) + d(B, C) (geodesic; also chordal and projection, both metrics)', () => {
    fc.assert(
      fc.property(subspaces(3), ({ S: [A, B, C] }) => {
        for (const d of [geodesicDistance, chordalDistance, projectionDistance]) {
          expect(d(A!, C!)).toBeLessThanOrEqual(d(A!, B!) + d(B!, C!) + 1e-9);
        }
      }),
    );
  });

  it('formulas: geodesic = sqrt Σθ², chordal = sqrt Σ sin²θ = ‖P_A − P_B‖_F / √2, projection = max sin θ', () => {
    fc.assert(
      fc.property(subspaces(2), ({ S: [A, B] }) => {
        const th = Array.from(principalAngles(A!, B!));
        expect(Math.abs(geodesicDistance(A!, B!) - Math.sqrt(dot(th, th)))).toBeLessThan(1e-12);
        const PA = projector(A!);
        const PB = projector(B!);
        const fro = Math.sqrt(
          PA.flatMap((row, i) => row.map((x, j) => (x - PB[i]![j]!) ** 2)).reduce((s, x) => s + x, 0),
        );
        expect(Math.abs(chordalDistance(A!, B!) - fro / Math.SQRT2)).toBeLessThan(1e-9);
        expect(Math.abs(projectionDistance(A!, B!) - Math.max(...th.map(Math.sin)))).toBeLessThan(1e-12);
      }),
    );
  });

  it('geodesic distance ≤ (π/2)·sqrt(k) and chordal ≤ geodesic (sin θ ≤ θ)', () => {
    fc.assert(
      fc.property(subspaces(2), ({ k, S: [A, B] }) => {
        const g = geodesicDistance(A!, B!);
        expect(g).toBeLessThanOrEqual((Math.PI / 2) * Math.sqrt(k) + 1e-12);
        expect(chordalDistance(A!, B!)).toBeLessThanOrEqual(g + 1e-12);
      }),
    );
  });
});

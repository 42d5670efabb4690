import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  basisKVector,
  innerProduct,
  kvectorNorm,
  normalizePlucker,
  planeFromPlucker,
  plucker,
  pluckerK,
  pluckerRelationsResidual,
  principalAngles,
  smoothNormalizePlucker,
  wedge,
  wedgeAll,
} from '@grassflow/grassmann-math';
import { coord, det, dot, expectAllClose, maxAbs, norm, vec, vectors, wellConditioned } from './helpers.js';

const add = (a: ArrayLike<number>, b: ArrayLike<number>): number[] => Array.from(a, (x, i) => x + b[i]!);
const scale = (a: ArrayLike<number>, s: number): number[] => Array.from(a, (x) => x * s);

describe('plucker(u, v): p_ij = u_i v_j − u_j v_i', () => {
  it('explicit: plucker([1,2,3,4], [0.5,−1,2,0]) in order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)', () => {
    expect(Array.from(plucker([1, 2, 3, 4], [0.5, -1, 2, 0]))).toEqual([-2, 0.5, -2, 7, 4, -8]);
    expect(plucker(new Float32Array([1, 0, 0]), new Float32Array([0, 1, 0])).length).toBe(3);
  });

  it('antisymmetry: plucker(u, v) = −plucker(v, u)', () => {
    fc.assert(
      fc.property(vectors(2), ({ vs: [u, v] }) => expectAllClose(plucker(u!, v!), scale(plucker(v!, u!), -1), 0)),
    );
  });

  it('bilinearity: plucker(a u + b w, v) = a plucker(u, v) + b plucker(w, v) (and in the second slot)', () => {
    fc.assert(
      fc.property(vectors(3), coord, coord, ({ vs: [u, w, v] }, a, b) => {
        const mix = add(scale(u!, a), scale(w!, b));
        const terms = (Math.abs(a) * maxAbs(u!) + Math.abs(b) * maxAbs(w!)) * maxAbs(v!);
        const lhs1 = plucker(mix, v!);
        const rhs1 = add(scale(plucker(u!, v!), a), scale(plucker(w!, v!), b));
        expectAllClose(lhs1, rhs1, 1e-12, terms);
        const lhs2 = plucker(v!, mix);
        const rhs2 = add(scale(plucker(v!, u!), a), scale(plucker(v!, w!), b));
        expectAllClose(lhs2, rhs2, 1e-12, terms);
      }),
    );
  });

  it('GL(2) covariance: plucker(a u + b v, c u + d v) = (ad − bc) · plucker(u, v)', () => {
    fc.assert(
      fc.property(vectors(2), coord, coord, coord, coord, ({ vs: [u, v] }, a, b, c, d) => {
        const lhs = plucker(add(scale(u!, a), scale(v!, b)), add(scale(u!, c), scale(v!, d)));
        const terms = (Math.abs(a) + Math.abs(b)) * (Math.abs(c) + Math.abs(d)) * Math.max(maxAbs(u!), maxAbs(v!)) ** 2;
        expectAllClose(lhs, scale(plucker(u!, v!), a * d - b * c), 1e-12, terms);
      }),
    );
  });
});

describe('pluckerK: k×k minors = v_1 ∧ … ∧ v_k', () => {
  it('pluckerK([u, v]) = plucker(u, v)', () => {
    fc.assert(fc.property(vectors(2), ({ vs }) => expectAllClose(pluckerK(vs), plucker(vs[0]!, vs[1]!), 1e-12)));
  });

  it('pluckerK(v_1, …, v_k) = wedge(v_1, …, v_k) for k = 1…n (row-major matrix input too)', () => {
    const arb = fc
      .integer({ min: 1, max: 6 })
      .chain((n) => fc.integer({ min: 1, max: n }).chain((k) => vectors(k, n, n)));
    fc.assert(
      fc.property(arb, ({ n, vs }) => {
        const k = vs.length;
        const w = wedgeAll(vs);
        expectAllClose(pluckerK(vs), w.coeffs, 1e-11);
        const data = new Float64Array(n * k);
        vs.forEach((col, j) => col.forEach((x, i) => (data[i * k + j] = x)));
        expectAllClose(pluckerK({ data, rows: n, cols: k }), w.coeffs, 1e-11);
      }),
    );
  });

  it('change of basis: pluckerK(V G) = det(G) · pluckerK(V) for 3×3 G', () => {
    fc.assert(
      fc.property(
        vectors(3, 3, 6),
        fc.array(fc.array(coord, { minLength: 3, maxLength: 3 }), { minLength: 3, maxLength: 3 }),
        ({ vs }, G) => {
          // column j of V G is Σ_s G[s][j] v_s
          const VG = [0, 1, 2].map((j) =>
            vs.reduce((acc, v, s) => add(acc, scale(v, G[s]![j]!)), new Array<number>(vs[0]!.length).fill(0)),
          );
          const lhs = pluckerK(VG);
          const rhs = scale(pluckerK(vs), det(G));
          const terms = (maxAbs(G.flat()) * Math.max(...vs.map(maxAbs))) ** 3 * 36;
          expectAllClose(lhs, rhs, 1e-12, terms);
        },
      ),
    );
  });
});

describe('Plücker relations', () => {
  it('residual ≈ 0 for decomposable p = u ∧ v (a point of Gr(2, n)), any n ≥ 2', () => {
    fc.assert(
      fc.property(vectors(2, 2, 9), ({ n, vs: [u, v] }) => {
        const p = plucker(u!, v!);
        fc.pre(norm(p) > 1e-6 * (1 + norm(u!) * norm(v!)));
        expect(pluckerRelationsResidual(p, n)).toBeLessThan(1e-12);
      }),
    );
  });

  it('residual(e0∧e1 + t e2∧e3) = |t| / (1 + t²) ≠ 0 (not decomposable), in every R^n, n ≥ 4', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 9 }), fc.double({ min: 0.01, max: 100, noNaN: true }), (n, t) => {
        const e01 = basisKVector(n, [0, 1]).coeffs;
        const e23 = basisKVector(n, [2, 3]).coeffs;
        const q = add(e01, scale(e23, t));
        const r = pluckerRelationsResidual(q, n);
        expect(Math.abs(r - t / (1 + t * t))).toBeLessThan(1e-14);
      }),
    );
    expect(pluckerRelationsResidual([1, 0, 0, 0, 0, 1], 4)).toBeCloseTo(0.5, 15);
  });

  it('in R^4: residual(u∧v + x∧y) = |det[u v x y]| / ‖u∧v + x∧y‖² (the single relation is the Pfaffian)', () => {
    fc.assert(
      fc.property(vectors(4, 4, 4), ({ vs: [u, v, x, y] }) => {
        const p = add(plucker(u!, v!), plucker(x!, y!));
        const nn = dot(p, p);
        fc.pre(nn > 1e-6);
        const M = [0, 1, 2, 3].map((i) => [u![i]!, v![i]!, x![i]!, y![i]!]);
        const expected = Math.abs(det(M)) / nn;
        const scaleDet = norm(u!) * norm(v!) * norm(x!) * norm(y!);
        expect(Math.abs(pluckerRelationsResidual(p, 4) - expected)).toBeLessThanOrEqual(1e-12 * (1 + scaleDet / nn));
      }),
    );
  });

  it('residual · ‖p‖² = ‖p ∧ p‖ / 2 (relations are the coefficients of ½ p∧p); residual(λp) = residual(p)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 7 }).chain((n) => fc.tuple(fc.constant(n), vec((n * (n - 1)) / 2))),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        ([n, p], lam) => {
          const nn = dot(p, p);
          fc.pre(nn > 1e-6);
          const pp = wedge({ n, k: 2, coeffs: Float64Array.from(p) }, { n, k: 2, coeffs: Float64Array.from(p) });
          const r = pluckerRelationsResidual(p, n);
          expect(Math.abs(r * nn - kvectorNorm(pp) / 2)).toBeLessThanOrEqual(1e-12 * (1 + nn));
          expect(Math.abs(pluckerRelationsResidual(scale(p, -lam), n) - r)).toBeLessThanOrEqual(1e-12);
        },
      ),
    );
  });
});

describe('normalisation', () => {
  it('normalizePlucker: ‖p̂‖ = 1, largest |coordinate| positive, p̂(λp) = p̂(p) for λ ≠ 0', () => {
    fc.assert(
      fc.property(
        vectors(2, 2, 7),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.boolean(),
        ({ vs: [u, v] }, lam, neg) => {
          const p = plucker(u!, v!);
          fc.pre(maxAbs(p) > 1e-9);
          const h = normalizePlucker(p);
          expect(Math.abs(norm(h) - 1)).toBeLessThan(1e-14);
          const mags = Array.from(p, Math.abs).sort((a, b) => b - a);
          const big = p.findIndex((x) => Math.abs(x) === mags[0]);
          expect(h[big]!).toBeGreaterThan(0);
          // The sign convention is discontinuous at ties of the largest magnitude; skip near-ties.
          fc.pre(mags.length === 1 || mags[1]! < mags[0]! * (1 - 1e-9));
          expectAllClose(normalizePlucker(scale(p, neg ? -lam : lam)), h, 1e-14);
        },
      ),
    );
  });

  it('smoothNormalizePlucker(p) = p / sqrt(‖p‖² + ε²) with ε = 1e-6 (the layer), 0 ↦ 0', () => {
    const p = [3e-7, 4e-7, 0];
    expectAllClose(smoothNormalizePlucker(p), scale(p, 1 / Math.sqrt(25e-14 + 1e-12)), 1e-15);
    expect(Array.from(smoothNormalizePlucker([0, 0, 0]))).toEqual([0, 0, 0]);
    expectAllClose(smoothNormalizePlucker([3, 4, 0], 0), [0.6, 0.8, 0], 1e-15);
  });
});

describe('planeFromPlucker: basis recovery', () => {
  it('round trip: u, v orthonormal, scale · plucker(u, v) = p, scale = ‖p‖, span(u, v) = span(x, y)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }).chain((n) => wellConditioned(n, 2).map((vs) => ({ n, vs }))),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        ({ n, vs: [x, y] }, s) => {
          const p = scale(plucker(x!, y!), s);
          const { u, v, scale: sc } = planeFromPlucker(p, n);
          expect(Math.abs(dot(u, u) - 1)).toBeLessThan(1e-12);
          expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-12);
          expect(Math.abs(dot(u, v))).toBeLessThan(1e-12);
          expect(Math.abs(sc - norm(p))).toBeLessThan(1e-10 * norm(p));
          expectAllClose(scale(plucker(u, v), sc), p, 1e-10);
          expect(maxAbs(principalAngles([u, v], [x!, y!]))).toBeLessThan(1e-7);
        },
      ),
    );
  });
});

describe('Plücker embedding and principal angles', () => {
  it('|⟨p̂(A), p̂(B)⟩| = Π cos θ_i for 2-planes A, B ⊂ R^n', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }).chain((n) => fc.tuple(wellConditioned(n, 2), wellConditioned(n, 2))),
        ([A, B]) => {
          const lhs = Math.abs(dot(normalizePlucker(plucker(A[0]!, A[1]!)), normalizePlucker(plucker(B[0]!, B[1]!))));
          const rhs = Array.from(principalAngles(A, B)).reduce((s, t) => s * Math.cos(t), 1);
          expect(Math.abs(lhs - rhs)).toBeLessThan(1e-10);
        },
      ),
    );
  });

  it('|⟨p̂_K(A), p̂_K(B)⟩| = Π cos θ_i for 3-planes (via pluckerK)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 7 }).chain((n) => fc.tuple(wellConditioned(n, 3), wellConditioned(n, 3))),
        ([A, B]) => {
          const pa = pluckerK(A);
          const pb = pluckerK(B);
          const lhs = Math.abs(innerProduct(pa, pb)) / (norm(pa) * norm(pb));
          const rhs = Array.from(principalAngles(A, B)).reduce((s, t) => s * Math.cos(t), 1);
          expect(Math.abs(lhs - rhs)).toBeLessThan(1e-10);
        },
      ),
    );
  });
});

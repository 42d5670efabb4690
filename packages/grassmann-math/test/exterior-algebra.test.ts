import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  basisKVector,
  combinations,
  hodgeStar,
  innerProduct,
  kvector,
  kvectorNorm,
  plucker,
  scaleKVector,
  wedge,
  wedgeAll,
  type KVector,
} from '@grassflow/grassmann-math';
import { coord, det, dot, expectAllClose, maxAbs, vec, vectors } from './helpers.js';

/** A random k-vector on R^n with n in [1, 6]. */
const anyKVector = fc
  .integer({ min: 1, max: 6 })
  .chain((n) => fc.integer({ min: 0, max: n }).map((k) => ({ n, k })))
  .chain(({ n, k }) => vec(combinations(n, k).length).map((c) => kvector(n, k, c)));

/** Two random k-vectors of the same n and k. */
const kvectorPair = fc
  .integer({ min: 1, max: 6 })
  .chain((n) => fc.integer({ min: 0, max: n }).map((k) => ({ n, k })))
  .chain(({ n, k }) => {
    const d = combinations(n, k).length;
    return fc.tuple(vec(d), vec(d)).map(([a, b]) => [kvector(n, k, a), kvector(n, k, b)] as const);
  });

const volume = (n: number): KVector => basisKVector(n, [...Array(n).keys()]);

describe('wedge product', () => {
  it('wedge(u, v).coeffs = plucker(u, v) (same basis order)', () => {
    fc.assert(
      fc.property(vectors(2), ({ vs: [u, v] }) => expectAllClose(wedge(u!, v!).coeffs, plucker(u!, v!), 1e-12)),
    );
  });

  it('basis signs: e1∧e0 = −e0∧e1, e2∧(e0∧e1) = e0∧e1∧e2, e0∧(e0∧e1) = 0', () => {
    expect(Array.from(basisKVector(3, [1, 0]).coeffs)).toEqual([-1, 0, 0]);
    expect(Array.from(wedge(basisKVector(3, [2]), basisKVector(3, [0, 1])).coeffs)).toEqual([1]);
    expect(Array.from(wedge(basisKVector(4, [1, 3]), basisKVector(4, [0, 2])).coeffs)).toEqual([-1]);
    expect(Array.from(wedge(basisKVector(3, [0]), basisKVector(3, [0, 1])).coeffs)).toEqual([0]);
  });

  it('graded commutativity: α ∧ β = (−1)^{kl} β ∧ α', () => {
    const pair = fc
      .integer({ min: 2, max: 6 })
      .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n })))
      .filter(([n, k, l]) => k + l <= n)
      .chain(([n, k, l]) =>
        fc
          .tuple(vec(combinations(n, k).length), vec(combinations(n, l).length))
          .map(([a, b]) => [kvector(n, k, a), kvector(n, l, b)] as const),
      );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const sign = (a.k * b.k) % 2 === 0 ? 1 : -1;
        const terms = maxAbs(a.coeffs) * maxAbs(b.coeffs) * 20;
        expectAllClose(wedge(a, b).coeffs, scaleKVector(wedge(b, a), sign).coeffs, 1e-13, terms);
      }),
    );
  });

  it('associativity: (a ∧ b) ∧ c = a ∧ (b ∧ c) for vectors a, b, c', () => {
    fc.assert(
      fc.property(vectors(3, 3, 7), ({ vs: [a, b, c] }) => {
        const terms = maxAbs(a!) * maxAbs(b!) * maxAbs(c!) * 6;
        expectAllClose(wedge(wedge(a!, b!), c!).coeffs, wedge(a!, wedge(b!, c!)).coeffs, 1e-12, terms);
      }),
    );
  });

  it('u ∧ u = 0 and u ∧ (v + t u) = u ∧ v', () => {
    fc.assert(
      fc.property(vectors(2), coord, ({ vs: [u, v] }, t) => {
        expect(Array.from(wedge(u!, u!).coeffs).every((x) => x === 0)).toBe(true);
        const w = v!.map((x, i) => x + t * u![i]!);
        expectAllClose(
          wedge(u!, w).coeffs,
          wedge(u!, v!).coeffs,
          1e-12,
          maxAbs(u!) * (maxAbs(v!) + Math.abs(t) * maxAbs(u!)),
        );
      }),
    );
  });
});

describe('inner product and norm', () => {
  it('Cauchy–Binet: ⟨u1∧u2∧u3, v1∧v2∧v3⟩ = det[⟨u_i, v_j⟩]', () => {
    fc.assert(
      fc.property(vectors(6, 3, 6), ({ vs }) => {
        const [u1, u2, u3, v1, v2, v3] = vs as [number[], number[], number[], number[], number[], number[]];
        const gram = [u1, u2, u3].map((u) => [v1, v2, v3].map((v) => dot(u, v)));
        const lhs = innerProduct(wedgeAll([u1, u2, u3]), wedgeAll([v1, v2, v3]));
        const rhs = det(gram);
        // Hadamard: |det| ≤ Π ‖u_i‖‖v_i‖, the natural scale of both sides.
        const scale = [u1, u2, u3, v1, v2, v3].reduce((s, w) => s * Math.sqrt(dot(w, w)), 1);
        expect(Math.abs(lhs - rhs)).toBeLessThanOrEqual(1e-12 * (1 + scale));
      }),
    );
  });

  it('‖u ∧ v‖² = ‖u‖²‖v‖² − ⟨u,v⟩² (squared area of the parallelogram)', () => {
    fc.assert(
      fc.property(vectors(2), ({ vs: [u, v] }) => {
        const lhs = kvectorNorm(wedge(u!, v!)) ** 2;
        const rhs = dot(u!, u!) * dot(v!, v!) - dot(u!, v!) ** 2;
        expect(Math.abs(lhs - rhs)).toBeLessThanOrEqual(1e-9 * (1 + dot(u!, u!) * dot(v!, v!)));
      }),
    );
  });
});

describe('Hodge star', () => {
  it('⋆⋆α = (−1)^{k(n−k)} α', () => {
    fc.assert(
      fc.property(anyKVector, (a) => {
        const sign = (a.k * (a.n - a.k)) % 2 === 0 ? 1 : -1;
        const ss = hodgeStar(hodgeStar(a));
        expect(ss.k).toBe(a.k);
        expectAllClose(ss.coeffs, scaleKVector(a, sign).coeffs, 0);
      }),
    );
  });

  it('α ∧ ⋆β = ⟨α, β⟩ e_0 ∧ … ∧ e_{n−1} (the defining convention)', () => {
    fc.assert(
      fc.property(kvectorPair, ([a, b]) => {
        const lhs = wedge(a, hodgeStar(b));
        const terms = maxAbs(a.coeffs) * maxAbs(b.coeffs) * a.coeffs.length;
        expectAllClose(lhs.coeffs, scaleKVector(volume(a.n), innerProduct(a, b)).coeffs, 1e-13, terms);
      }),
    );
  });

  it('‖⋆α‖ = ‖α‖ (isometry)', () => {
    fc.assert(
      fc.property(anyKVector, (a) => {
        expect(Math.abs(kvectorNorm(hodgeStar(a)) - kvectorNorm(a))).toBeLessThanOrEqual(1e-12 * (1 + kvectorNorm(a)));
      }),
    );
  });

  it('in R^3: ⋆(e0∧e1) = e2, ⋆(u ∧ v) = u × v (cross product), ⋆1 = e0∧e1∧e2', () => {
    expect(Array.from(hodgeStar(basisKVector(3, [0, 1])).coeffs)).toEqual([0, 0, 1]);
    expect(Array.from(hodgeStar(basisKVector(3, [0, 2])).coeffs)).toEqual([0, -1, 0]);
    expect(Array.from(hodgeStar(kvector(3, 0, [1])).coeffs)).toEqual([1]);
    fc.assert(
      fc.property(vec(3), vec(3), (u, v) => {
        const cross = [u[1]! * v[2]! - u[2]! * v[1]!, u[2]! * v[0]! - u[0]! * v[2]!, u[0]! * v[1]! - u[1]! * v[0]!];
        expectAllClose(hodgeStar(wedge(u, v)).coeffs, cross, 1e-12);
      }),
    );
  });
});

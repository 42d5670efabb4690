// Exterior algebra Λ^k(R^n): k-vectors on the basis e_I = e_{i_1} ∧ … ∧ e_{i_k}, I sorted, lexicographic order.
import { binomial, checkGrade, combinationTable } from './combinatorics.js';
import { GrassmannInputError, checkInteger, checkVector, describe, type NumericVector } from './errors.js';

/**
 * A k-vector on R^n: `coeffs[q]` is the coefficient of the basis element e_I, where I is the
 * q-th sorted k-subset of {0,…,n−1} in lexicographic order (see `combinations(n, k)`).
 * `coeffs.length` is C(n, k). A 1-vector is a plain vector; a 0-vector is a scalar (one coefficient).
 */
export interface KVector {
  readonly n: number;
  readonly k: number;
  readonly coeffs: Float64Array;
}

/** Builds a k-vector from its C(n,k) coefficients in lexicographic order (copied to Float64Array). */
export function kvector(n: number, k: number, coeffs: NumericVector): KVector {
  const dim = checkGrade('kvector', n, k);
  const c = checkVector('kvector', 'coeffs', coeffs, dim);
  return { n, k, coeffs: Float64Array.from(c) };
}

/** The zero k-vector on R^n. */
export function zeroKVector(n: number, k: number): KVector {
  return { n, k, coeffs: new Float64Array(checkGrade('zeroKVector', n, k)) };
}

/**
 * The blade e_{i_1} ∧ … ∧ e_{i_k} for distinct indices in any order:
 * equals sign(σ) e_I where σ sorts the indices into I.
 */
export function basisKVector(n: number, indices: readonly number[]): KVector {
  checkInteger('basisKVector', 'n', n, 1);
  const k = indices.length;
  checkGrade('basisKVector', n, k, 'indices.length');
  const sorted = [...indices];
  for (const i of sorted) {
    if (!Number.isInteger(i) || i < 0 || i >= n) {
      throw new GrassmannInputError('basisKVector', 'indices', `distinct integers in [0, ${n - 1}]`, `${String(i)}`);
    }
  }
  // Sign of the sorting permutation = (−1)^(number of inversions).
  let inversions = 0;
  for (let a = 0; a < k; a++) for (let b = a + 1; b < k; b++) if (sorted[a]! > sorted[b]!) inversions++;
  sorted.sort((x, y) => x - y);
  for (let a = 1; a < k; a++) {
    if (sorted[a] === sorted[a - 1]) {
      throw new GrassmannInputError('basisKVector', 'indices', 'distinct indices', `index ${sorted[a]} repeated`);
    }
  }
  const out = zeroKVector(n, k);
  out.coeffs[lexRank(sorted, n, pascal(n))] = inversions % 2 === 0 ? 1 : -1;
  return out;
}

/** A vector v ∈ R^n as the 1-vector Σ v_i e_i. */
export function vectorToKVector(v: NumericVector): KVector {
  const c = checkVector('vectorToKVector', 'v', v);
  return { n: c.length, k: 1, coeffs: Float64Array.from(c) };
}

function isKVector(x: unknown): x is KVector {
  return typeof x === 'object' && x !== null && 'coeffs' in x && 'k' in x && 'n' in x;
}

function asKVector(fn: string, name: string, x: KVector | NumericVector): KVector {
  if (isKVector(x)) {
    const dim = checkGrade(fn, x.n, x.k, `${name}.k`);
    checkVector(fn, `${name}.coeffs`, x.coeffs, dim);
    return x;
  }
  const v = checkVector(fn, name, x);
  return { n: v.length, k: 1, coeffs: Float64Array.from(v) };
}

const pascalCache = new Map<number, Float64Array>();

/** Row-major (n+1)×(n+1) table of C(a, b). */
function pascal(n: number): Float64Array {
  const hit = pascalCache.get(n);
  if (hit !== undefined) return hit;
  const t = new Float64Array((n + 1) * (n + 1));
  for (let a = 0; a <= n; a++) for (let b = 0; b <= a; b++) t[a * (n + 1) + b] = binomial(a, b);
  pascalCache.set(n, t);
  return t;
}

/** Lexicographic rank of the sorted subset c (length k) of {0..n−1}; see rankCombination. */
function lexRank(c: ArrayLike<number>, n: number, pas: Float64Array): number {
  const k = c.length;
  const w = n + 1;
  let sum = 0;
  for (let t = 0; t < k; t++) sum += pas[(n - 1 - c[t]!) * w + (k - t)]!;
  return pas[n * w + k]! - 1 - sum;
}

/**
 * Wedge (exterior) product of a k-vector and an l-vector on R^n; vectors are 1-vectors.
 * On basis elements: e_I ∧ e_J = 0 if I ∩ J ≠ ∅, else (−1)^{inv(I,J)} e_{I∪J}
 * with inv(I,J) = #{(i, j) ∈ I × J : i > j} (the sign of the merging permutation).
 * Extended bilinearly. Requires k + l ≤ n.
 */
export function wedge(a: KVector | NumericVector, b: KVector | NumericVector): KVector {
  const A = asKVector('wedge', 'a', a);
  const B = asKVector('wedge', 'b', b);
  if (A.n !== B.n) {
    throw new GrassmannInputError('wedge', 'b', `an element of Λ(R^${A.n}) (same n as a)`, `n = ${B.n}`);
  }
  const n = A.n;
  const k = A.k;
  const l = B.k;
  if (k + l > n) {
    throw new GrassmannInputError(
      'wedge',
      'b',
      `a grade l ≤ n − k = ${n - k}`,
      `l = ${l}`,
      'Λ^{k+l}(R^n) is zero for k + l > n.',
    );
  }
  const m = k + l;
  const out = new Float64Array(checkGrade('wedge', n, m, 'k + l'));
  const ta = combinationTable(n, k);
  const tb = combinationTable(n, l);
  const pas = pascal(n);
  const w = n + 1;
  const total = pas[n * w + m]! - 1;
  for (let qa = 0; qa < A.coeffs.length; qa++) {
    const ca = A.coeffs[qa]!;
    if (ca === 0) continue;
    const ia = qa * k;
    for (let qb = 0; qb < B.coeffs.length; qb++) {
      const cb = B.coeffs[qb]!;
      if (cb === 0) continue;
      const ib = qb * l;
      // Merge I and J: count inversions and accumulate the rank of I ∪ J on the fly.
      let x = 0;
      let y = 0;
      let t = 0;
      let inv = 0;
      let sum = 0;
      let overlap = false;
      while (x < k || y < l) {
        let c: number;
        if (y >= l || (x < k && ta[ia + x]! < tb[ib + y]!)) {
          c = ta[ia + x++]!;
        } else if (x >= k || tb[ib + y]! < ta[ia + x]!) {
          c = tb[ib + y++]!;
          inv += k - x; // the remaining elements of I are all larger than this element of J
        } else {
          overlap = true;
          break;
        }
        sum += pas[(n - 1 - c) * w + (m - t)]!;
        t++;
      }
      if (overlap) continue;
      const q = total - sum;
      out[q] = out[q]! + ((inv & 1) === 0 ? ca * cb : -ca * cb);
    }
  }
  return { n, k: m, coeffs: out };
}

/** Wedge of several factors, left to right: f_1 ∧ f_2 ∧ … ∧ f_m. */
export function wedgeAll(factors: readonly (KVector | NumericVector)[]): KVector {
  if (factors.length === 0) {
    throw new GrassmannInputError('wedgeAll', 'factors', 'a non-empty list of vectors or k-vectors', 'an empty list');
  }
  let acc = asKVector('wedgeAll', 'factors[0]', factors[0]!);
  for (let i = 1; i < factors.length; i++) acc = wedge(acc, factors[i]!);
  return acc;
}

function sameSpace(fn: string, a: KVector | NumericVector, b: KVector | NumericVector): [KVector, KVector] {
  const A = asKVector(fn, 'a', a);
  const B = asKVector(fn, 'b', b);
  if (A.n !== B.n || A.k !== B.k) {
    throw new GrassmannInputError(
      fn,
      'b',
      `a ${A.k}-vector on R^${A.n} (same n and k as a)`,
      `a ${B.k}-vector on R^${B.n}`,
    );
  }
  return [A, B];
}

/**
 * Inner product on Λ^k(R^n) induced by the Euclidean one: ⟨e_I, e_J⟩ = δ_IJ, so ⟨a, b⟩ = Σ_I a_I b_I.
 * For blades, ⟨u_1∧…∧u_k, v_1∧…∧v_k⟩ = det[⟨u_i, v_j⟩] (Cauchy–Binet).
 */
export function innerProduct(a: KVector | NumericVector, b: KVector | NumericVector): number {
  const [A, B] = sameSpace('innerProduct', a, b);
  let s = 0;
  for (let q = 0; q < A.coeffs.length; q++) s += A.coeffs[q]! * B.coeffs[q]!;
  return s;
}

/** Norm ‖a‖ = sqrt⟨a, a⟩; for a blade it is the k-volume of the parallelotope of its factors. */
export function kvectorNorm(a: KVector | NumericVector): number {
  const A = asKVector('kvectorNorm', 'a', a);
  // Scaled sum of squares: no overflow for large coefficients.
  let scale = 0;
  for (let q = 0; q < A.coeffs.length; q++) scale = Math.max(scale, Math.abs(A.coeffs[q]!));
  if (scale === 0) return 0;
  let s = 0;
  for (let q = 0; q < A.coeffs.length; q++) {
    const x = A.coeffs[q]! / scale;
    s += x * x;
  }
  return scale * Math.sqrt(s);
}

/**
 * Hodge star ⋆ : Λ^k(R^n) → Λ^{n−k}(R^n), defined by α ∧ ⋆β = ⟨α, β⟩ e_0 ∧ e_1 ∧ … ∧ e_{n−1}
 * (Euclidean metric, standard orientation). On the basis ⋆e_I = sign(I, I^c) e_{I^c}, where
 * e_I ∧ e_{I^c} = sign(I, I^c) e_0∧…∧e_{n−1}. Satisfies ⋆⋆ = (−1)^{k(n−k)}.
 */
export function hodgeStar(a: KVector | NumericVector): KVector {
  const A = asKVector('hodgeStar', 'a', a);
  const { n, k } = A;
  const m = n - k;
  const out = new Float64Array(binomial(n, m));
  const table = combinationTable(n, k);
  const pas = pascal(n);
  const comp = new Int32Array(m);
  const inI = new Uint8Array(n);
  for (let q = 0; q < A.coeffs.length; q++) {
    const c = A.coeffs[q]!;
    if (c === 0) continue;
    inI.fill(0);
    for (let t = 0; t < k; t++) inI[table[q * k + t]!] = 1;
    // inv(I, I^c) = Σ_{j ∈ I^c} #{i ∈ I : i > j}
    let inv = 0;
    let seenI = 0;
    let t = 0;
    for (let x = 0; x < n; x++) {
      if (inI[x] === 1) {
        seenI++;
      } else {
        comp[t++] = x;
        inv += k - seenI;
      }
    }
    out[lexRank(comp, n, pas)] = (inv & 1) === 0 ? c : -c;
  }
  return { n, k: m, coeffs: out };
}

/** Scalar multiple s·a. */
export function scaleKVector(a: KVector, s: number): KVector {
  if (!Number.isFinite(s)) throw new GrassmannInputError('scaleKVector', 's', 'a finite number', describe(s));
  const A = asKVector('scaleKVector', 'a', a);
  return { n: A.n, k: A.k, coeffs: A.coeffs.map((x) => x * s) };
}

// Plücker coordinates of 2-planes and k-planes, the Plücker relations, normalisation and inversion.
import { binomial, checkGrade, combinationTable } from './combinatorics.js';
import { kvectorNorm } from './exterior-algebra.js';
import { GrassmannInputError, checkInteger, checkVector, describe, type NumericVector } from './errors.js';
import { toColumns, type SubspaceInput } from './subspace-input.js';

/**
 * Plücker coordinates of span(u, v) ⊂ R^n: p_ij = u_i v_j − u_j v_i for 0 ≤ i < j < n, in
 * lexicographic order (0,1), (0,2), …, (0,n−1), (1,2), …, (n−2,n−1); length n(n−1)/2.
 * Equal to the coefficients of u ∧ v. Bilinear, antisymmetric, and
 * plucker(a u + b v, c u + d v) = (ad − bc) · plucker(u, v).
 */
export function plucker(u: NumericVector, v: NumericVector): Float64Array {
  const a = checkVector('plucker', 'u', u);
  if (a.length < 2) throw new GrassmannInputError('plucker', 'u', 'a vector of length n ≥ 2', `length ${a.length}`);
  const n = a.length;
  const b = checkVector('plucker', 'v', v, n);
  const out = new Float64Array((n * (n - 1)) / 2);
  let q = 0;
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    const bi = b[i]!;
    for (let j = i + 1; j < n; j++) out[q++] = ai * b[j]! - a[j]! * bi;
  }
  return out;
}

/** det of the k×k matrix m (row-major, overwritten) by Gaussian elimination with partial pivoting. */
function determinantInPlace(m: Float64Array, k: number): number {
  let det = 1;
  for (let c = 0; c < k; c++) {
    let piv = c;
    let best = Math.abs(m[c * k + c]!);
    for (let r = c + 1; r < k; r++) {
      const x = Math.abs(m[r * k + c]!);
      if (x > best) {
        best = x;
        piv = r;
      }
    }
    if (best === 0) return 0;
    if (piv !== c) {
      for (let s = 0; s < k; s++) {
        const t = m[c * k + s]!;
        m[c * k + s] = m[piv * k + s]!;
        m[piv * k + s] = t;
      }
      det = -det;
    }
    const d = m[c * k + c]!;
    det *= d;
    for (let r = c + 1; r < k; r++) {
      const f = m[r * k + c]! / d;
      if (f === 0) continue;
      for (let s = c + 1; s < k; s++) m[r * k + s] = m[r * k + s]! - f * m[c * k + s]!;
    }
  }
  return det;
}

/**
 * Plücker coordinates of the span of k vectors v_1, …, v_k in R^n: for every sorted k-subset I
 * (lexicographic order), p_I = det(V_I), the k×k minor of the n×k matrix V = [v_1 … v_k] on rows I.
 * Equal to the coefficients of v_1 ∧ … ∧ v_k; length C(n, k). See SubspaceInput for the format.
 */
export function pluckerK(vectors: SubspaceInput): Float64Array {
  const { n, k, columns } = toColumns('pluckerK', 'vectors', vectors);
  const count = checkGrade('pluckerK', n, k, 'vectors.length');
  const table = combinationTable(n, k);
  const out = new Float64Array(count);
  const m = new Float64Array(k * k);
  for (let q = 0; q < count; q++) {
    for (let t = 0; t < k; t++) {
      const row = table[q * k + t]!;
      for (let s = 0; s < k; s++) m[t * k + s] = columns[s]![row]!;
    }
    out[q] = determinantInPlace(m, k);
  }
  return out;
}

/** Validates a 2-vector of R^n: length C(n,2), finite. */
function checkTwoVector(fn: string, p: NumericVector, n: number): NumericVector {
  checkInteger(fn, 'n', n, 2);
  return checkVector(fn, 'p', p, binomial(n, 2));
}

function norm(p: NumericVector): number {
  return kvectorNorm(Float64Array.from(p));
}

/**
 * Relative residual of the quadratic Plücker relations of a 2-vector p ∈ Λ²(R^n):
 *   R = sqrt( Σ_{i<j<k<l} (p_ij p_kl − p_ik p_jl + p_il p_jk)² ) / ‖p‖².
 * (The bracket is the e_ijkl coefficient of ½ p ∧ p.) R = 0 exactly when p is decomposable,
 * p = u ∧ v, i.e. when p is (a multiple of) a point of Gr(2, n); for n ≤ 3 every 2-vector is, so R = 0.
 * Scale invariant. e0∧e1 + e2∧e3 has R = 1/2. Throws for p = 0 (not a point of the Grassmannian).
 */
export function pluckerRelationsResidual(p: NumericVector, n: number): number {
  const fn = 'pluckerRelationsResidual';
  const c = checkTwoVector(fn, p, n);
  const nrm = norm(c);
  if (nrm === 0) {
    throw new GrassmannInputError(
      fn,
      'p',
      'a nonzero 2-vector',
      'the zero vector',
      'The zero 2-vector is no point of Gr(2, n).',
    );
  }
  if (n < 4) return 0;
  // Row offsets of the pair index: idx(i, j) = off[i] + j, off[i] = i(2n−i−1)/2 − i − 1.
  const off = new Float64Array(n);
  for (let i = 0; i < n; i++) off[i] = (i * (2 * n - i - 1)) / 2 - i - 1;
  let s = 0;
  const inv = 1 / nrm; // work with p/‖p‖ so the sum cannot overflow
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const pij = c[off[i]! + j]! * inv;
      for (let k = j + 1; k < n; k++) {
        const pik = c[off[i]! + k]! * inv;
        const pjk = c[off[j]! + k]! * inv;
        for (let l = k + 1; l < n; l++) {
          const r = pij * c[off[k]! + l]! * inv - pik * c[off[j]! + l]! * inv + c[off[i]! + l]! * inv * pjk;
          s += r * r;
        }
      }
    }
  }
  return Math.sqrt(s);
}

/**
 * Projective normalisation: p̂ = σ p / ‖p‖ with the sign σ ∈ {+1, −1} chosen so that the coordinate
 * of largest absolute value (the first one on ties) is positive. p and λp (λ ≠ 0) give the same p̂,
 * so p̂ is a canonical representative of the point of Gr(2, n) (or Gr(k, n)). Throws for p = 0.
 */
export function normalizePlucker(p: NumericVector): Float64Array {
  const c = checkVector('normalizePlucker', 'p', p);
  const nrm = norm(c);
  if (nrm === 0) throw new GrassmannInputError('normalizePlucker', 'p', 'a nonzero Plücker vector', 'the zero vector');
  let arg = 0;
  for (let q = 1; q < c.length; q++) if (Math.abs(c[q]!) > Math.abs(c[arg]!)) arg = q;
  const s = (c[arg]! < 0 ? -1 : 1) / nrm;
  return Float64Array.from(c, (x) => x * s);
}

/**
 * The neural layer's smooth normalisation (no sign convention): p / sqrt(‖p‖² + ε²), ε = 1e-6 by
 * default. Finite and differentiable at p = 0, where it returns 0.
 */
export function smoothNormalizePlucker(p: NumericVector, eps = 1e-6): Float64Array {
  const c = checkVector('smoothNormalizePlucker', 'p', p);
  if (!Number.isFinite(eps) || eps < 0)
    throw new GrassmannInputError('smoothNormalizePlucker', 'eps', 'a finite number ≥ 0', describe(eps));
  const nrm = norm(c);
  const d = Math.sqrt(nrm * nrm + eps * eps);
  if (d === 0) return new Float64Array(c.length);
  return Float64Array.from(c, (x) => x / d);
}

/** Orthonormal basis of the plane of a decomposable 2-vector; see planeFromPlucker. */
export interface PlaneBasis {
  /** First basis vector (unit length). */
  readonly u: Float64Array;
  /** Second basis vector (unit length, orthogonal to u). */
  readonly v: Float64Array;
  /** s ≥ 0 with p ≈ s · plucker(u, v); equals ‖p‖ when p is decomposable. */
  readonly scale: number;
}

/**
 * Recovers an orthonormal, positively oriented basis (u, v) of the plane of a decomposable 2-vector
 * p ∈ Λ²(R^n): p = s · (u ∧ v) with s = ‖p‖ > 0. Method: the skew matrix P with P_ij = p_ij = −P_ji
 * equals s (u vᵀ − v uᵀ), so its columns lie in the plane; columns i and j of the largest |p_ij| span
 * it (their wedge is p_ij · p). Gram–Schmidt (applied twice) makes them orthonormal; v is flipped if
 * needed so that s = ⟨p, u ∧ v⟩ > 0. Throws if p = 0 or pluckerRelationsResidual(p, n) > tolerance
 * (default 1e-6, loose enough for float32 data).
 */
export function planeFromPlucker(p: NumericVector, n: number, tolerance = 1e-6): PlaneBasis {
  const fn = 'planeFromPlucker';
  const c = checkTwoVector(fn, p, n);
  const residual = pluckerRelationsResidual(c, n);
  if (!(residual <= tolerance)) {
    throw new GrassmannInputError(
      fn,
      'p',
      `a decomposable 2-vector (Plücker relations residual ≤ ${tolerance})`,
      `residual ${residual.toExponential(3)}`,
      'Only decomposable 2-vectors u ∧ v are points of Gr(2, n).',
    );
  }
  // Largest coordinate p_ij, and p rescaled by it (no under/overflow in what follows).
  let best = 0;
  for (let q = 1; q < c.length; q++) if (Math.abs(c[q]!) > Math.abs(c[best]!)) best = q;
  const big = Math.abs(c[best]!);
  const [bi, bj] = pairAt(best, n);
  const column = (col: number): Float64Array => {
    // Column `col` of P / big: entry m is p_{m,col} (m < col), −p_{col,m} (m > col), 0 (m = col).
    const out = new Float64Array(n);
    for (let m = 0; m < n; m++) {
      if (m < col) out[m] = c[pairOffset(m, n) + col]! / big;
      else if (m > col) out[m] = -c[pairOffset(col, n) + m]! / big;
    }
    return out;
  };
  const u = column(bi);
  const v = column(bj);
  normalizeInPlace(u);
  for (let pass = 0; pass < 2; pass++) {
    let d = 0;
    for (let m = 0; m < n; m++) d += u[m]! * v[m]!;
    for (let m = 0; m < n; m++) v[m] = v[m]! - d * u[m]!;
  }
  normalizeInPlace(v);
  // ⟨p, u ∧ v⟩ = Σ_{i<j} p_ij (u_i v_j − u_j v_i)
  let s = 0;
  let q = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) s += c[q++]! * (u[i]! * v[j]! - u[j]! * v[i]!);
  if (s < 0) {
    for (let m = 0; m < n; m++) v[m] = -v[m]!;
    s = -s;
  }
  return { u, v, scale: s };
}

/** idx(i, j) = pairOffset(i, n) + j for i < j. */
function pairOffset(i: number, n: number): number {
  return (i * (2 * n - i - 1)) / 2 - i - 1;
}

function pairAt(q: number, n: number): [number, number] {
  let i = 0;
  while (pairOffset(i + 1, n) + i + 2 <= q) i++;
  return [i, q - pairOffset(i, n)];
}

function normalizeInPlace(x: Float64Array): void {
  let s = 0;
  for (const t of x) s += t * t;
  const inv = 1 / Math.sqrt(s);
  for (let m = 0; m < x.length; m++) x[m] = x[m]! * inv;
}

// Principal angles between subspaces and the Grassmann distances built from them.
import { Matrix, QrDecomposition, SingularValueDecomposition } from 'ml-matrix';
import { GrassmannInputError } from './errors.js';
import { toColumns, type SubspaceInput } from './subspace-input.js';

/**
 * Columns are treated as dependent when the part of a column orthogonal to the previous ones is
 * below this fraction of its length (|R_jj| ≤ tol · ‖a_j‖ in A = QR).
 */
const RANK_TOLERANCE = 1e-10;

/**
 * Before a decomposition, entries below FLUSH_RELATIVE · max|M| are set to 0. By Weyl's inequality
 * this moves no singular value by more than k · 1e-40 · max|M|, far below rounding (2.2e-16 · ‖M‖),
 * and it keeps ml-matrix's SVD (a JAMA port) clear of underflow: for a 6×6 matrix equal to I₆ up to
 * off-diagonal entries between 1e-73 and 1e-206 it returned singular values [1, 1, 1, 1, 5e-324, 0]
 * (found by a property test; after flushing below 1e-150 it returned six 1s, as it should).
 */
const FLUSH_RELATIVE = 1e-40;

/** Sets the entries of M below FLUSH_RELATIVE · ref to 0, in place. */
function flushTiny(M: Matrix, ref: number): void {
  const limit = FLUSH_RELATIVE * ref;
  for (let i = 0; i < M.rows; i++) {
    for (let j = 0; j < M.columns; j++) if (Math.abs(M.get(i, j)) < limit) M.set(i, j, 0);
  }
}

/** Scales M in place by 1/max|M| (when nonzero) and flushes tiny entries; returns max|M|. */
function normalizeForDecomposition(M: Matrix): number {
  let big = 0;
  for (let i = 0; i < M.rows; i++) for (let j = 0; j < M.columns; j++) big = Math.max(big, Math.abs(M.get(i, j)));
  if (big === 0) return 0;
  M.div(big);
  flushTiny(M, 1);
  return big;
}

/** Q (n×k) with orthonormal columns spanning span(A), by Householder QR; throws if A is rank-deficient. */
function orthonormalBasisMatrix(A: SubspaceInput, fn: string, name: string): Matrix {
  const { n, k, columns } = toColumns(fn, name, A);
  const M = new Matrix(n, k);
  const colNorms: number[] = [];
  for (let j = 0; j < k; j++) {
    // Scaling a column by 1/max|a_ij| leaves the span unchanged and keeps QR away from under/overflow.
    const col = columns[j]!;
    let big = 0;
    for (const x of col) big = Math.max(big, Math.abs(x));
    let s = 0;
    for (let i = 0; i < n; i++) {
      const x = big === 0 ? 0 : col[i]! / big;
      M.set(i, j, x);
      s += x * x;
    }
    colNorms.push(Math.sqrt(s));
  }
  flushTiny(M, 1); // every column now has max |entry| = 1
  const qr = new QrDecomposition(M);
  const R = qr.upperTriangularMatrix;
  for (let j = 0; j < k; j++) {
    const colNorm = colNorms[j]!;
    if (colNorm === 0 || Math.abs(R.get(j, j)) <= RANK_TOLERANCE * colNorm) {
      throw new GrassmannInputError(
        fn,
        name,
        `${k} linearly independent vectors of R^${n}`,
        colNorm === 0 ? `a zero vector in column ${j}` : `column ${j} lying in the span of columns 0…${j - 1}`,
        'A k-dimensional subspace needs a basis of k independent vectors; drop the dependent ones.',
      );
    }
  }
  const Q = qr.orthogonalMatrix;
  flushTiny(Q, 1); // orthonormal columns: entries ≤ 1
  return Q;
}

/**
 * Orthonormal basis q_1, …, q_k of span(A) (Householder QR via ml-matrix, A = QR, q_j the columns
 * of Q), as k column vectors. Throws GrassmannInputError if the k vectors are linearly dependent.
 */
export function orthonormalBasis(A: SubspaceInput): Float64Array[] {
  const Q = orthonormalBasisMatrix(A, 'orthonormalBasis', 'A');
  const out: Float64Array[] = [];
  for (let j = 0; j < Q.columns; j++) out.push(Float64Array.from(Q.getColumn(j)));
  return out;
}

function singularValues(M: Matrix): number[] {
  const big = normalizeForDecomposition(M);
  if (big === 0) return new Array<number>(Math.min(M.rows, M.columns)).fill(0);
  const sv = new SingularValueDecomposition(M, {
    computeLeftSingularVectors: false,
    computeRightSingularVectors: false,
  }).diagonal;
  return sv.map((x) => x * big);
}

/**
 * Principal angles 0 ≤ θ_1 ≤ … ≤ θ_m ≤ π/2 between span(A) and span(B), m = min(dim A, dim B).
 * Q_A, Q_B: orthonormal bases by QR. cos θ_i are the singular values of Q_Aᵀ Q_B and sin θ_i those
 * of Q_B − Q_A (Q_Aᵀ Q_B) (for dim B ≤ dim A; swapped otherwise), both by ml-matrix SVD. Each angle is
 * taken from its sine when sin θ < cos θ and from its cosine otherwise (Knyazev & Argentati 2002),
 * so small angles keep full relative accuracy; all are clamped to [0, π/2].
 * A, B: see SubspaceInput (column vectors in the same R^n, linearly independent).
 */
export function principalAngles(A: SubspaceInput, B: SubspaceInput): Float64Array {
  let QA = orthonormalBasisMatrix(A, 'principalAngles', 'A');
  let QB = orthonormalBasisMatrix(B, 'principalAngles', 'B');
  if (QA.rows !== QB.rows) {
    throw new GrassmannInputError(
      'principalAngles',
      'B',
      `vectors of R^${QA.rows} (same n as A)`,
      `vectors of R^${QB.rows}`,
    );
  }
  if (QB.columns > QA.columns) [QA, QB] = [QB, QA];
  const m = QB.columns;
  const C = QA.transpose().mmul(QB); // (kA, kB)
  const S = QB.clone().sub(QA.mmul(C)); // (n, kB): component of span(B) orthogonal to span(A)
  const cos = singularValues(C); // descending: cos θ_1 ≥ … ≥ cos θ_m
  const sin = singularValues(S).slice(0, m).reverse(); // ascending: sin θ_1 ≤ … ≤ sin θ_m
  const out = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    const c = Math.min(1, Math.max(0, cos[i] ?? 0));
    const s = Math.min(1, Math.max(0, sin[i] ?? 0));
    const theta = s < c ? Math.asin(s) : Math.acos(c);
    out[i] = Math.min(Math.PI / 2, Math.max(0, theta));
  }
  return out;
}

function equalDimensionAngles(fn: string, A: SubspaceInput, B: SubspaceInput): Float64Array {
  const kA = toColumns(fn, 'A', A).k;
  const kB = toColumns(fn, 'B', B).k;
  if (kA !== kB) {
    throw new GrassmannInputError(
      fn,
      'B',
      `${kA} vectors (a subspace of the same dimension as A)`,
      `${kB} vectors`,
      'Distances on Gr(k, n) compare subspaces of equal dimension k; principalAngles accepts different ones.',
    );
  }
  return principalAngles(A, B);
}

/** Geodesic (arc-length) distance on Gr(k, n): d(A, B) = sqrt(Σ θ_i²). A metric; ≤ π/2 · sqrt(k). */
export function geodesicDistance(A: SubspaceInput, B: SubspaceInput): number {
  const th = equalDimensionAngles('geodesicDistance', A, B);
  let s = 0;
  for (const t of th) s += t * t;
  return Math.sqrt(s);
}

/**
 * Chordal distance: d(A, B) = sqrt(Σ sin² θ_i) = ‖P_A − P_B‖_F / √2, with P the orthogonal projectors.
 * (The Frobenius form of the projection distance, up to the factor √2.)
 */
export function chordalDistance(A: SubspaceInput, B: SubspaceInput): number {
  const th = equalDimensionAngles('chordalDistance', A, B);
  let s = 0;
  for (const t of th) s += Math.sin(t) ** 2;
  return Math.sqrt(s);
}

/**
 * Projection (spectral) distance: d(A, B) = max_i sin θ_i = sin θ_max = ‖P_A − P_B‖_2,
 * the operator 2-norm of the difference of the orthogonal projectors. For the Frobenius form use
 * chordalDistance (·√2).
 */
export function projectionDistance(A: SubspaceInput, B: SubspaceInput): number {
  const th = equalDimensionAngles('projectionDistance', A, B);
  let mx = 0;
  for (const t of th) mx = Math.max(mx, Math.sin(t));
  return mx;
}

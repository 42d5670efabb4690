// Input format for subspaces and point sets: spanning column vectors, as a list or a row-major matrix.
import { GrassmannInputError, checkInteger, checkVector, describe, type NumericVector } from './errors.js';

/**
 * A dense n×k matrix in row-major order: entry (row i, column j) is `data[i * cols + j]`.
 * Its k columns are the k vectors (each in R^n).
 */
export interface DenseMatrix {
  readonly data: NumericVector;
  readonly rows: number;
  readonly cols: number;
}

/**
 * k vectors in R^n, given either as a list of k column vectors (`[u, v]`, each of length n; plain
 * arrays, Float64Array or Float32Array) or as a row-major n×k `DenseMatrix` whose columns are the
 * vectors. The subspace they describe is their span.
 */
export type SubspaceInput = readonly NumericVector[] | DenseMatrix;

/** Validated columns, copied to Float64Array. */
export interface Columns {
  readonly n: number;
  readonly k: number;
  readonly columns: Float64Array[];
}

function isDenseMatrix(x: unknown): x is DenseMatrix {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && 'data' in x && 'rows' in x && 'cols' in x;
}

/**
 * Converts a SubspaceInput to validated Float64 columns. Throws GrassmannInputError for an empty
 * list, columns of different lengths, NaN/Infinity, or k > n when `requireKAtMostN`.
 */
export function toColumns(fn: string, name: string, input: SubspaceInput, requireKAtMostN = true): Columns {
  let columns: Float64Array[];
  let n: number;
  if (isDenseMatrix(input)) {
    n = checkInteger(fn, `${name}.rows`, input.rows, 1);
    const k = checkInteger(fn, `${name}.cols`, input.cols, 1);
    const data = checkVector(fn, `${name}.data`, input.data, n * k);
    columns = [];
    for (let j = 0; j < k; j++) {
      const c = new Float64Array(n);
      for (let i = 0; i < n; i++) c[i] = data[i * k + j]!;
      columns.push(c);
    }
  } else if (Array.isArray(input)) {
    const list = input as readonly unknown[];
    if (list.length === 0) {
      throw new GrassmannInputError(
        fn,
        name,
        'a non-empty list of column vectors or a {data, rows, cols} matrix',
        'an empty list',
      );
    }
    const first = checkVector(fn, `${name}[0]`, list[0]);
    n = first.length;
    columns = list.map((c, j) => Float64Array.from(checkVector(fn, `${name}[${j}]`, c, n)));
  } else {
    throw new GrassmannInputError(
      fn,
      name,
      'a list of column vectors [v1, v2, …] or a row-major matrix {data, rows: n, cols: k}',
      describe(input),
    );
  }
  const k = columns.length;
  if (requireKAtMostN && k > n) {
    throw new GrassmannInputError(fn, name, `at most n = ${n} vectors of R^${n} (k ≤ n)`, `k = ${k} vectors`);
  }
  return { n, k, columns };
}

// Shape and value checks shared by both pluckerBatch implementations.
import { GrassmannInputError, checkInteger, describe } from '../errors.js';

/** Row-major batch of N vectors of R^r: element (n, i) at index n·r + i. */
export type BatchArray = Float32Array | Float64Array;

/** Largest typed array length V8 allows (2^32 elements). */
export const MAX_TYPED_ARRAY_LENGTH = 2 ** 32;

/** Number of Plücker coordinates of a 2-plane in R^r: P = r(r−1)/2. */
export function pairCount(r: number): number {
  return (r * (r - 1)) / 2;
}

/** Validates N, r, the two inputs and the optional output; returns P = r(r−1)/2. */
export function checkBatch(
  fn: string,
  zPrev: unknown,
  zCur: unknown,
  N: unknown,
  r: unknown,
  out: unknown,
  checkFinite: boolean,
): number {
  const rows = checkInteger(fn, 'N', N, 0);
  const width = checkInteger(fn, 'r', r, 2, 65536);
  const P = pairCount(width);
  const inputShape = `a Float32Array or Float64Array of N·r = ${rows}·${width} = ${rows * width} values (row-major [N, r])`;
  for (const [name, z] of [
    ['zPrev', zPrev],
    ['zCur', zCur],
  ] as const) {
    if (!(z instanceof Float32Array || z instanceof Float64Array)) {
      throw new GrassmannInputError(fn, name, inputShape, describe(z));
    }
    if (z.length !== rows * width) throw new GrassmannInputError(fn, name, inputShape, `length ${z.length}`);
    if (checkFinite) {
      for (let t = 0; t < z.length; t++) {
        if (!Number.isFinite(z[t]!)) {
          throw new GrassmannInputError(
            fn,
            name,
            'finite values',
            `${z[t]} at row ${Math.floor(t / width)}, column ${t % width}`,
          );
        }
      }
    }
  }
  const needed = rows * P;
  if (out === undefined) {
    if (needed > MAX_TYPED_ARRAY_LENGTH) {
      throw new GrassmannInputError(
        fn,
        'N',
        `small enough that N·r(r−1)/2 ≤ 2^32 (one Float32Array)`,
        `${rows} (${needed} outputs)`,
        'Process the batch in chunks, passing each chunk its own `out` buffer.',
      );
    }
  } else if (!(out instanceof Float32Array) || out.length < needed) {
    throw new GrassmannInputError(
      fn,
      'options.out',
      `a Float32Array of at least N·r(r−1)/2 = ${needed} values`,
      describe(out),
    );
  }
  return P;
}

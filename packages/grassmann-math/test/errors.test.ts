import { describe, expect, it } from 'vitest';
import {
  GrassmannInputError,
  basisKVector,
  geodesicDistance,
  kvector,
  planeFromPlucker,
  plucker,
  pluckerBatch,
  pluckerK,
  pluckerRelationsResidual,
  principalAngles,
  rankCombination,
  wedge,
} from '@grassflow/grassmann-math';

/** Runs f, expects a GrassmannInputError naming `argument`, and returns it. */
function expectInputError(f: () => unknown, argument: string, expectedFragment: string): GrassmannInputError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(GrassmannInputError);
    const err = e as GrassmannInputError;
    expect(err.name).toBe('GrassmannInputError');
    expect(err.argument).toBe(argument);
    expect(err.expected).toContain(expectedFragment);
    expect(err.message).toContain(`"${argument}"`);
    expect(err.message).toContain(err.expected);
    return err;
  }
  throw new Error('expected a GrassmannInputError, nothing was thrown');
}

describe('typed input errors name the argument and the expected shape', () => {
  it('plucker: mismatched lengths → "v" must be a finite vector of length n', () => {
    const e = expectInputError(() => plucker([1, 2, 3], [1, 2]), 'v', 'length 3');
    expect(e.received).toBe('length 2');
  });

  it('plucker: zero-length or length-1 vectors, non-arrays → "u"', () => {
    expectInputError(() => plucker([], []), 'u', 'non-empty');
    expectInputError(() => plucker([1], [2]), 'u', 'n ≥ 2');
    expectInputError(() => plucker('abc' as unknown as number[], [1, 2, 3]), 'u', 'finite numbers');
  });

  it('plucker: NaN / Infinity anywhere → error naming the index', () => {
    expect(expectInputError(() => plucker([1, NaN, 3], [1, 2, 3]), 'u', 'finite').received).toContain('index 1');
    expectInputError(() => plucker([1, 2, 3], new Float32Array([1, Infinity, 3])), 'v', 'finite');
  });

  it('pluckerK / wedge / kvector: k > n → error (Λ^k(R^n) = 0)', () => {
    expectInputError(
      () =>
        pluckerK([
          [1, 0],
          [0, 1],
          [1, 1],
        ]),
      'vectors',
      'k ≤ n',
    );
    expectInputError(() => wedge(basisKVector(3, [0, 1]), basisKVector(3, [1, 2])), 'b', 'l ≤ n − k');
    expectInputError(() => kvector(3, 4, [1]), 'k', '[0, 3]');
    expectInputError(() => kvector(4, 2, [1, 2, 3]), 'coeffs', 'length 6');
    expectInputError(() => wedge([1, 2, 3], [1, 2]), 'b', 'R^3');
    expectInputError(() => rankCombination([2, 1], 4), 'indices', 'strictly increasing');
  });

  it('pluckerRelationsResidual: wrong length and the zero vector', () => {
    expectInputError(() => pluckerRelationsResidual([1, 2, 3], 4), 'p', 'length 6');
    expectInputError(() => pluckerRelationsResidual([0, 0, 0, 0, 0, 0], 4), 'p', 'nonzero');
  });

  it('planeFromPlucker: a non-decomposable 2-vector (e0∧e1 + e2∧e3) is rejected', () => {
    expect(expectInputError(() => planeFromPlucker([1, 0, 0, 0, 0, 1], 4), 'p', 'decomposable').received).toContain(
      '5.000e-1',
    );
  });

  it('principalAngles: dependent columns, zero vector, different ambient n, empty list', () => {
    expectInputError(
      () =>
        principalAngles(
          [
            [1, 2, 3],
            [2, 4, 6],
          ],
          [[1, 0, 0]],
        ),
      'A',
      'linearly independent',
    );
    expectInputError(() => principalAngles([[1, 0, 0]], [[0, 0, 0]]), 'B', 'linearly independent');
    expectInputError(() => principalAngles([[1, 0, 0]], [[1, 0]]), 'B', 'same n');
    expectInputError(() => principalAngles([], [[1, 0]]), 'A', 'non-empty');
    expectInputError(() => principalAngles({ data: [1, 2, 3], rows: 2, cols: 2 }, [[1, 0]]), 'A.data', 'length 4');
  });

  it('distances: subspaces of different dimension → "B" must have the same dimension as A', () => {
    expectInputError(
      () =>
        geodesicDistance(
          [[1, 0, 0]],
          [
            [1, 0, 0],
            [0, 1, 0],
          ],
        ),
      'B',
      'same dimension',
    );
  });

  it('pluckerBatch: wrong length, NaN, r < 2, small out, unknown backend', () => {
    const z = new Float32Array(16);
    expectInputError(() => pluckerBatch(z, new Float32Array(15), 2, 8), 'zCur', 'N·r = 2·8 = 16');
    expectInputError(() => pluckerBatch([1, 2] as unknown as Float32Array, z, 2, 8), 'zPrev', 'Float32Array');
    const bad = new Float32Array(16);
    bad[9] = NaN;
    expect(expectInputError(() => pluckerBatch(bad, z, 2, 8), 'zPrev', 'finite').received).toContain('row 1, column 1');
    expectInputError(() => pluckerBatch(z, z, 16, 1), 'r', '[2, 65536]');
    expectInputError(() => pluckerBatch(z, z, 2.5, 8), 'N', 'integer');
    expectInputError(() => pluckerBatch(z, z, 2, 8, { out: new Float32Array(55) }), 'options.out', '56');
    expectInputError(() => pluckerBatch(z, z, 2, 8, { backend: 'cuda' as unknown as 'ts' }), 'options.backend', "'ts'");
    expectInputError(
      () => pluckerBatch(z, z, 2, 8, { backend: 'gpujs', gpuMode: 'webgpu' as unknown as 'gpu' }),
      'options.gpuMode',
      'webasm',
    );
  });

  it('pluckerBatch: checkFinite: false skips the scan (NaN propagates as IEEE arithmetic says)', () => {
    const a = new Float32Array([NaN, 1]);
    const out = pluckerBatch(a, new Float32Array([1, 1]), 1, 2, { checkFinite: false });
    expect(Number.isNaN(out[0])).toBe(true);
  });
});

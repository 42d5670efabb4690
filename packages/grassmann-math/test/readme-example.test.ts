// The README's example, verbatim in substance: if this fails, the README is wrong.
import { describe, expect, it } from 'vitest';
import {
  GrassmannInputError,
  geodesicDistance,
  innerProduct,
  normalizePlucker,
  planeFromPlucker,
  plucker,
  pluckerBatch,
  pluckerRelationsResidual,
  principalAngles,
} from '@grassflow/grassmann-math';

describe('README example', () => {
  it('plucker, relations residual, principal angles, |⟨p̂(A), p̂(B)⟩| = Π cos θ, batch and errors as documented', () => {
    const p = plucker([1, 2, 3, 4], [0.5, -1, 2, 0]);
    expect(Array.from(p)).toEqual([-2, 0.5, -2, 7, 4, -8]);
    expect(pluckerRelationsResidual(p, 4)).toBeLessThan(1e-15);
    expect(pluckerRelationsResidual([1, 0, 0, 0, 0, 1], 4)).toBeCloseTo(0.5, 15);

    const { u, v, scale } = planeFromPlucker(p, 4);
    expect(Array.from(plucker(u, v), (x) => x * scale).map((x) => +x.toFixed(12))).toEqual([-2, 0.5, -2, 7, 4, -8]);

    const a1 = [1, 0, 0, 0];
    const a2 = [0, 1, 0, 0];
    const b1 = [Math.cos(0.3), 0, Math.sin(0.3), 0];
    const b2 = [0, Math.cos(1.1), 0, Math.sin(1.1)];
    const theta = principalAngles([a1, a2], [b1, b2]);
    expect(theta[0]).toBeCloseTo(0.3, 14);
    expect(theta[1]).toBeCloseTo(1.1, 14);
    expect(geodesicDistance([a1, a2], [b1, b2])).toBeCloseTo(Math.hypot(0.3, 1.1), 14);

    const overlap = Math.abs(innerProduct(normalizePlucker(plucker(a1, a2)), normalizePlucker(plucker(b1, b2))));
    expect(overlap).toBeCloseTo(Math.cos(0.3) * Math.cos(1.1), 14);
    expect(overlap.toFixed(4)).toBe('0.4333');

    const zPrev = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0]);
    const zCur = new Float32Array([0, 1, 0, 0, 0, 0, 2, 0]);
    expect(Array.from(pluckerBatch(zPrev, zCur, 2, 4))).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0]);

    try {
      plucker([1, 2, 3], [1, 2]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(GrassmannInputError);
      expect((e as GrassmannInputError).argument).toBe('v');
      expect((e as GrassmannInputError).message).toBe(
        'plucker: argument "v" must be a finite vector of length 3; got length 2.',
      );
    }
  });
});

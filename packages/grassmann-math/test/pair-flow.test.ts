// pairFlow: angles, areas and the flow of pair-planes of a vector sequence, on sequences whose geometry is known.
import { describe, expect, it } from 'vitest';
import { GrassmannInputError, pairFlow, plucker } from '@grassflow/grassmann-math';

describe('pairFlow', () => {
  it('a vector turning by θ in one plane: every pair has angle θ and area sin θ, and the plane does not move', () => {
    const theta = 0.3;
    const L = 6;
    const data = Array.from({ length: L }, (_, t) => [Math.cos(t * theta), Math.sin(t * theta), 0]).flat();
    const f = pairFlow({ rows: L, cols: 3, data }, 1);
    expect(f.angleDeg[0]).toBeNull();
    for (let t = 1; t < L; t++) {
      expect(f.angleDeg[t]).toBeCloseTo((theta * 180) / Math.PI, 10);
      expect(f.area[t]).toBeCloseTo(Math.sin(theta), 12);
    }
    expect(f.stepDeg.slice(0, 2)).toEqual([null, null]);
    for (let t = 2; t < L; t++) expect(f.stepDeg[t]).toBeCloseTo(0, 5);
    expect(f.degeneratePlanes).toBe(0);
  });

  it('from the xy-plane to the xz-plane: one principal angle of 90°, geodesic step 90°', () => {
    // z = e2, e1, e3: P_1 = span(e2, e1), P_2 = span(e1, e3) share e1 (θ1 = 0) and are otherwise orthogonal (θ2 = 90°).
    const data = [0, 1, 0, 1, 0, 0, 0, 0, 1];
    const f = pairFlow({ rows: 3, cols: 3, data }, 1);
    expect(f.theta1Deg[2]).toBeCloseTo(0, 6);
    expect(f.theta2Deg[2]).toBeCloseTo(90, 6);
    expect(f.stepDeg[2]).toBeCloseTo(90, 6);
  });

  it('counts dependent pairs as degenerate planes, and compares normalised Plücker coordinates', () => {
    const data = [1, 2, 0, 2, 4, 0, 0, 1, 1];
    const eps = 1e-3;
    const p = plucker([2, 4, 0], [0, 1, 1]);
    const norm = Math.sqrt(p.reduce((s, x) => s + x * x, 0) + eps * eps);
    const pHat = { rows: 3, cols: 3, data: [0, 0, 0, 0, 0, 0, ...Array.from(p, (x) => x / norm + 1e-4)] };
    const f = pairFlow({ rows: 3, cols: 3, data }, 1, { pHat, eps });
    expect(f.degeneratePlanes).toBe(1);
    expect(f.area[1]).toBe(0);
    expect(f.stepDeg[2]).toBeNull();
    expect(f.pHatDiff).toBeCloseTo(1e-4, 8);
    expect(() => pairFlow({ rows: 3, cols: 3, data }, 0)).toThrow(GrassmannInputError);
  });
});

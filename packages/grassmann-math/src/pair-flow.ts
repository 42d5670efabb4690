// The flow of pair-planes along a sequence of vectors: for an offset Δ, the pair (z_{t−Δ}, z_t) at every position,
// its angle and area (the norm of its Plücker coordinates), and the step on Gr(2, r) from one pair-plane to the next.
import { GrassmannInputError, type NumericVector } from './errors.js';
import { plucker } from './plucker.js';
import { principalAngles } from './principal-angles.js';

const DEG = 180 / Math.PI;
/** sin θ below which two vectors count as dependent (the rank tolerance of principalAngles). */
const DEPENDENT_SIN = 1e-10;

/** A sequence of L vectors in R^r, row-major: vector t is data[t·r … (t+1)·r). */
export interface VectorSequence {
  readonly rows: number;
  readonly cols: number;
  readonly data: ArrayLike<number>;
}

/** The geometry of the pairs at one offset Δ; index t is the position of z_t (null where it does not exist). */
export interface PairFlow {
  delta: number;
  /** ∠(z_{t−Δ}, z_t) in degrees, atan2(‖z_{t−Δ} ∧ z_t‖, z_{t−Δ}·z_t) ∈ [0°, 180°]; null for t < Δ or a zero vector. */
  angleDeg: Array<number | null>;
  /** ‖p‖ = ‖z_{t−Δ} ∧ z_t‖ (Plücker coordinates before normalisation): the parallelogram's area. */
  area: Array<number | null>;
  /**
   * The flow step from P_{t−1} = span(z_{t−1−Δ}, z_{t−1}) to P_t = span(z_{t−Δ}, z_t) on Gr(2, r): principal
   * angles θ1 ≤ θ2 and the geodesic distance sqrt(θ1² + θ2²), in degrees; null for t < Δ + 1 or a degenerate plane.
   */
  theta1Deg: Array<number | null>;
  theta2Deg: Array<number | null>;
  stepDeg: Array<number | null>;
  /** Planes P_t (t ≥ Δ) whose two vectors are linearly dependent: no point of Gr(2, r). */
  degeneratePlanes: number;
  /**
   * With `options.pHat`: largest |p̂_t − p/sqrt(‖p‖² + ε²)| with p = plucker(z_{t−Δ}, z_t) in float64 — how far
   * normalised Plücker coordinates computed elsewhere (a model's float32 mixing) are from these; 0 without.
   */
  pHatDiff: number;
}

function rowOf(z: VectorSequence, t: number): Float64Array {
  return Float64Array.from({ length: z.cols }, (_, i) => z.data[t * z.cols + i] as number);
}

/** Principal angles [θ1, θ2] (radians) between span(a0, b0) and span(a1, b1); null when either pair is dependent. */
export function planeStep(
  a0: NumericVector,
  b0: NumericVector,
  a1: NumericVector,
  b1: NumericVector,
): [number, number] | null {
  try {
    const th = principalAngles([a0, b0], [a1, b1]);
    return [th[0] as number, th[1] as number];
  } catch (err) {
    if (err instanceof GrassmannInputError) return null;
    throw err;
  }
}

/**
 * The pairs (z_{t−Δ}, z_t) of a sequence of vectors at offset Δ, in float64: angle and area of each pair, and the
 * principal angles between consecutive pair-planes P_{t−1} → P_t on Gr(2, r). `pHat` (L × C(r, 2)): normalised
 * Plücker coordinates of the same pairs computed elsewhere, compared with plucker(z_{t−Δ}, z_t)/sqrt(‖p‖² + ε²).
 */
export function pairFlow(
  z: VectorSequence,
  delta: number,
  options: { readonly pHat?: VectorSequence; readonly eps?: number } = {},
): PairFlow {
  if (!Number.isInteger(delta) || delta < 1)
    throw new GrassmannInputError('pairFlow', 'delta', 'an integer >= 1', String(delta));
  const L = z.rows;
  const r = z.cols;
  const eps = options.eps ?? 0;
  const out: PairFlow = {
    delta,
    angleDeg: [],
    area: [],
    theta1Deg: [],
    theta2Deg: [],
    stepDeg: [],
    degeneratePlanes: 0,
    pHatDiff: 0,
  };
  const planeOk: boolean[] = [];
  for (let t = 0; t < L; t++) {
    if (t < delta) {
      out.angleDeg.push(null);
      out.area.push(null);
      planeOk.push(false);
      continue;
    }
    const a = rowOf(z, t - delta);
    const b = rowOf(z, t);
    const p = plucker(a, b); // C(r, 2)
    let pp = 0;
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (const x of p) pp += x * x;
    for (let i = 0; i < r; i++) {
      dot += (a[i] as number) * (b[i] as number);
      na += (a[i] as number) ** 2;
      nb += (b[i] as number) ** 2;
    }
    const area = Math.sqrt(pp);
    out.area.push(area);
    out.angleDeg.push(na === 0 || nb === 0 ? null : Math.atan2(area, dot) * DEG);
    const pHat = options.pHat;
    if (pHat !== undefined) {
      const inv = 1 / Math.sqrt(pp + eps * eps);
      p.forEach(
        (x, c) => (out.pHatDiff = Math.max(out.pHatDiff, Math.abs(x * inv - (pHat.data[t * pHat.cols + c] as number)))),
      );
    }
    // principalAngles' rank test: the part of z_t orthogonal to z_{t−Δ} (|z_t| sin θ) below 1e-10 |z_t|
    const independent = na > 0 && nb > 0 && area > DEPENDENT_SIN * Math.sqrt(na * nb);
    if (!independent) out.degeneratePlanes++;
    planeOk.push(independent);
  }
  for (let t = 0; t < L; t++) {
    const ok = t >= delta + 1 && planeOk[t - 1] === true && planeOk[t] === true;
    const step = ok ? planeStep(rowOf(z, t - 1 - delta), rowOf(z, t - 1), rowOf(z, t - delta), rowOf(z, t)) : null;
    out.theta1Deg.push(step === null ? null : step[0] * DEG);
    out.theta2Deg.push(step === null ? null : step[1] * DEG);
    out.stepDeg.push(step === null ? null : Math.hypot(step[0], step[1]) * DEG);
  }
  return out;
}

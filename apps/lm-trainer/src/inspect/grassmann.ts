// Geometry inside a Grassmann block: gates, Plücker pairs and the flow of pair-planes, from the model's own mixing.
import * as tf from '@tensorflow/tfjs-core';
import { grassmannMixingTrace, type GrassmannBlock } from '@grassflow/gpu-layers';
import { GrassmannInputError, plucker, principalAngles } from '@grassflow/grassmann-math';
import { histogramBins, type HistogramBins } from '@grassflow/training';
import { blockWeights, matOf, mixerInput, row, summarize, type Mat, type Summary } from './tensors.js';

const DEG = 180 / Math.PI;
/** sin θ below which two vectors count as dependent (the rank tolerance of grassmann-math's principalAngles). */
const DEPENDENT_SIN = 1e-10;

/**
 * Geometry of the pairs at one offset Δ along one sequence; index t is the position of z_t (null where it does not
 * exist).
 */
export interface OffsetTrace {
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
   * Largest |p̂ of the model's mixing − p/sqrt(‖p‖² + ε²)| with p = grassmann-math's plucker(z_{t−Δ}, z_t) of the
   * same z (float64): the model's pair order and normalisation agree with the math package.
   */
  pHatDiff: number;
}

/** Everything the mixing layer computes for one sequence (the model's float32 values, as float64 matrices). */
export interface MixingTrace {
  /** z = u W_red + b_red, L × r. */
  z: Mat;
  /** g_t = W_plu mean_Δ p̂ + b_plu (0 where no pair exists), L × d. */
  g: Mat;
  /** α = σ(W_gate [u; g] + b_gate), L × d. */
  alpha: Mat;
  /** h_mix = α ⊙ u + (1 − α) ⊙ g, L × d. */
  hMix: Mat;
  /**
   * ‖(1 − α_t) ⊙ g_t‖ / (‖α_t ⊙ u_t‖ + ‖(1 − α_t) ⊙ g_t‖): how much of h_mix comes from the geometric path (0
   * where both are 0).
   */
  geometricShare: number[];
  offsets: OffsetTrace[];
}

/**
 * Causal Grassmann mixing (paper-notes §1) of the mixer input u (L × d) by the block's own grassmannMixing
 * (grassmannMixingTrace: z, p̂ per offset, g, α and h_mix from the code the model runs), and the geometry of its
 * pairs measured in float64 from that z: angles and areas of (z_{t−Δ}, z_t) and the principal angles between
 * consecutive pair-planes.
 */
export async function traceMixing(block: GrassmannBlock, u: Mat): Promise<MixingTrace> {
  const L = u.rows;
  const d = u.cols;
  const { offsets, eps } = block;
  const input = tf.tensor3d(Float32Array.from(u.data), [1, L, d]); // [1, L, d]
  const t = grassmannMixingTrace(input, block.mixerWeights(), { offsets, eps, direction: 'causal' });
  let tr: { z: Mat; g: Mat; alpha: Mat; hMix: Mat; pHat: Mat[] };
  try {
    const [z, g, alpha, hMix, ...pHat] = await Promise.all([t.z, t.g, t.alpha, t.output, ...t.pHat].map(matOf));
    tr = { z: z as Mat, g: g as Mat, alpha: alpha as Mat, hMix: hMix as Mat, pHat };
  } finally {
    tf.dispose([input, t.output, t.z, t.g, t.alpha, ...t.pHat]);
  }
  const { z, g, alpha, hMix } = tr;
  const r = z.cols;
  const traces: OffsetTrace[] = offsets.map((delta, o) => {
    const pHat = tr.pHat[o] as Mat;
    const out: OffsetTrace = {
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
      const a = row(z, t - delta);
      const b = row(z, t);
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
      const inv = 1 / Math.sqrt(pp + eps * eps);
      p.forEach(
        (x, c) => (out.pHatDiff = Math.max(out.pHatDiff, Math.abs(x * inv - (pHat.data[t * pHat.cols + c] as number)))),
      );
      // principalAngles' rank test: the part of z_t orthogonal to z_{t−Δ} (|z_t| sin θ) below 1e-10 |z_t|
      const independent = na > 0 && nb > 0 && area > DEPENDENT_SIN * Math.sqrt(na * nb);
      if (!independent) out.degeneratePlanes++;
      planeOk.push(independent);
    }
    for (let t = 0; t < L; t++) {
      const ok = t >= delta + 1 && planeOk[t - 1] === true && planeOk[t] === true;
      const step = ok ? planeStep(row(z, t - 1 - delta), row(z, t - 1), row(z, t - delta), row(z, t)) : null;
      out.theta1Deg.push(step === null ? null : step[0] * DEG);
      out.theta2Deg.push(step === null ? null : step[1] * DEG);
      out.stepDeg.push(step === null ? null : Math.hypot(step[0], step[1]) * DEG);
    }
    return out;
  });
  const geometricShare = Array.from({ length: L }, (_, t) => {
    let keep = 0;
    let geo = 0;
    for (let k = t * d; k < (t + 1) * d; k++) {
      const a = alpha.data[k] as number;
      keep += (a * (u.data[k] as number)) ** 2;
      geo += ((1 - a) * (g.data[k] as number)) ** 2;
    }
    const sum = Math.sqrt(keep) + Math.sqrt(geo);
    return sum === 0 ? 0 : Math.sqrt(geo) / sum;
  });
  return { z, g, alpha, hMix, geometricShare, offsets: traces };
}

/** Principal angles [θ1, θ2] (radians) between span(a0, b0) and span(a1, b1); null when either pair is dependent. */
export function planeStep(
  a0: Float64Array,
  b0: Float64Array,
  a1: Float64Array,
  b1: Float64Array,
): [number, number] | null {
  try {
    const th = principalAngles([a0, b0], [a1, b1]);
    return [th[0] as number, th[1] as number];
  } catch (err) {
    if (err instanceof GrassmannInputError) return null;
    throw err;
  }
}

/** One of the largest flow steps: where the plane P_{t−1} → P_t moved most, with the token that arrived at t. */
export interface LargeStep {
  sample: number;
  /** Position t of the new token z_t. */
  position: number;
  token: string;
  /** The tokens of the new pair (z_{t−Δ}, z_t). */
  pair: [string, string];
  /** The tokens t − Δ … t, the pair's span in the text. */
  context: string;
  stepDeg: number;
  theta1Deg: number;
  theta2Deg: number;
}

/** Per-offset report of a layer over all samples. */
export interface OffsetReport {
  delta: number;
  /** [sample][t] values of the traces. */
  angleDeg: Array<Array<number | null>>;
  area: Array<Array<number | null>>;
  theta1Deg: Array<Array<number | null>>;
  theta2Deg: Array<Array<number | null>>;
  stepDeg: Array<Array<number | null>>;
  degeneratePlanes: number;
  summary: {
    angleDeg: Summary;
    area: Summary;
    log10Area: Summary;
    theta1Deg: Summary;
    theta2Deg: Summary;
    stepDeg: Summary;
  };
  /** Angles in 36 bins of 5° over [0°, 180°]. */
  angleHistogram: HistogramBins;
  largestSteps: LargeStep[];
}

/** What inspect reports for one Grassmann block. */
export interface GrassmannLayerReport {
  layer: number;
  offsets: number[];
  mixerInput: 'h' | 'LN1(h)';
  gate: {
    /** Over every position, channel and sample. */
    summary: Summary;
    /** [sample][t]: mean of α_t over the d channels. */
    perPosition: number[][];
  };
  /** ‖(1 − α_t) ⊙ g_t‖ / (‖α_t ⊙ u_t‖ + ‖(1 − α_t) ⊙ g_t‖): the geometric path's share of h_mix at each position. */
  geometricShare: {
    summary: Summary;
    /** [sample][t]. */
    perPosition: number[][];
  };
  geometry: OffsetReport[];
  /**
   * Largest |p̂ of the model's grassmannMixing (float32) − p̂ from grassmann-math's plucker of the same z (float64)|
   * over all samples and offsets.
   */
  check: { maxAbsDiff: number };
}

/** Tokens i … j of a sample joined for display. */
function span(tokens: readonly string[], i: number, j: number): string {
  return tokens.slice(Math.max(0, i), j + 1).join(' ');
}

/**
 * Inspect Grassmann block `layer` on the samples: `inputs[s]` is the block's input h (L × d) for sample s.
 * `top` largest flow steps are kept per offset.
 */
export async function inspectGrassmannLayer(
  block: GrassmannBlock,
  layer: number,
  inputs: readonly Mat[],
  tokens: ReadonlyArray<readonly string[]>,
  top: number,
): Promise<GrassmannLayerReport> {
  if (block.direction !== 'causal')
    throw new RangeError(`inspect: layer ${layer} mixes in both directions; only causal language models are supported`);
  const weights = await blockWeights(block);
  const traces: MixingTrace[] = [];
  for (const h of inputs) traces.push(await traceMixing(block, mixerInput(h, weights, block.norm)));
  const maxDiff = Math.max(0, ...traces.flatMap((tr) => tr.offsets.map((o) => o.pHatDiff)));
  const perPosition = traces.map((tr) =>
    Array.from({ length: tr.alpha.rows }, (_, t) => {
      let s = 0;
      for (let k = 0; k < tr.alpha.cols; k++) s += tr.alpha.data[t * tr.alpha.cols + k] as number;
      return s / tr.alpha.cols;
    }),
  );
  const geometry = block.offsets.map((delta, o): OffsetReport => {
    const per = traces.map((tr) => tr.offsets[o] as OffsetTrace);
    const flat = (f: (x: OffsetTrace) => Array<number | null>) => per.flatMap(f);
    const steps: LargeStep[] = [];
    per.forEach((x, s) =>
      x.stepDeg.forEach((v, t) => {
        if (v === null) return;
        const toks = tokens[s] as readonly string[];
        steps.push({
          sample: s,
          position: t,
          token: toks[t] ?? '?',
          pair: [toks[t - delta] ?? '?', toks[t] ?? '?'],
          context: span(toks, t - delta, t),
          stepDeg: v,
          theta1Deg: x.theta1Deg[t] as number,
          theta2Deg: x.theta2Deg[t] as number,
        });
      }),
    );
    steps.sort((a, b) => b.stepDeg - a.stepDeg || a.sample - b.sample || a.position - b.position);
    return {
      delta,
      angleDeg: per.map((x) => x.angleDeg),
      area: per.map((x) => x.area),
      theta1Deg: per.map((x) => x.theta1Deg),
      theta2Deg: per.map((x) => x.theta2Deg),
      stepDeg: per.map((x) => x.stepDeg),
      degeneratePlanes: per.reduce((n, x) => n + x.degeneratePlanes, 0),
      summary: {
        angleDeg: summarize(flat((x) => x.angleDeg)),
        area: summarize(flat((x) => x.area)),
        log10Area: summarize(flat((x) => x.area).map((a) => (a === null || a <= 0 ? null : Math.log10(a)))),
        theta1Deg: summarize(flat((x) => x.theta1Deg)),
        theta2Deg: summarize(flat((x) => x.theta2Deg)),
        stepDeg: summarize(flat((x) => x.stepDeg)),
      },
      angleHistogram: histogramBins(
        flat((x) => x.angleDeg).filter((v): v is number => v !== null),
        { bins: 36, domain: [0, 180] },
      ),
      largestSteps: steps.slice(0, top),
    };
  });
  return {
    layer,
    offsets: [...block.offsets],
    mixerInput: block.norm === 'post' ? 'h' : 'LN1(h)',
    gate: { summary: summarize(traces.flatMap((tr) => Array.from(tr.alpha.data))), perPosition },
    geometricShare: {
      summary: summarize(traces.flatMap((tr) => tr.geometricShare)),
      perPosition: traces.map((tr) => tr.geometricShare),
    },
    geometry,
    check: { maxAbsDiff: maxDiff },
  };
}

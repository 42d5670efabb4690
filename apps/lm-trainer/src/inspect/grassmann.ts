// Geometry inside a Grassmann block: gates, Plücker pairs and the flow of pair-planes, from the model's own mixing.
import type { GrassmannBlock } from '@grassflow/gpu-layers';
import {
  gatePerPosition,
  traceMixing as traceBlockMixing,
  type MixingTrace as BlockMixingTrace,
} from '@grassflow/gpu-layers/internals';
import { pairFlow, planeStep, type PairFlow } from '@grassflow/grassmann-math';
import { histogramBins, type HistogramBins } from '@grassflow/training';
import { blockWeights, mixerInput, summarize, type Mat, type Summary } from './tensors.js';

/** The geometry of the pairs at one offset Δ along one sequence (grassmann-math's pairFlow of the mixing's z). */
export type OffsetTrace = PairFlow;

/** Everything the mixing layer computes for one sequence, and the geometry of its pairs at each offset. */
export interface MixingTrace extends Omit<BlockMixingTrace, 'pHat'> {
  offsets: OffsetTrace[];
}

export { planeStep };

/**
 * Causal Grassmann mixing (paper-notes §1) of the mixer input u (L × d) by the block's own grassmannMixing
 * (gpu-layers' traceMixing: z, p̂ per offset, g, α and h_mix from the code the model runs), and the geometry of its
 * pairs measured in float64 from that z (grassmann-math's pairFlow): angles and areas of (z_{t−Δ}, z_t), the principal
 * angles between consecutive pair-planes, and p̂ against grassmann-math's plucker of the same z.
 */
export async function traceMixing(block: GrassmannBlock, u: Mat): Promise<MixingTrace> {
  const { pHat, ...trace } = await traceBlockMixing(block, u);
  const offsets = block.offsets.map((delta, o) => pairFlow(trace.z, delta, { pHat: pHat[o] as Mat, eps: block.eps }));
  return { ...trace, offsets };
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
  const perPosition = traces.map(gatePerPosition);
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

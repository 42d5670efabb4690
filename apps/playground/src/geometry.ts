// The geometry of a token sequence as `grassflow-lm inspect` computes it, one sequence at a time: every block's input
// (gpu-layers' blockInputs), the block's mixer traced by the model's own code (traceMixing / traceAttention), and for
// Grassmann blocks the pair geometry of its z (grassmann-math's pairFlow).
import { GrassmannBlock, TransformerBlock, type LanguageModel } from '@grassflow/gpu-layers';
import {
  blockInputs,
  blockWeights,
  gatePerPosition,
  inspectableModel,
  mixerInput,
  traceAttention,
  traceMixing,
} from '@grassflow/gpu-layers/internals';
import { pairFlow, type PairFlow } from '@grassflow/grassmann-math';

/** One Grassmann block along the sequence. */
export interface GrassmannLayerView {
  layer: number;
  /** Mean of α_t over the channels, per position: one row of the α heatmap. */
  alpha: number[];
  /** The geometric path's share of h_mix per position. */
  geometricShare: number[];
  /** Per offset Δ: pair angles, areas and the principal-angle flow. */
  offsets: PairFlow[];
}

/** One Transformer block along the sequence: the attention weights of each head, a[i · L + j]. */
export interface AttentionLayerView {
  layer: number;
  heads: Float64Array[];
}

export type GeometryView =
  | { kind: 'grassmann'; length: number; layers: GrassmannLayerView[] }
  | { kind: 'transformer'; length: number; layers: AttentionLayerView[] };

/** The geometry of `ids` (at most the model's maxLen tokens) in every block of `model`. */
export async function sequenceGeometry(model: LanguageModel, ids: Int32Array): Promise<GeometryView> {
  const lm = inspectableModel(model);
  if (ids.length === 0) throw new RangeError('no tokens to inspect: type a prompt');
  if (ids.length > lm.config.maxLen)
    throw new RangeError(`${ids.length} tokens are more than the model's maxLen ${lm.config.maxLen}`);
  const inputs = await blockInputs(lm, ids);
  if (lm.config.kind === 'grassmann') {
    const layers: GrassmannLayerView[] = [];
    for (const [i, block] of lm.blocks.entries()) {
      if (!(block instanceof GrassmannBlock)) throw new TypeError(`block ${i} is a ${block.getClassName()}`);
      const u = mixerInput(inputs[i]!, await blockWeights(block), block.norm);
      const trace = await traceMixing(block, u);
      layers.push({
        layer: i,
        alpha: gatePerPosition(trace),
        geometricShare: trace.geometricShare,
        offsets: block.offsets.map((delta, o) => pairFlow(trace.z, delta, { pHat: trace.pHat[o]!, eps: block.eps })),
      });
    }
    return { kind: 'grassmann', length: ids.length, layers };
  }
  const layers: AttentionLayerView[] = [];
  for (const [i, block] of lm.blocks.entries()) {
    if (!(block instanceof TransformerBlock)) throw new TypeError(`block ${i} is a ${block.getClassName()}`);
    const u = mixerInput(inputs[i]!, await blockWeights(block), block.norm);
    layers.push({ layer: i, heads: (await traceAttention(block, u)).heads.map((h) => h.a) });
  }
  return { kind: 'transformer', length: ids.length, layers };
}

// inspectModel: run a model on token sequences and collect the geometry of every block (Grassmann) or head
// (Transformer).
import { GrassmannBlock, TransformerBlock, type LanguageModel, type ModelConfig } from '@grassflow/gpu-layers';
import { inspectAttentionLayer, type AttentionLayerReport } from './attention.js';
import { inspectGrassmannLayer, type GrassmannLayerReport } from './grassmann.js';
import { blockInputs, inspectableModel, type Mat } from './tensors.js';

/** One token sequence to inspect: its ids and a display label per token. */
export interface InspectSample {
  ids: Int32Array;
  tokens: string[];
}

/** Everything `inspect` measures; written as inspect.json. */
export interface InspectResult {
  format: 'grassflow-lm-inspect';
  formatVersion: 1;
  model: ModelConfig;
  samples: Array<{ ids: number[]; tokens: string[] }>;
  /** One entry per block of a Grassmann model. */
  grassmann?: GrassmannLayerReport[];
  /** One entry per block of a Transformer model. */
  attention?: AttentionLayerReport[];
}

/** Options of {@link inspectModel}. */
export interface InspectOptions {
  /** Largest flow steps kept per layer and offset (default 5). */
  top?: number;
}

/**
 * Run `model` (no dropout) on each sample, capture every block's input, and trace each block's mixer with the
 * model's own code (grassmannMixingTrace, attentionTrace), measuring in float64 from its intermediates: gates,
 * pair angles and areas and the flow of pair-planes on Gr(2, r) for a Grassmann model; attention entropy and
 * antiparallel weight per head for a Transformer. Each layer also reports a consistency check (check.maxAbsDiff):
 * p̂ against grassmann-math's plucker of the same z, or the attention weight on future keys.
 */
export async function inspectModel(
  model: LanguageModel,
  samples: readonly InspectSample[],
  options: InspectOptions = {},
): Promise<InspectResult> {
  const lm = inspectableModel(model);
  const top = options.top ?? 5;
  if (samples.length === 0) throw new RangeError('inspect: no samples to inspect');
  for (const [k, s] of samples.entries()) {
    if (s.ids.length === 0) throw new RangeError(`inspect: sample ${k} has no tokens`);
    if (s.ids.length > lm.config.maxLen)
      throw new RangeError(
        `inspect: sample ${k} has ${s.ids.length} tokens, more than the model's maxLen ${lm.config.maxLen}`,
      );
    if (s.tokens.length !== s.ids.length)
      throw new RangeError(`inspect: sample ${k} has ${s.ids.length} ids but ${s.tokens.length} token labels`);
  }
  // Values are read with `await data()` (dataSync throws on webgpu under Node), one sample and layer at a time.
  const inputs: Mat[][] = []; // [sample][layer]
  for (const s of samples) inputs.push(await blockInputs(lm, s.ids));
  const perLayer = (i: number) => inputs.map((x) => x[i] as Mat);
  const result: InspectResult = {
    format: 'grassflow-lm-inspect',
    formatVersion: 1,
    model: lm.config,
    samples: samples.map((s) => ({ ids: Array.from(s.ids), tokens: [...s.tokens] })),
  };
  if (lm.config.kind === 'grassmann') {
    const layers: GrassmannLayerReport[] = [];
    for (const [i, block] of lm.blocks.entries()) {
      if (!(block instanceof GrassmannBlock))
        throw new TypeError(`inspect: block ${i} of a Grassmann model is a ${block.getClassName()}`);
      const tokens = samples.map((s) => s.tokens);
      layers.push(await inspectGrassmannLayer(block, i, perLayer(i), tokens, top));
    }
    result.grassmann = layers;
  } else {
    const layers: AttentionLayerReport[] = [];
    for (const [i, block] of lm.blocks.entries()) {
      if (!(block instanceof TransformerBlock))
        throw new TypeError(`inspect: block ${i} of a Transformer model is a ${block.getClassName()}`);
      layers.push(await inspectAttentionLayer(block, i, perLayer(i)));
    }
    result.attention = layers;
  }
  return result;
}

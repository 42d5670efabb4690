// The Transformer SNLI head (paper-notes §3): 2 self-attention layers over token features, linear classifier.
import * as tf from '@tensorflow/tfjs-core';
import { feedForward, linear, postNormResidual } from '@grassflow/gpu-layers';
import { maskedSelfAttention, type MaskedAttentionWeights } from './masked-attention.js';
import { headLayerParams, maskedMeanPool, PairHead, type HeadLayerParams } from './pair-features.js';
import type { ParamStore } from '@grassflow/training';

/**
 * Configuration of {@link TransformerHead}; the same width, FFN and dropout as the Grassmann head, so the two compare.
 */
export interface TransformerHeadConfig {
  kind: 'transformer';
  /** D: width of the backbone features. */
  inputDim: number;
  /** d: model width (256, as the Grassmann head). */
  dModel: number;
  /** Attention heads (4, as the Grassmann head's mixing heads). */
  nHeads: number;
  /** Self-attention layers (paper 2). */
  nLayers: number;
  /** Feed-forward width (512, as the Grassmann head). */
  dFF: number;
  dropout: number;
}

/** The paper's Transformer head over features of width `inputDim`. */
export function transformerHeadConfig(inputDim: number): TransformerHeadConfig {
  return { kind: 'transformer', inputDim, dModel: 256, nHeads: 4, nLayers: 2, dFF: 512, dropout: 0.1 };
}

/** Analytic parameter count of a {@link TransformerHead}. */
export function countTransformerHead(c: TransformerHeadConfig): number {
  const d = c.dModel;
  // qkv, proj, LN1, FFN, LN2
  const perLayer = d * 3 * d + 3 * d + (d * d + d) + 2 * d + (d * c.dFF + c.dFF + c.dFF * d + d) + 2 * d;
  return c.inputDim * d + d + c.nLayers * perLayer + (4 * d * 3 + 3); // in_proj, layers, linear classifier
}

function validate(c: TransformerHeadConfig): void {
  for (const k of ['inputDim', 'dModel', 'nHeads', 'nLayers', 'dFF'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 1)
      throw new RangeError(`transformer head: ${k} must be an integer >= 1, got ${c[k]}`);
  }
  if (c.dModel % c.nHeads !== 0)
    throw new RangeError(`transformer head: dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}`);
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw new RangeError(`transformer head: dropout must be in [0, 1), got ${c.dropout}`);
}

/**
 * Siamese Transformer head. Per sentence (x [B, T, D], mask [B, T]):
 *   h = x·W_in + b_in                                                   [B, T, d]
 *   per layer (post-LN): h = LN1(h + Dropout(Attn(h, mask))); h = LN2(h + Dropout(FFN(h)))
 *   u = masked mean of h over real tokens                                [B, d]
 * Pair: logits = W_cls [u; v; |u−v|; u⊙v] + b_cls                       [B, 3]
 */
export class TransformerHead extends PairHead {
  readonly config: TransformerHeadConfig;
  readonly params: ParamStore;
  private readonly inProj: { w: tf.Variable; b: tf.Variable };
  private readonly layers: Array<HeadLayerParams & { attn: MaskedAttentionWeights }> = [];
  private readonly cls: { w: tf.Variable; b: tf.Variable };

  constructor(config: TransformerHeadConfig, params: ParamStore) {
    super();
    validate(config);
    this.config = { ...config };
    this.params = params;
    const { inputDim: D, dModel: d, dFF } = config;
    this.inProj = params.linear('head.in_proj', D, d);
    for (let i = 0; i < config.nLayers; i++) {
      const qkv = params.linear(`head.layers.${i}.attn.qkv`, d, 3 * d); // [d, 3d]: columns q | k | v
      const proj = params.linear(`head.layers.${i}.attn.proj`, d, d);
      this.layers.push({
        attn: {
          wQkv: qkv.w as tf.Tensor2D,
          bQkv: qkv.b as tf.Tensor1D,
          wProj: proj.w as tf.Tensor2D,
          bProj: proj.b as tf.Tensor1D,
        },
        ...headLayerParams(params, i, d, dFF),
      });
    }
    this.cls = params.linear('head.classifier', 4 * d, 3);
  }

  /** Sentence vectors u [B, d] from features x [B, T, D] and a 0/1 float mask [B, T]. */
  encode(x: tf.Tensor3D, mask: tf.Tensor2D, training: boolean): tf.Tensor2D {
    const p = this.config.dropout;
    return tf.tidy(() => {
      let h = linear(x, this.inProj.w, this.inProj.b) as tf.Tensor3D; // [B, T, d]
      for (const L of this.layers) {
        // the language models' post-LN sublayers (gpu-layers' block parts), with masked attention as the mixer
        const attend = (u: tf.Tensor3D) => maskedSelfAttention(u, mask, L.attn, this.config.nHeads);
        h = postNormResidual(h, attend, { gamma: L.ln1.g, beta: L.ln1.b }, p, training);
        h = postNormResidual(h, (u) => feedForward(u, L), { gamma: L.ln2.g, beta: L.ln2.b }, p, training); // [B, T, d]
      }
      return maskedMeanPool(h, mask);
    });
  }

  /** Logits [B, 3] of the pair features [B, 4d]: one linear layer. */
  protected classify(features: tf.Tensor2D): tf.Tensor2D {
    return linear(features, this.cls.w, this.cls.b) as tf.Tensor2D; // [B, 3]
  }
}

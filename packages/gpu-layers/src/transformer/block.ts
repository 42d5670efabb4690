// TransformerBlock: causal multi-head attention (DPA or EA) + feed-forward, post-LN or pre-LN.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import { causalAttention, type AttentionWeights, type EaEps } from './attention.js';
import { ResidualBlock, type ResidualBlockArgs } from '../layers/residual-block.js';
import {
  fieldDefault,
  layerOptions,
  nonDefaultOptions,
  optionNames,
  type ModelOptions,
  type ModelOptionValue,
} from '../config/model-options.js';

/** The options a Transformer block reads (dropoutAt, eaEps: MODEL_OPTIONS'), in stored order. */
export const TRANSFORMER_BLOCK_OPTIONS = optionNames('transformer', ['block']);

/** Arguments of a Transformer block; dropoutAt, eaEps (absent: their defaults) as in MODEL_OPTIONS. */
export interface TransformerBlockArgs extends ResidualBlockArgs, ModelOptions<'transformer', 'block'> {
  nHeads: number;
  /** 'dpa' (default) softmax attention or 'ea' expressive attention. */
  attention?: 'dpa' | 'ea';
  /** EA's ε; default the model config's (MODEL_FIELDS.eps). */
  eps?: number;
}

/**
 * post: x = LN1(h + Dropout(Attn(h))) (dropoutAt 'branch', the default) or x = Dropout(LN1(h + Attn(h))) ('stream',
 *       the Grassmann paper's placement); out = LN2(x + Dropout(FFN(x))).
 * pre:  x = h + Dropout(Attn(LN1(h))); out = x + Dropout(FFN(LN2(x))) (dropoutAt has no effect).
 * [B, L, d] → [B, L, d].
 * EA's weights a = e/(Σe + ε) or, with eaEps 'relative', e/(Σe + ε·max e + ε²) (see attention.ts).
 */
export class TransformerBlock extends ResidualBlock {
  static readonly className = 'TransformerBlock';
  readonly nHeads: number;
  readonly attention: 'dpa' | 'ea';
  readonly eps: number;
  readonly eaEps: EaEps;
  readonly dropoutAt: ModelOptionValue<'dropoutAt'>;

  constructor(args: TransformerBlockArgs) {
    super(TransformerBlock.className, args);
    const { nHeads, attention = 'dpa', eps = fieldDefault('eps') } = args;
    if (!Number.isInteger(nHeads) || nHeads < 1)
      throw new RangeError(`TransformerBlock: nHeads must be an integer >= 1, got ${nHeads}`);
    if (attention !== 'dpa' && attention !== 'ea')
      throw new RangeError(`TransformerBlock: attention must be 'dpa' or 'ea', got ${JSON.stringify(attention)}`);
    if (!(eps > 0)) throw new RangeError(`TransformerBlock: eps must be > 0, got ${eps}`);
    const { eaEps, dropoutAt } = layerOptions(TransformerBlock.className, 'transformer', ['block'], args);
    this.eaEps = eaEps;
    this.dropoutAt = dropoutAt;
    this.nHeads = nHeads;
    this.attention = attention;
    this.eps = eps;
  }

  override build(inputShape: Shape | Shape[]): void {
    this.buildFor(inputShape, (d) => {
      if (d % this.nHeads !== 0)
        throw new RangeError(`${this.name}: width d = ${d} is not divisible by nHeads = ${this.nHeads}`);
      return this.blockSpecs(d, [
        { name: 'mixer.qkv.weight', shape: [d, 3 * d], init: 'normal', linear: true },
        { name: 'mixer.qkv.bias', shape: [3 * d], init: 'zeros', linear: false },
        { name: 'mixer.proj.weight', shape: [d, d], init: 'normal', linear: true },
        { name: 'mixer.proj.bias', shape: [d], init: 'zeros', linear: false },
      ]);
    });
  }

  /** The attention weights (the variables themselves, internal [in, out] layout: do not dispose). */
  mixerWeights(): AttentionWeights {
    return {
      wQkv: this.param('mixer.qkv.weight'),
      bQkv: this.param('mixer.qkv.bias'),
      wProj: this.param('mixer.proj.weight'),
      bProj: this.param('mixer.proj.bias'),
    };
  }

  protected mix(h: tf.Tensor3D): tf.Tensor3D {
    const { nHeads, attention: kind, eps, eaEps } = this;
    return causalAttention(h, this.mixerWeights(), { nHeads, kind, eps, eaEps });
  }

  /** Post-LN first half: branch x = LN1(h + Dropout(Attn(h))), stream x = Dropout(LN1(h + Attn(h))). */
  protected postMix(h: tf.Tensor3D, training: boolean, mix: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D {
    if (this.dropoutAt === 'branch') return this.postNorm(h, mix, 'ln1', training);
    return this.drop(this.ln(tf.add(h, mix(h)), 'ln1'), training);
  }

  protected mixerConfig(): tf.serialization.ConfigDict {
    const config: tf.serialization.ConfigDict = { nHeads: this.nHeads, attention: this.attention, eps: this.eps };
    return { ...config, ...nonDefaultOptions(this, TRANSFORMER_BLOCK_OPTIONS, 'transformer') }; // omitted at defaults, as before
  }
}
tf.serialization.registerClass(TransformerBlock);

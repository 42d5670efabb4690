// GrassmannBlock: causal Grassmann mixing + feed-forward, post-LN (paper) or pre-LN.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import { grassmannMixing, type GrassmannGate, type GrassmannMixingWeights } from './mixing.js';
import { layerNormSpecs } from '../layers/block-parts.js';
import { mixingConfig, mixingParamSpecs, mixingSettings, mixingWeights, type MixingSettings } from './mixing-layer.js';
import { ResidualBlock, type ResidualBlockArgs } from '../layers/residual-block.js';
import {
  layerOptions,
  nonDefaultOptions,
  optionNames,
  type ModelOptions,
  type ModelOptionValue,
} from '../config/model-options.js';

/** The options a Grassmann block reads (gate, dropoutAt, mixerNorm: MODEL_OPTIONS'), in stored order. */
export const GRASSMANN_BLOCK_OPTIONS = optionNames('grassmann', ['block', 'mixer']);

type BlockOptions = ModelOptions<'grassmann', 'block' | 'mixer'>;

/** Arguments of a Grassmann block; gate, dropoutAt, mixerNorm (absent: their defaults) as in MODEL_OPTIONS. */
export interface GrassmannBlockArgs extends ResidualBlockArgs, BlockOptions {
  r: number;
  offsets: number[];
  /** Plücker ε; default the model config's (MODEL_FIELDS.eps). */
  eps?: number;
  /** Default 'causal'. */
  direction?: 'causal' | 'bidirectional';
}

/**
 * With m = Mix(u) the mixer's output (blend α⊙h + (1−α)⊙g, or additive α⊙g; LN_mix(m) with mixerNorm):
 * post, blend:     stream ĥ = Dropout(LN1(m));       branch ĥ = LN1(α⊙h + Dropout((1−α)⊙g)) (then LN_mix if set);
 * post, additive:  stream ĥ = Dropout(LN1(h + m));   branch ĥ = LN1(h + Dropout(m));
 * post, then:      out = LN2(ĥ + Dropout(FFN(ĥ))).
 * pre (any gate):  x = h + Dropout(m(LN1(h))); out = x + Dropout(FFN(LN2(x))) (dropoutAt has no effect).
 * FFN(x) = fc2(GELU(fc1(x))) with the exact erf GELU; LayerNorm ε = 1e-5; dropout only when training.
 * [B, L, d] → [B, L, d].
 */
export class GrassmannBlock extends ResidualBlock implements MixingSettings {
  static readonly className = 'GrassmannBlock';
  readonly r: number;
  readonly offsets: number[];
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';
  readonly gate: GrassmannGate;
  readonly dropoutAt: ModelOptionValue<'dropoutAt'>;
  readonly mixerNorm: boolean;

  constructor(args: GrassmannBlockArgs) {
    super(GrassmannBlock.className, args);
    ({
      r: this.r,
      offsets: this.offsets,
      eps: this.eps,
      direction: this.direction,
      gate: this.gate,
      mixerNorm: this.mixerNorm,
    } = mixingSettings(GrassmannBlock.className, args));
    this.dropoutAt = layerOptions(GrassmannBlock.className, 'grassmann', ['block'], args).dropoutAt;
  }

  override build(inputShape: Shape | Shape[]): void {
    // mixer.ln last: the other tensors keep their order
    const extra = (d: number) => (this.mixerNorm ? layerNormSpecs('mixer.ln', d) : []);
    this.buildFor(inputShape, (d) => this.blockSpecs(d, mixingParamSpecs('mixer.', d, this.r), extra(d)));
  }

  /** The mixer's weights (the variables themselves, internal [in, out] layout: do not dispose); ln with mixerNorm. */
  mixerWeights(): GrassmannMixingWeights {
    return mixingWeights((name) => this.param(name), 'mixer.', this.mixerNorm);
  }

  /** The post-LN blend with dropoutAt 'branch' drops (1−α)⊙g inside the mixer, before the skip path is added. */
  protected mix(h: tf.Tensor3D, training: boolean): tf.Tensor3D {
    const inMixer = training && this.norm === 'post' && this.dropoutAt === 'branch' && this.gate === 'blend';
    return grassmannMixing(h, this.mixerWeights(), {
      offsets: this.offsets,
      eps: this.eps,
      direction: this.direction,
      gate: this.gate,
      ...(inMixer && this.dropoutRate > 0 ? { branchDropout: this.dropoutRate } : {}),
    });
  }

  /** Post-LN first half: blend Dropout?(LN1(m)); additive Dropout?(LN1(h + Dropout?(m))) (see the class). */
  protected postMix(h: tf.Tensor3D, training: boolean, mix: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D {
    const stream = this.dropoutAt === 'stream';
    if (this.gate === 'blend') {
      const x = this.ln(mix(h), 'ln1');
      return stream ? this.drop(x, training) : x; // branch: dropped inside the mixer (see mix)
    }
    const m = mix(h);
    const x = this.ln(tf.add(h, stream ? m : this.drop(m, training)), 'ln1');
    return stream ? this.drop(x, training) : x;
  }

  protected mixerConfig(): tf.serialization.ConfigDict {
    // omitted at their defaults, so the configs of blocks without them stay as they were
    return { ...mixingConfig(this), ...nonDefaultOptions(this, GRASSMANN_BLOCK_OPTIONS, 'grassmann') };
  }
}
tf.serialization.registerClass(GrassmannBlock);

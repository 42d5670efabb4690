// GrassmannBlock: causal Grassmann mixing + feed-forward, post-LN (paper) or pre-LN.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import { grassmannMixing, type GrassmannMixingWeights } from './mixing.js';
import { ffnSpecs, layerNormSpecs } from '../shared/block-parts.js';
import { checkMixingArgs, mixingParamSpecs } from './mixing-layer.js';
import { ResidualBlock, type ResidualBlockArgs } from '../shared/residual-block.js';

export interface GrassmannBlockArgs extends ResidualBlockArgs {
  r: number;
  offsets: number[];
  /** Plücker ε; default 1e-6. */
  eps?: number;
  /** Default 'causal'. */
  direction?: 'causal' | 'bidirectional';
}

/**
 * post: ĥ = Dropout(LN1(Mix(h))); out = LN2(ĥ + Dropout(FFN(ĥ))) (the gate is the skip path of mixing).
 * pre:  x = h + Dropout(Mix(LN1(h))); out = x + Dropout(FFN(LN2(x))).
 * FFN(x) = fc2(GELU(fc1(x))) with the exact erf GELU; LayerNorm ε = 1e-5. [B, L, d] → [B, L, d].
 */
export class GrassmannBlock extends ResidualBlock {
  static readonly className = 'GrassmannBlock';
  readonly r: number;
  readonly offsets: number[];
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';

  constructor(args: GrassmannBlockArgs) {
    super(GrassmannBlock.className, args);
    const { r, offsets, eps = 1e-6, direction = 'causal' } = args;
    checkMixingArgs(GrassmannBlock.className, r, offsets, eps, direction);
    this.r = r;
    this.offsets = [...offsets];
    this.eps = eps;
    this.direction = direction;
  }

  override build(inputShape: Shape | Shape[]): void {
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape;
    const d = shape[2];
    if (typeof d !== 'number') throw new RangeError(`${this.name}: the last input axis (d) must be known`);
    this.createParams([
      ...mixingParamSpecs('mixer.', d, this.r),
      ...layerNormSpecs('ln1', d),
      ...layerNormSpecs('ln2', d),
      ...ffnSpecs(d, this.dFF),
    ]);
    this.built = true;
  }

  /** The mixer's weights (the variables themselves, internal [in, out] layout: do not dispose). */
  mixerWeights(): GrassmannMixingWeights {
    return {
      wRed: this.param('mixer.w_red.weight'),
      bRed: this.param('mixer.w_red.bias'),
      wPlu: this.param('mixer.w_plu.weight'),
      bPlu: this.param('mixer.w_plu.bias'),
      wGate: this.param('mixer.w_gate.weight'),
      bGate: this.param('mixer.w_gate.bias'),
    };
  }

  protected mix(h: tf.Tensor3D): tf.Tensor3D {
    return grassmannMixing(h, this.mixerWeights(), { offsets: this.offsets, eps: this.eps, direction: this.direction });
  }

  /** Post-LN (paper): x = Dropout(LN1(Mix(h))); the gate inside Mix is the skip path. */
  protected postMix(h: tf.Tensor3D, training: boolean, mix: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D {
    return this.drop(this.ln(mix(h), 'ln1'), training);
  }

  protected mixerConfig(): tf.serialization.ConfigDict {
    return { r: this.r, offsets: [...this.offsets], eps: this.eps, direction: this.direction };
  }
}
tf.serialization.registerClass(GrassmannBlock);

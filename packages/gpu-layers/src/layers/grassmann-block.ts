// GrassmannBlock: causal Grassmann mixing + feed-forward, post-LN (paper) or pre-LN.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import type { Kwargs } from '@tensorflow/tfjs-layers/dist/types';
import { grassmannMixing } from '../grassmann-mixing.js';
import { dropout, gelu, layerNorm, linear } from '../ops.js';
import { ParamLayer, type ParamLayerArgs } from '../param-layer.js';
import { checkBlockArgs, ffnSpecs, layerNormSpecs, LN_EPS } from './block-parts.js';
import { checkMixingArgs, mixingParamSpecs } from './causal-grassmann-mixing.js';

export interface GrassmannBlockArgs extends ParamLayerArgs {
  r: number;
  offsets: number[];
  dFF: number;
  /** 'post' (default, paper) or 'pre'. */
  norm?: 'post' | 'pre';
  /** Dropout rate; default 0.1. */
  dropout?: number;
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
export class GrassmannBlock extends ParamLayer {
  static readonly className = 'GrassmannBlock';
  readonly r: number;
  readonly offsets: number[];
  readonly dFF: number;
  readonly norm: 'post' | 'pre';
  readonly dropoutRate: number;
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';

  constructor(args: GrassmannBlockArgs) {
    super(args);
    const { r, offsets, dFF, norm = 'post', dropout: rate = 0.1, eps = 1e-6, direction = 'causal' } = args;
    checkMixingArgs(GrassmannBlock.className, r, offsets, eps, direction);
    checkBlockArgs(GrassmannBlock.className, dFF, norm, rate);
    this.r = r;
    this.offsets = [...offsets];
    this.dFF = dFF;
    this.norm = norm;
    this.dropoutRate = rate;
    this.eps = eps;
    this.direction = direction;
    this.inputSpec = [{ ndim: 3 }];
  }

  override build(inputShape: Shape | Shape[]): void {
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape;
    const d = shape[2];
    if (typeof d !== 'number') throw new RangeError(`${this.name}: the last input axis (d) must be known`);
    this.createParams([...mixingParamSpecs('mixer.', d, this.r), ...layerNormSpecs('ln1', d), ...layerNormSpecs('ln2', d), ...ffnSpecs(d, this.dFF)]);
    this.built = true;
  }

  override computeOutputShape(inputShape: Shape | Shape[]): Shape | Shape[] {
    return inputShape;
  }

  private mix(h: tf.Tensor3D): tf.Tensor3D {
    return grassmannMixing(
      h,
      {
        wRed: this.param('mixer.w_red.weight'),
        bRed: this.param('mixer.w_red.bias'),
        wPlu: this.param('mixer.w_plu.weight'),
        bPlu: this.param('mixer.w_plu.bias'),
        wGate: this.param('mixer.w_gate.weight'),
        bGate: this.param('mixer.w_gate.bias'),
      },
      { offsets: this.offsets, eps: this.eps, direction: this.direction },
    );
  }

  private ln(x: tf.Tensor, which: 'ln1' | 'ln2'): tf.Tensor3D {
    return layerNorm(x, this.param(`${which}.weight`), this.param(`${which}.bias`), LN_EPS) as tf.Tensor3D;
  }

  private ffn(x: tf.Tensor3D): tf.Tensor3D {
    const hidden = gelu(linear(x, this.param('ffn.fc1.weight'), this.param('ffn.fc1.bias'))); // [B, L, d_ff]
    return linear(hidden, this.param('ffn.fc2.weight'), this.param('ffn.fc2.bias')) as tf.Tensor3D; // [B, L, d]
  }

  override call(inputs: tf.Tensor | tf.Tensor[], kwargs: Kwargs): tf.Tensor {
    const training = kwargs['training'] === true;
    const p = this.dropoutRate;
    return tf.tidy(() => {
      const h = (Array.isArray(inputs) ? inputs[0] : inputs) as tf.Tensor3D; // [B, L, d]
      if (this.norm === 'post') {
        const hHat = dropout(this.ln(this.mix(h), 'ln1'), p, training);
        return this.ln(tf.add(hHat, dropout(this.ffn(hHat), p, training)), 'ln2');
      }
      const x = tf.add(h, dropout(this.mix(this.ln(h, 'ln1')), p, training)) as tf.Tensor3D;
      return tf.add(x, dropout(this.ffn(this.ln(x, 'ln2')), p, training));
    });
  }

  /** tfjs-layers' JSON round trip turns the key dFF into d_ff and back into dFf: accept both. */
  static override fromConfig<T extends tf.serialization.Serializable>(
    cls: tf.serialization.SerializableConstructor<T>,
    config: tf.serialization.ConfigDict,
  ): T {
    const { dFf, ...rest } = config;
    return new cls({ ...rest, dFF: rest['dFF'] ?? dFf });
  }

  override getConfig(): tf.serialization.ConfigDict {
    const config: tf.serialization.ConfigDict = {
      r: this.r,
      offsets: [...this.offsets],
      dFF: this.dFF,
      norm: this.norm,
      dropout: this.dropoutRate,
      eps: this.eps,
      direction: this.direction,
    };
    if (this.seed !== undefined) config['seed'] = this.seed;
    return { ...super.getConfig(), ...config };
  }
}
tf.serialization.registerClass(GrassmannBlock);

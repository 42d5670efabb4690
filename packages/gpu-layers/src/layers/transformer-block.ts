// TransformerBlock: causal multi-head attention (DPA or EA) + feed-forward, post-LN or pre-LN.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import type { Kwargs } from '@tensorflow/tfjs-layers/dist/types';
import { causalAttention } from '../attention.js';
import { dropout, gelu, layerNorm, linear } from '../ops.js';
import { ParamLayer, type ParamLayerArgs } from '../param-layer.js';
import { checkBlockArgs, ffnSpecs, layerNormSpecs, LN_EPS } from './block-parts.js';

export interface TransformerBlockArgs extends ParamLayerArgs {
  nHeads: number;
  dFF: number;
  /** 'dpa' (default) softmax attention or 'ea' expressive attention. */
  attention?: 'dpa' | 'ea';
  /** 'post' (default) or 'pre'. */
  norm?: 'post' | 'pre';
  /** Default 0.1. */
  dropout?: number;
  /** EA's ε; default 1e-6. */
  eps?: number;
}

/**
 * post: x = LN1(h + Dropout(Attn(h))); out = LN2(x + Dropout(FFN(x))).
 * pre:  x = h + Dropout(Attn(LN1(h))); out = x + Dropout(FFN(LN2(x))). [B, L, d] → [B, L, d].
 */
export class TransformerBlock extends ParamLayer {
  static readonly className = 'TransformerBlock';
  readonly nHeads: number;
  readonly dFF: number;
  readonly attention: 'dpa' | 'ea';
  readonly norm: 'post' | 'pre';
  readonly dropoutRate: number;
  readonly eps: number;

  constructor(args: TransformerBlockArgs) {
    super(args);
    const { nHeads, dFF, attention = 'dpa', norm = 'post', dropout: rate = 0.1, eps = 1e-6 } = args;
    if (!Number.isInteger(nHeads) || nHeads < 1) throw new RangeError(`TransformerBlock: nHeads must be an integer >= 1, got ${nHeads}`);
    if (attention !== 'dpa' && attention !== 'ea') throw new RangeError(`TransformerBlock: attention must be 'dpa' or 'ea', got ${JSON.stringify(attention)}`);
    if (!(eps > 0)) throw new RangeError(`TransformerBlock: eps must be > 0, got ${eps}`);
    checkBlockArgs(TransformerBlock.className, dFF, norm, rate);
    this.nHeads = nHeads;
    this.dFF = dFF;
    this.attention = attention;
    this.norm = norm;
    this.dropoutRate = rate;
    this.eps = eps;
    this.inputSpec = [{ ndim: 3 }];
  }

  override build(inputShape: Shape | Shape[]): void {
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape;
    const d = shape[2];
    if (typeof d !== 'number') throw new RangeError(`${this.name}: the last input axis (d) must be known`);
    if (d % this.nHeads !== 0) throw new RangeError(`${this.name}: width d = ${d} is not divisible by nHeads = ${this.nHeads}`);
    this.createParams([
      { name: 'mixer.qkv.weight', shape: [d, 3 * d], init: 'normal', linear: true },
      { name: 'mixer.qkv.bias', shape: [3 * d], init: 'zeros', linear: false },
      { name: 'mixer.proj.weight', shape: [d, d], init: 'normal', linear: true },
      { name: 'mixer.proj.bias', shape: [d], init: 'zeros', linear: false },
      ...layerNormSpecs('ln1', d),
      ...layerNormSpecs('ln2', d),
      ...ffnSpecs(d, this.dFF),
    ]);
    this.built = true;
  }

  override computeOutputShape(inputShape: Shape | Shape[]): Shape | Shape[] {
    return inputShape;
  }

  private attend(h: tf.Tensor3D): tf.Tensor3D {
    return causalAttention(
      h,
      {
        wQkv: this.param('mixer.qkv.weight'),
        bQkv: this.param('mixer.qkv.bias'),
        wProj: this.param('mixer.proj.weight'),
        bProj: this.param('mixer.proj.bias'),
      },
      { nHeads: this.nHeads, kind: this.attention, eps: this.eps },
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
        const x = this.ln(tf.add(h, dropout(this.attend(h), p, training)), 'ln1');
        return this.ln(tf.add(x, dropout(this.ffn(x), p, training)), 'ln2');
      }
      const x = tf.add(h, dropout(this.attend(this.ln(h, 'ln1')), p, training)) as tf.Tensor3D;
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
      nHeads: this.nHeads,
      dFF: this.dFF,
      attention: this.attention,
      norm: this.norm,
      dropout: this.dropoutRate,
      eps: this.eps,
    };
    if (this.seed !== undefined) config['seed'] = this.seed;
    return { ...super.getConfig(), ...config };
  }
}
tf.serialization.registerClass(TransformerBlock);

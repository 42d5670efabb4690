// ResidualBlock: what GrassmannBlock and TransformerBlock share — LayerNorms, the FFN, the residual wiring.
import * as tf from '@tensorflow/tfjs-core';
import type { Shape } from '@tensorflow/tfjs-layers';
import { dropout, layerNorm } from '../ops/ops.js';
import { ParamLayer, type LayerKwargs, type ParamLayerArgs, type ParamSpec } from './param-layer.js';
import { checkBlockArgs, feedForward, ffnSpecs, layerNormSpecs, LN_EPS, postNormResidual } from './block-parts.js';

export interface ResidualBlockArgs extends ParamLayerArgs {
  dFF: number;
  /** 'post' (default, paper) or 'pre'. */
  norm?: 'post' | 'pre';
  /** Dropout rate; default 0.1. */
  dropout?: number;
}

/**
 * A mixer (Grassmann or attention) followed by FFN(x) = fc2(GELU(fc1(x))), exact erf GELU, LayerNorm ε = 1e-5:
 * pre:  x = h + Dropout(Mix(LN1(h))); out = x + Dropout(FFN(LN2(x))).
 * post: x = postMix(h) (the subclass's post-LN first half); out = LN2(x + Dropout(FFN(x))). [B, L, d] → [B, L, d].
 */
export abstract class ResidualBlock extends ParamLayer {
  readonly dFF: number;
  readonly norm: 'post' | 'pre';
  readonly dropoutRate: number;

  constructor(who: string, args: ResidualBlockArgs) {
    super(args);
    const { dFF, norm = 'post', dropout: rate = 0.1 } = args;
    checkBlockArgs(who, dFF, norm, rate);
    this.dFF = dFF;
    this.norm = norm;
    this.dropoutRate = rate;
    this.inputSpec = [{ ndim: 3 }];
  }

  /** The token mixer: [B, L, d] → [B, L, d] (`training`: a mixer may drop parts of its own output). */
  protected abstract mix(h: tf.Tensor3D, training: boolean): tf.Tensor3D;

  /** First half of the post-LN block, from the input h to x, with `mix` as the token mixer. */
  protected abstract postMix(h: tf.Tensor3D, training: boolean, mix: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D;

  /** The block's parameters at width d: the mixer's `mixer`, ln1, ln2, the FFN, then `extra` (last: names keep order). */
  protected blockSpecs(d: number, mixer: ParamSpec[], extra: ParamSpec[] = []): ParamSpec[] {
    return [...mixer, ...layerNormSpecs('ln1', d), ...layerNormSpecs('ln2', d), ...ffnSpecs(d, this.dFF), ...extra];
  }

  protected ln(x: tf.Tensor, which: 'ln1' | 'ln2'): tf.Tensor3D {
    return layerNorm(x, this.param(`${which}.weight`), this.param(`${which}.bias`), LN_EPS) as tf.Tensor3D;
  }

  protected ffn(x: tf.Tensor3D): tf.Tensor3D {
    const fc = (k: 1 | 2) => ({ w: this.param(`ffn.fc${k}.weight`), b: this.param(`ffn.fc${k}.bias`) });
    return feedForward(x, { fc1: fc(1), fc2: fc(2) }) as tf.Tensor3D; // [B, L, d]
  }

  /** LN_{which}(x + Dropout(f(x))): the post-LN sublayer with this block's LayerNorm `which`. */
  protected postNorm(x: tf.Tensor3D, f: (u: tf.Tensor3D) => tf.Tensor, which: 'ln1' | 'ln2', training: boolean) {
    const norm = { gamma: this.param(`${which}.weight`), beta: this.param(`${which}.bias`) };
    return postNormResidual(x, f, norm, this.dropoutRate, training);
  }

  protected drop(x: tf.Tensor3D, training: boolean): tf.Tensor3D {
    return dropout<tf.Tensor3D>(x, this.dropoutRate, training);
  }

  override computeOutputShape(inputShape: Shape | Shape[]): Shape | Shape[] {
    return inputShape;
  }

  /** The block's wiring (norms, FFN, residuals, dropout) around a token mixer: [B, L, d] → [B, L, d]. */
  private wire(h: tf.Tensor3D, training: boolean, mix: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D {
    if (this.norm === 'post') {
      const x = this.postMix(h, training, mix);
      return this.postNorm(x, (u) => this.ffn(u), 'ln2', training);
    }
    const x = tf.add<tf.Tensor3D>(h, this.drop(mix(this.ln(h, 'ln1')), training));
    return tf.add(x, this.drop(this.ffn(this.ln(x, 'ln2')), training));
  }

  override call(inputs: tf.Tensor | tf.Tensor[], kwargs: LayerKwargs): tf.Tensor {
    const training = kwargs['training'] === true;
    return tf.tidy(() => {
      const h = (Array.isArray(inputs) ? inputs[0] : inputs) as tf.Tensor3D; // [B, L, d]
      return this.wire(h, training, (u) => this.mix(u, training));
    });
  }

  /**
   * Inference pass of this block (no dropout) with `mixer` in place of its own token mixer — same weights,
   * norms, FFN and residual wiring. Incremental decoding passes a mixer that carries state across calls;
   * `mixer` receives the mixer's input (LN1(h) for pre-LN, h for post-LN) [B, T, d] and returns [B, T, d].
   * The caller disposes the result.
   */
  applyWithMixer(h: tf.Tensor3D, mixer: (u: tf.Tensor3D) => tf.Tensor3D): tf.Tensor3D {
    if (!this.built) throw new Error(`${this.name}: build the block (apply it once) before applyWithMixer`);
    return tf.tidy(() => this.wire(h, false, mixer));
  }

  /** tfjs-layers' JSON round trip turns the key dFF into d_ff and back into dFf: accept both. */
  static override fromConfig<T extends tf.serialization.Serializable>(
    cls: tf.serialization.SerializableConstructor<T>,
    config: tf.serialization.ConfigDict,
  ): T {
    const { dFf, ...rest } = config;
    return new cls({ ...rest, dFF: rest['dFF'] ?? dFf });
  }

  /** This block's own config fields, merged over the shared ones by getConfig. */
  protected abstract mixerConfig(): tf.serialization.ConfigDict;

  override getConfig(): tf.serialization.ConfigDict {
    const config: tf.serialization.ConfigDict = {
      ...this.mixerConfig(),
      dFF: this.dFF,
      norm: this.norm,
      dropout: this.dropoutRate,
    };
    if (this.seed !== undefined) config['seed'] = this.seed;
    return { ...super.getConfig(), ...config };
  }
}

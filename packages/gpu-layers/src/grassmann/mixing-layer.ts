// CausalGrassmannMixing: the attention-free mixing layer as a tfjs-layers Layer.
import * as tf from '@tensorflow/tfjs-core';

import type { Shape } from '@tensorflow/tfjs-layers';
import { pluckerDim } from './plucker.js';
import { grassmannMixing, type GrassmannGate, type GrassmannMixingWeights } from './mixing.js';
import { layerNormSpecs } from '../layers/block-parts.js';
import { ParamLayer, type LayerKwargs, type ParamLayerArgs, type ParamSpec } from '../layers/param-layer.js';
import {
  fieldDefault,
  layerOptions,
  nonDefaultOptions,
  optionNames,
  type ModelOptions,
} from '../config/model-options.js';

/** The options a mixing layer reads (MODEL_OPTIONS' 'mixer' fields: gate, mixerNorm), in stored order. */
const MIXER_OPTIONS = optionNames('grassmann', ['mixer']);

/** Arguments of a mixing layer; `gate` and `mixerNorm` (absent: their defaults) as in MODEL_OPTIONS. */
export interface CausalGrassmannMixingArgs extends ParamLayerArgs, ModelOptions<'grassmann', 'mixer'> {
  /** Reduced width r ≥ 2 (the paper uses 32). */
  r: number;
  /** Offsets Δ ≥ 1 paired with each position. */
  offsets: number[];
  /** ε of the Plücker normalisation; default the model config's (MODEL_FIELDS.eps). */
  eps?: number;
  /** 'causal' (default): pairs (z_{t−Δ}, z_t) only. 'bidirectional' also pairs (z_t, z_{t+Δ}): encoders only. */
  direction?: 'causal' | 'bidirectional';
}

/** What a mixing layer and a Grassmann block hold of the mixing: checked, at their defaults where absent. */
export interface MixingSettings {
  readonly r: number;
  readonly offsets: number[];
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';
  readonly gate: GrassmannGate;
  readonly mixerNorm: boolean;
}

/** The settings of a mixing layer from its arguments (a RangeError naming `who` when one is wrong). */
export function mixingSettings(who: string, args: CausalGrassmannMixingArgs): MixingSettings {
  const { r, offsets, eps = fieldDefault('eps'), direction = 'causal' } = args;
  checkMixingArgs(who, r, offsets, eps, direction);
  const { gate, mixerNorm } = layerOptions(who, 'grassmann', ['mixer'], args);
  return { r, offsets: [...offsets], eps, direction, gate, mixerNorm };
}

/** The stored config of the mixing (gate and mixerNorm are added by the caller, at non-defaults only). */
export function mixingConfig(s: MixingSettings): tf.serialization.ConfigDict {
  return { r: s.r, offsets: [...s.offsets], eps: s.eps, direction: s.direction };
}

/** Check r, offsets, eps, direction of a mixing layer; `who` names the caller in the error. */
function checkMixingArgs(who: string, r: unknown, offsets: unknown, eps: unknown, direction: unknown): void {
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 2)
    throw new RangeError(`${who}: r must be an integer >= 2, got ${String(r)}`);
  if (!Array.isArray(offsets) || offsets.length === 0 || !offsets.every((o) => Number.isInteger(o) && o >= 1)) {
    throw new RangeError(`${who}: offsets must be a non-empty array of integers >= 1, got ${JSON.stringify(offsets)}`);
  }
  if (typeof eps !== 'number' || !(eps > 0)) throw new RangeError(`${who}: eps must be > 0, got ${String(eps)}`);
  if (direction !== 'causal' && direction !== 'bidirectional') {
    throw new RangeError(`${who}: direction must be 'causal' or 'bidirectional', got ${JSON.stringify(direction)}`);
  }
}

/**
 * Parameter specs of a mixing layer of width d, under `prefix` (e.g. 'mixer.'); with mixerNorm also the LayerNorm
 * `${prefix}ln.weight` / `${prefix}ln.bias` (last, so that models without it keep their tensor names and order).
 */
export function mixingParamSpecs(prefix: string, d: number, r: number, mixerNorm = false): ParamSpec[] {
  const C = pluckerDim(r);
  return [
    { name: `${prefix}w_red.weight`, shape: [d, r], init: 'normal', linear: true },
    { name: `${prefix}w_red.bias`, shape: [r], init: 'zeros', linear: false },
    { name: `${prefix}w_plu.weight`, shape: [C, d], init: 'normal', linear: true },
    { name: `${prefix}w_plu.bias`, shape: [d], init: 'zeros', linear: false },
    { name: `${prefix}w_gate.weight`, shape: [2 * d, d], init: 'normal', linear: true },
    { name: `${prefix}w_gate.bias`, shape: [d], init: 'zeros', linear: false },
    ...(mixerNorm ? layerNormSpecs(`${prefix}ln`, d) : []),
  ];
}

/** The mixing weights of a layer built from {@link mixingParamSpecs} under `prefix`, read with `param`. */
export function mixingWeights(
  param: (name: string) => tf.Tensor,
  prefix: string,
  mixerNorm: boolean,
): GrassmannMixingWeights {
  const p = <T extends tf.Tensor>(name: string) => param(`${prefix}${name}`) as T;
  return {
    wRed: p('w_red.weight'),
    bRed: p('w_red.bias'),
    wPlu: p('w_plu.weight'),
    bPlu: p('w_plu.bias'),
    wGate: p('w_gate.weight'),
    bGate: p('w_gate.bias'),
    ...(mixerNorm ? { ln: { weight: p('ln.weight'), bias: p('ln.bias') } } : {}),
  };
}

/**
 * Causal Grassmann mixing layer: [B, L, d] → [B, L, d],
 * h_mix = α⊙h + (1−α)⊙g with g the mean over offsets of W_plu·p̂(z_{t−Δ}, z_t) + b_plu (see grassmannMixing);
 * gate 'additive' gives α⊙g instead, mixerNorm LN_mix of either.
 */
export class CausalGrassmannMixing extends ParamLayer implements MixingSettings {
  static readonly className = 'CausalGrassmannMixing';
  readonly r: number;
  readonly offsets: number[];
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';
  readonly gate: GrassmannGate;
  readonly mixerNorm: boolean;

  constructor(args: CausalGrassmannMixingArgs) {
    super(args);
    ({
      r: this.r,
      offsets: this.offsets,
      eps: this.eps,
      direction: this.direction,
      gate: this.gate,
      mixerNorm: this.mixerNorm,
    } = mixingSettings(CausalGrassmannMixing.className, args));
    this.inputSpec = [{ ndim: 3 }];
  }

  override build(inputShape: Shape | Shape[]): void {
    this.buildFor(inputShape, (d) => mixingParamSpecs('', d, this.r, this.mixerNorm));
  }

  override computeOutputShape(inputShape: Shape | Shape[]): Shape | Shape[] {
    return inputShape;
  }

  override call(inputs: tf.Tensor | tf.Tensor[], _kwargs: LayerKwargs): tf.Tensor {
    return tf.tidy(() => {
      const h = (Array.isArray(inputs) ? inputs[0] : inputs) as tf.Tensor3D; // [B, L, d]
      return grassmannMixing(
        h,
        mixingWeights((name) => this.param(name), '', this.mixerNorm),
        {
          offsets: this.offsets,
          eps: this.eps,
          direction: this.direction,
          gate: this.gate,
        },
      );
    });
  }

  override getConfig(): tf.serialization.ConfigDict {
    // gate and mixerNorm omitted at their defaults, so the configs of layers without them stay as they were
    const config: tf.serialization.ConfigDict = {
      ...mixingConfig(this),
      ...nonDefaultOptions(this, MIXER_OPTIONS, 'grassmann'),
    };
    if (this.seed !== undefined) config['seed'] = this.seed;
    return { ...super.getConfig(), ...config };
  }
}
tf.serialization.registerClass(CausalGrassmannMixing);

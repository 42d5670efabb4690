// CausalGrassmannMixing: the attention-free mixing layer as a tfjs-layers Layer.
import * as tf from '@tensorflow/tfjs-core';

import type { Shape } from '@tensorflow/tfjs-layers';
import { pluckerDim } from '../shared/config.js';
import { grassmannMixing } from './mixing.js';
import { ParamLayer, type LayerKwargs, type ParamLayerArgs, type ParamSpec } from '../shared/param-layer.js';

export interface CausalGrassmannMixingArgs extends ParamLayerArgs {
  /** Reduced width r ≥ 2 (the paper uses 32). */
  r: number;
  /** Offsets Δ ≥ 1 paired with each position. */
  offsets: number[];
  /** ε of the Plücker normalisation; default 1e-6. */
  eps?: number;
  /** 'causal' (default): pairs (z_{t−Δ}, z_t) only. 'bidirectional' also pairs (z_t, z_{t+Δ}): encoders only. */
  direction?: 'causal' | 'bidirectional';
}

/** Check r, offsets, eps, direction of a mixing layer; `who` names the caller in the error. */
export function checkMixingArgs(who: string, r: unknown, offsets: unknown, eps: unknown, direction: unknown): void {
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

/** Parameter specs of a mixing layer of width d, under `prefix` (e.g. 'mixer.'). */
export function mixingParamSpecs(prefix: string, d: number, r: number): ParamSpec[] {
  const C = pluckerDim(r);
  return [
    { name: `${prefix}w_red.weight`, shape: [d, r], init: 'normal', linear: true },
    { name: `${prefix}w_red.bias`, shape: [r], init: 'zeros', linear: false },
    { name: `${prefix}w_plu.weight`, shape: [C, d], init: 'normal', linear: true },
    { name: `${prefix}w_plu.bias`, shape: [d], init: 'zeros', linear: false },
    { name: `${prefix}w_gate.weight`, shape: [2 * d, d], init: 'normal', linear: true },
    { name: `${prefix}w_gate.bias`, shape: [d], init: 'zeros', linear: false },
  ];
}

/**
 * Causal Grassmann mixing layer: [B, L, d] → [B, L, d],
 * h_mix = α⊙h + (1−α)⊙g with g the mean over offsets of W_plu·p̂(z_{t−Δ}, z_t) + b_plu (see grassmannMixing).
 */
export class CausalGrassmannMixing extends ParamLayer {
  static readonly className = 'CausalGrassmannMixing';
  readonly r: number;
  readonly offsets: number[];
  readonly eps: number;
  readonly direction: 'causal' | 'bidirectional';

  constructor(args: CausalGrassmannMixingArgs) {
    super(args);
    const { r, offsets, eps = 1e-6, direction = 'causal' } = args;
    checkMixingArgs(CausalGrassmannMixing.className, r, offsets, eps, direction);
    this.r = r;
    this.offsets = [...offsets];
    this.eps = eps;
    this.direction = direction;
    this.inputSpec = [{ ndim: 3 }];
  }

  override build(inputShape: Shape | Shape[]): void {
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape;
    const d = shape[2];
    if (typeof d !== 'number')
      throw new RangeError(`${this.name}: the last input axis (d) must be known, got shape [${shape.join(', ')}]`);
    this.createParams(mixingParamSpecs('', d, this.r));
    this.built = true;
  }

  override computeOutputShape(inputShape: Shape | Shape[]): Shape | Shape[] {
    return inputShape;
  }

  override call(inputs: tf.Tensor | tf.Tensor[], _kwargs: LayerKwargs): tf.Tensor {
    return tf.tidy(() => {
      const h = (Array.isArray(inputs) ? inputs[0] : inputs) as tf.Tensor3D; // [B, L, d]
      return grassmannMixing(
        h,
        {
          wRed: this.param('w_red.weight'),
          bRed: this.param('w_red.bias'),
          wPlu: this.param('w_plu.weight'),
          bPlu: this.param('w_plu.bias'),
          wGate: this.param('w_gate.weight'),
          bGate: this.param('w_gate.bias'),
        },
        { offsets: this.offsets, eps: this.eps, direction: this.direction },
      );
    });
  }

  override getConfig(): tf.serialization.ConfigDict {
    const config: tf.serialization.ConfigDict = {
      r: this.r,
      offsets: [...this.offsets],
      eps: this.eps,
      direction: this.direction,
    };
    if (this.seed !== undefined) config['seed'] = this.seed;
    return { ...super.getConfig(), ...config };
  }
}
tf.serialization.registerClass(CausalGrassmannMixing);

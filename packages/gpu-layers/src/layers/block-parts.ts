// Pieces shared by the blocks (the language models' and the SNLI heads'): the feed-forward network and the post-LN
// residual sublayer, LayerNorm and feed-forward parameter specs, block arguments.
import type * as tf from '@tensorflow/tfjs-core';
import { add } from '@tensorflow/tfjs-core';
import { dropout, gelu, layerNorm, linear } from '../ops/ops.js';
import type { ParamSpec } from './param-layer.js';

/** LayerNorm ε of every block (paper-notes §1). */
export const LN_EPS = 1e-5;

/** A linear map's weight (internal [in, out]) and bias. */
export interface LinearWeights {
  w: tf.Tensor;
  b: tf.Tensor;
}

/** The two linear maps of FFN(x) = fc2(GELU(fc1(x))). */
export interface FeedForwardWeights {
  fc1: LinearWeights;
  fc2: LinearWeights;
}

/** FFN(x) = fc2(GELU(fc1(x))), exact erf GELU: [.., d] → [.., d_ff] → [.., d]. */
export function feedForward(x: tf.Tensor, { fc1, fc2 }: FeedForwardWeights): tf.Tensor {
  return linear(gelu(linear(x, fc1.w, fc1.b)), fc2.w, fc2.b);
}

/**
 * The post-LN residual sublayer of every block, LN(x + Dropout(f(x))) with LayerNorm γ, β (ε = 1e-5), f a token
 * mixer or the FFN: [.., d] → [.., d].
 */
export function postNormResidual<T extends tf.Tensor>(
  x: T,
  f: (x: T) => tf.Tensor,
  norm: { gamma: tf.Tensor; beta: tf.Tensor },
  rate: number,
  training: boolean,
): T {
  return layerNorm(add(x, dropout(f(x), rate, training)), norm.gamma, norm.beta, LN_EPS) as T;
}

/** `{prefix}.weight` (ones) and `{prefix}.bias` (zeros) of a LayerNorm of width d. */
export function layerNormSpecs(prefix: string, d: number): ParamSpec[] {
  return [
    { name: `${prefix}.weight`, shape: [d], init: 'ones', linear: false },
    { name: `${prefix}.bias`, shape: [d], init: 'zeros', linear: false },
  ];
}

/** ffn.fc1 [d → d_ff] and ffn.fc2 [d_ff → d]. */
export function ffnSpecs(d: number, dFF: number): ParamSpec[] {
  return [
    { name: 'ffn.fc1.weight', shape: [d, dFF], init: 'normal', linear: true },
    { name: 'ffn.fc1.bias', shape: [dFF], init: 'zeros', linear: false },
    { name: 'ffn.fc2.weight', shape: [dFF, d], init: 'normal', linear: true },
    { name: 'ffn.fc2.bias', shape: [d], init: 'zeros', linear: false },
  ];
}

/** Check the arguments every block shares; `who` names the block in the error. */
export function checkBlockArgs(who: string, dFF: unknown, norm: unknown, dropout: unknown): void {
  if (typeof dFF !== 'number' || !Number.isInteger(dFF) || dFF < 1)
    throw new RangeError(`${who}: dFF must be an integer >= 1, got ${String(dFF)}`);
  if (norm !== 'post' && norm !== 'pre')
    throw new RangeError(`${who}: norm must be 'post' or 'pre', got ${JSON.stringify(norm)}`);
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    throw new RangeError(`${who}: dropout must be in [0, 1), got ${String(dropout)}`);
  }
}

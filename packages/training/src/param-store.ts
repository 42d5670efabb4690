// Named, seeded trainable parameters for models written directly against tfjs-core (e.g. snli-head's heads):
// PyTorch-style names, internal [in, out] layouts. Such a model is Checkpointable through namedParams().
import * as tf from '@tensorflow/tfjs-core';
import { INIT_STD, tfjsSeed } from '@grassflow/gpu-layers';
import type { NamedVariable } from './adamw.js';

/** How a parameter starts: N(0, 0.02) for linear and embedding weights, zeros for biases, ones for LayerNorm gains. */
export type Init = 'normal' | 'zeros' | 'ones';

let created = 0; // tfjs variable names must be unique per process

/**
 * A flat, ordered collection of named tf.Variables. Parameter k draws its N(0, 0.02) values from seed + k,
 * so a seed fixes every initial weight.
 */
export class ParamStore {
  private readonly vars = new Map<string, tf.Variable>();

  constructor(readonly seed: number) {}

  /** Create parameter `name` with `shape` and `init`; names must be unique. */
  add(name: string, shape: readonly number[], init: Init): tf.Variable {
    if (this.vars.has(name)) throw new Error(`parameter '${name}' is created twice`);
    const k = this.vars.size;
    const value = tf.tidy(() =>
      init === 'normal'
        ? tf.randomNormal([...shape], 0, INIT_STD, 'float32', tfjsSeed(this.seed, k))
        : init === 'zeros'
          ? tf.zeros([...shape])
          : tf.ones([...shape]),
    );
    const v = tf.variable(value, true, `params_${created++}/${name}`);
    value.dispose();
    this.vars.set(name, v);
    return v;
  }

  /** A linear layer's weight [in, out] (name.weight) and bias [out] (name.bias). */
  linear(name: string, inDim: number, outDim: number): { w: tf.Variable; b: tf.Variable } {
    return { w: this.add(`${name}.weight`, [inDim, outDim], 'normal'), b: this.add(`${name}.bias`, [outDim], 'zeros') };
  }

  /** A LayerNorm's gain γ (name.weight, ones) and shift β (name.bias, zeros), both [d]. */
  layerNorm(name: string, d: number): { g: tf.Variable; b: tf.Variable } {
    return { g: this.add(`${name}.weight`, [d], 'ones'), b: this.add(`${name}.bias`, [d], 'zeros') };
  }

  /** Every parameter with its name, in creation order. */
  named(): NamedVariable[] {
    return [...this.vars].map(([name, variable]) => ({ name, variable }));
  }

  /** Total number of scalars. */
  count(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  dispose(): void {
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
  }
}

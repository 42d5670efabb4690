// Base class for this package's tfjs-layers layers: named parameters with PyTorch names and layouts.
import type * as tf from '@tensorflow/tfjs-core';
import { initializers, layers, type LayerVariable, type Shape } from '@tensorflow/tfjs-layers';

/** How a parameter is initialised: N(0, 0.02) for linear and embedding weights, zeros/ones otherwise. */
export type ParamInit = 'normal' | 'zeros' | 'ones';

/** One parameter: PyTorch name (relative to the layer), internal shape, init, and whether it is a linear weight. */
export interface ParamSpec {
  /** PyTorch name, e.g. 'mixer.w_red.weight'. */
  name: string;
  /** Internal shape; linear weights are stored [in, out] (PyTorch: [out, in]). */
  shape: number[];
  init: ParamInit;
  /** True for nn.Linear weights: transposed between the internal and the PyTorch layout. */
  linear: boolean;
}

/** A parameter of a built layer, as reported to models' stateDict/loadStateDict. */
export interface NamedParam {
  name: string;
  variable: tf.Variable;
  linear: boolean;
}

/** Standard deviation of the N(0, σ) init of linear and embedding weights. */
export const INIT_STD = 0.02;

/** tfjs-layers' LayerArgs (name, trainable, …), from the public Layer constructor rather than a private dist/ path. */
export type LayerArgs = NonNullable<ConstructorParameters<typeof layers.Layer>[0]>;

/** tfjs-layers' Kwargs of Layer.call (e.g. { training }), from the public class. */
export type LayerKwargs = Parameters<layers.Layer['call']>[1];

export interface ParamLayerArgs extends LayerArgs {
  /** Seed of the N(0, 0.02) init; parameter k of the layer uses seed + k. Unseeded if absent. */
  seed?: number;
}

/**
 * The tfjs seed of stream `offset` of a user seed: seed + offset, except that 0 becomes 0.5. tfjs's random ops use
 * `seed ? seed : Math.random()` and hash `seed.toString()`, so a seed of 0 would silently mean "unseeded"; 0.5 is a
 * seed no integer gives, so every integer seed, 0 included, stays reproducible and distinct. Unseeded if absent.
 */
export function tfjsSeed(seed: number | undefined, offset = 0): number | undefined {
  if (seed === undefined) return undefined;
  const s = seed + offset;
  return s === 0 ? 0.5 : s;
}

/** A tfjs-layers Layer whose weights are declared as {@link ParamSpec}s and read by PyTorch name. */
export abstract class ParamLayer extends layers.Layer {
  readonly seed: number | undefined;
  private readonly params = new Map<string, { variable: LayerVariable; linear: boolean }>();

  constructor(args: ParamLayerArgs) {
    super(args);
    if (args.seed !== undefined && !Number.isInteger(args.seed)) {
      throw new TypeError(`${this.getClassName()}: seed must be an integer, got ${args.seed}`);
    }
    this.seed = args.seed;
  }

  /** build() of a layer over [B, L, d]: create the parameters `specs(d)` (d must be known), and mark it built. */
  protected buildFor(inputShape: Shape | Shape[], specs: (d: number) => ParamSpec[]): void {
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape;
    const d = shape[2];
    if (typeof d !== 'number') {
      throw new RangeError(`${this.name}: the last input axis (d) must be known, got shape [${shape.join(', ')}]`);
    }
    this.createParams(specs(d));
    this.built = true;
  }

  /** Create the layer's parameters (call from build()). */
  protected createParams(specs: ParamSpec[]): void {
    specs.forEach((spec, k) => {
      const init =
        spec.init === 'normal'
          ? initializers.randomNormal({
              mean: 0,
              stddev: INIT_STD,
              seed: tfjsSeed(this.seed, k),
            })
          : spec.init === 'zeros'
            ? initializers.zeros()
            : initializers.ones();
      const variable = this.addWeight(spec.name, spec.shape, 'float32', init);
      this.params.set(spec.name, { variable, linear: spec.linear });
    });
  }

  /** The current value of a parameter by its PyTorch name (internal layout). */
  protected param<T extends tf.Tensor>(name: string): T {
    const p = this.params.get(name);
    if (p === undefined) throw new Error(`${this.name}: parameter '${name}' does not exist (is the layer built?)`);
    return p.variable.read() as T;
  }

  /** Parameters with their PyTorch names (relative to this layer), in creation order. */
  namedParams(): NamedParam[] {
    return [...this.params].map(([name, p]) => ({
      name,
      variable: p.variable.read() as tf.Variable,
      linear: p.linear,
    }));
  }
}

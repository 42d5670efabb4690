// One optimisation step: loss → gradients (tf.variableGrads) → clip by global norm → AdamW.
import * as tf from '@tensorflow/tfjs-core';
import type { AdamW } from './adamw.js';
import { clipByGlobalNorm } from './clip.js';
import { withSeededRandom } from './rng.js';

/** A loss or gradient that is NaN or ±Infinity: the update is not applied. */
export class NonFiniteLossError extends Error {
  constructor(
    readonly step: number,
    readonly loss: number,
    readonly gradNorm: number,
  ) {
    super(
      `non-finite ${Number.isFinite(loss) ? `gradient norm (${gradNorm})` : `loss (${loss})`} at step ${step}: the update was not applied and ` +
        `the last checkpoint was left as it was. Lower the learning rate (--lr), raise the warmup (--warmup) or keep clipping on, then resume from the last checkpoint.`,
    );
    this.name = 'NonFiniteLossError';
  }
}

/** Options of {@link trainStep}. */
export interface TrainStepOptions {
  /** Learning rate of this update. */
  lr: number;
  /** Clip the global gradient norm to this value (default 1.0; Infinity: no clipping). */
  clipNorm?: number;
  /** Seed of this step's dropout masks (see withSeededRandom); unseeded if absent. */
  randomSeed?: number;
  /** Step index used in error messages. */
  step?: number;
}

/** What one step measured. */
export interface TrainStepResult {
  /** Loss before the update. */
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

/**
 * θ ← AdamW(θ, clip(∇θ loss(θ)), lr). The loss function runs under `tf.variableGrads` for the
 * optimizer's parameters (with Math.random seeded by `randomSeed`, so dropout is reproducible).
 * Throws {@link NonFiniteLossError} before touching any parameter when the loss or gradient norm is not finite.
 */
export function trainStep(lossFn: () => tf.Scalar, optimizer: AdamW, opts: TrainStepOptions): TrainStepResult {
  const variables = optimizer.params.map((p) => p.variable);
  const run = (): { value: tf.Scalar; grads: tf.NamedTensorMap } => tf.variableGrads(lossFn, variables);
  const { value, grads } = opts.randomSeed === undefined ? run() : withSeededRandom(opts.randomSeed, run);
  const clipped = clipByGlobalNorm(grads, opts.clipNorm ?? 1.0);
  try {
    const loss = value.dataSync()[0] as number;
    const gradNorm = clipped.norm.dataSync()[0] as number;
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) throw new NonFiniteLossError(opts.step ?? optimizer.step, loss, gradNorm);
    optimizer.apply(clipped.grads, opts.lr);
    return { loss, gradNorm };
  } finally {
    tf.dispose([value, clipped.norm, ...Object.values(grads), ...Object.values(clipped.grads)]);
  }
}

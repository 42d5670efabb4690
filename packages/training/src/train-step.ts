// One optimisation step: loss → gradients (tf.variableGrads) → global norm → AdamW of the clipped gradients.
import * as tf from '@tensorflow/tfjs-core';
import type { AdamW } from './adamw.js';
import { clipFactor, globalNorm } from './clip.js';
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

/** A step's loss: one function, or one per micro-batch of equal size (gradient accumulation). */
export type StepLoss = (() => tf.Scalar) | readonly (() => tf.Scalar)[];

/**
 * Loss and gradients of one step. With K micro-batch losses ℓ_k of equal size, the step's loss is
 * ℓ = (1/K) Σ_k ℓ_k and ∇ℓ = (1/K) Σ_k ∇ℓ_k — the mean over all K·B tokens, as if one batch — but only one
 * micro-batch's activations are held at a time. Micro-batch k's dropout uses seed randomSeed + k.
 */
function lossAndGrads(
  loss: StepLoss,
  variables: tf.Variable[],
  randomSeed: number | undefined,
): { value: tf.Scalar; grads: tf.NamedTensorMap } {
  const fns = typeof loss === 'function' ? [loss] : loss;
  if (fns.length === 0) throw new RangeError('trainStep needs at least one loss function');
  let value: tf.Scalar | null = null;
  let grads: tf.NamedTensorMap | null = null;
  fns.forEach((fn, k) => {
    const run = (): { value: tf.Scalar; grads: tf.NamedTensorMap } => tf.variableGrads(fn, variables);
    const r = randomSeed === undefined ? run() : withSeededRandom((randomSeed + k) >>> 0, run);
    if (value === null || grads === null) {
      value = r.value;
      grads = r.grads;
      return;
    }
    const prev: tf.NamedTensorMap = grads;
    const sum = tf.add<tf.Scalar>(value, r.value);
    tf.dispose([value, r.value]);
    value = sum;
    grads = Object.fromEntries(
      Object.keys(prev).map((n) => [n, tf.add(prev[n] as tf.Tensor, r.grads[n] as tf.Tensor)]),
    );
    tf.dispose([...Object.values(prev), ...Object.values(r.grads)]);
  });
  const v = value as unknown as tf.Scalar;
  const g = grads as unknown as tf.NamedTensorMap;
  if (fns.length === 1) return { value: v, grads: g };
  const inv = 1 / fns.length;
  const out = {
    value: tf.mul<tf.Scalar>(v, inv),
    grads: Object.fromEntries(Object.entries(g).map(([n, t]) => [n, tf.mul(t, inv)])),
  };
  tf.dispose([v, ...Object.values(g)]);
  return out;
}

/**
 * θ ← AdamW(θ, clip(∇θ loss(θ)), lr). The loss function runs under `tf.variableGrads` for the
 * optimizer's parameters (with Math.random seeded by `randomSeed`, so dropout is reproducible).
 * Given one loss function per micro-batch (equal sizes), the gradients are accumulated over them first:
 * the same update as one batch of all of them (up to float rounding), in the memory of one micro-batch.
 * Rejects with {@link NonFiniteLossError} before touching any parameter when the loss or gradient norm is not finite.
 * Loss and norm are read with `await data()`, so a GPU backend is not blocked by a synchronous readback.
 */
export async function trainStep(lossFn: StepLoss, optimizer: AdamW, opts: TrainStepOptions): Promise<TrainStepResult> {
  const variables = optimizer.params.map((p) => p.variable);
  const clipNorm = opts.clipNorm ?? 1.0;
  clipFactor(0, clipNorm); // rejects a bad clipNorm before the step's work
  const { value, grads } = lossAndGrads(lossFn, variables, opts.randomSeed);
  try {
    // one asynchronous read of both scalars (no blocking device-to-host sync): the finiteness check needs them
    const [lossData, gradNorm] = await Promise.all([value.data(), globalNorm(grads)]);
    const loss = lossData[0] as number;
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm))
      throw new NonFiniteLossError(opts.step ?? optimizer.step, loss, gradNorm);
    // clipping's factor is applied inside AdamW's pass over the gradients (no scaled copy of them)
    optimizer.apply(grads, opts.lr, { gradScale: clipFactor(gradNorm, clipNorm) });
    return { loss, gradNorm };
  } finally {
    tf.dispose([value, ...Object.values(grads)]);
  }
}

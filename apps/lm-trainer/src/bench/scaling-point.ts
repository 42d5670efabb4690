// One point of `bench --scaling`: median forward+backward time of a stack of blocks at one (model, L).
import * as tf from '@tensorflow/tfjs-core';
import { GrassmannBlock, TransformerBlock, type ParamLayer } from '@grassflow/gpu-layers';
import type { ModelKind } from '../shared/model-options.js';

/** The block stack every model kind is timed with (the same d, d_ff, depth for all three). */
export interface ScalingStack {
  /** Width d. */
  d: number;
  /** Feed-forward width d_ff. */
  dFF: number;
  /** Blocks in the stack. */
  layers: number;
  /** Grassmann: reduced width r. */
  r: number;
  /** Grassmann: offsets, one per layer, cycling (as `train --offsets`). */
  offsets: readonly number[];
  /** Attention heads H. */
  nHeads: number;
}

/** What one point measured. */
export interface PointTiming {
  model: ModelKind;
  L: number;
  /** Sequences per batch: tokens / L. */
  B: number;
  /** Seconds of each timed forward+backward pass (after the warm-up). */
  seconds: number[];
  /** Median of `seconds`. */
  medianSeconds: number;
  /** Median time per token in microseconds: median / (B·L) · 1e6. */
  usPerToken: number;
  /** Peak resident memory of the process that ran the point (MB). */
  peakRssMb: number;
}

/** The blocks of one model kind: post-LN (paper), dropout 0 (no random masks in the timing), seeded init. */
export function buildStack(model: ModelKind, s: ScalingStack): ParamLayer[] {
  return Array.from({ length: s.layers }, (_, i) => {
    const common = { dFF: s.dFF, dropout: 0, seed: 1000 * i, name: `block${i}` };
    const block: ParamLayer =
      model === 'grassmann'
        ? new GrassmannBlock({ ...common, r: s.r, offsets: [s.offsets[i % s.offsets.length] as number] })
        : new TransformerBlock({ ...common, nHeads: s.nHeads, attention: model === 'transformer-ea' ? 'ea' : 'dpa' });
    tf.tidy(() => block.apply(tf.zeros([1, 1, s.d])) as tf.Tensor); // builds the weights
    return block;
  });
}

/** Median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * Time forward+backward of the stack on x [B, L, d] (B = tokens / L): loss = Σ out ⊙ c with a fixed
 * random cotangent c [B, L, d], gradients of every block weight and of x (as below an embedding).
 * One warm-up pass, then `repeats` timed passes; each waits for every gradient's values.
 */
export async function timePoint(
  model: ModelKind,
  L: number,
  tokens: number,
  repeats: number,
  stack: ScalingStack,
): Promise<PointTiming> {
  if (tokens % L !== 0) throw new RangeError(`tokens per batch (${tokens}) must be a multiple of L (${L})`);
  const B = tokens / L;
  const blocks = buildStack(model, stack);
  const x = tf.variable(tf.randomNormal([B, L, stack.d], 0, 1, 'float32', 1), true, `x_${model}_${L}`); // [B, L, d]
  const cot = tf.randomNormal([B, L, stack.d], 0, 1, 'float32', 2); // [B, L, d]
  const vars = [x, ...blocks.flatMap((b) => b.namedParams().map((p) => p.variable))];
  const seconds: number[] = [];
  try {
    for (let k = 0; k <= repeats; k++) {
      const t0 = performance.now();
      const { value, grads } = tf.variableGrads(() => {
        let h = x as tf.Tensor as tf.Tensor3D;
        for (const b of blocks) h = b.apply(h, { training: true }) as tf.Tensor3D; // [B, L, d]
        return tf.sum<tf.Scalar>(tf.mul(h, cot));
      }, vars);
      await Promise.all([value.data(), ...Object.values(grads).map((g) => g.data())]);
      const t1 = performance.now();
      tf.dispose([value, ...Object.values(grads)]);
      if (k > 0) seconds.push((t1 - t0) / 1000); // k = 0: warm-up (kernel set-up, heap growth)
    }
  } finally {
    tf.dispose([x, cot]);
    for (const b of blocks) b.dispose();
  }
  const medianSeconds = median(seconds);
  return {
    model,
    L,
    B,
    seconds,
    medianSeconds,
    usPerToken: (medianSeconds / tokens) * 1e6,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

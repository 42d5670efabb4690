// The SNLI training task for @grassflow/training's loop, and accuracy / confusion-matrix evaluation.
import * as tf from '@tensorflow/tfjs-core';
import type { EncodedSnli } from '@grassflow/datasets';
import { epochPermutation } from '@grassflow/prng';
import { crossEntropy, type CheckpointJson } from '@grassflow/gpu-layers';
import type { TrainTask } from '@grassflow/training';
import { batchLength, labelTensor, sentenceInput, tokenCount, type FeatureTable } from '../data/batches.js';
import type { SnliModel } from '../model/snli-model.js';

/** Where the data order stands: epoch and batches of it already handed out. */
export interface SnliDataState {
  epoch: number;
  position: number;
}

/** Accuracy over a set of pairs and the 3×3 confusion matrix (rows gold, columns predicted; E, N, C). */
export interface EvalResult {
  count: number;
  accuracy: number;
  /** Mean cross-entropy (nats). */
  loss: number;
  confusion: number[][];
}

/** Multiple T is rounded up to: the Grassmann head's window, else 8 as well (shapes repeat, fewer distinct kernels). */
export function lengthMultiple(model: SnliModel): number {
  return model.config.head.kind === 'grassmann' ? model.config.head.window : 8;
}

/**
 * Evaluate `model` on all pairs of `data` (no dropout): pairs are visited sorted by length in batches of
 * `batch`, so little padding is computed; each pair is counted exactly once.
 */
export async function evaluatePairs(
  model: SnliModel,
  data: EncodedSnli,
  features: FeatureTable | null,
  batch = 128,
): Promise<EvalResult> {
  const n = data.count;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) =>
      Math.max(data.premiseLength[a] as number, data.hypothesisLength[a] as number) -
        Math.max(data.premiseLength[b] as number, data.hypothesisLength[b] as number) || a - b,
  );
  const confusion = [
    [0, 0, 0],
    [0, 0, 0],
    [0, 0, 0],
  ];
  let nll = 0;
  const mult = lengthMultiple(model);
  for (let i = 0; i < n; i += batch) {
    const rows = order.slice(i, i + batch);
    const T = batchLength(data, rows, mult);
    const [pred, lossSum] = tf.tidy((): [tf.Tensor1D, tf.Tensor] => {
      const logits = model.forward(
        sentenceInput(data, 'premise', { rows, T }, features),
        sentenceInput(data, 'hypothesis', { rows, T }, features),
        false,
      ); // [B, 3]
      const y = labelTensor(data, rows);
      const lossSum = tf.mul(crossEntropy(logits, y), rows.length);
      return [tf.argMax<tf.Tensor1D>(logits, 1), lossSum];
    });
    const [p, s] = await Promise.all([pred.data(), lossSum.data()]); // asynchronous readback, one per batch
    nll += s[0] as number;
    tf.dispose([pred, lossSum]);
    rows.forEach((r, b) => {
      const row = confusion[data.labels[r] as number] as number[];
      const k = p[b] as number;
      row[k] = (row[k] as number) + 1;
    });
  }
  const correct = confusion[0]![0]! + confusion[1]![1]! + confusion[2]![2]!;
  return { count: n, accuracy: correct / n, loss: nll / n, confusion };
}

/**
 * Batches of one bucket: this many batches' worth of shuffled pairs are sorted by length before being cut into batches.
 */
export const BUCKET_BATCHES = 50;

/**
 * The batches of one epoch (full batches only), a pure function of (n, batch, seed, epoch) so a resume rebuilds them:
 * pairs in epochPermutation(n, seed, epoch) order; each run of {@link BUCKET_BATCHES}·B pairs is sorted by length and
 * cut into batches (little padding); the batches are then visited in epochPermutation(batches, seed + 1, epoch) order.
 */
export function epochBatches(data: EncodedSnli, batch: number, seed: number, epoch: number): number[][] {
  const order = epochPermutation(data.count, seed, epoch);
  const nb = Math.floor(data.count / batch);
  const len = (r: number): number => Math.max(data.premiseLength[r] as number, data.hypothesisLength[r] as number);
  const batches: number[][] = [];
  for (let b0 = 0; b0 < nb; b0 += BUCKET_BATCHES) {
    const k = Math.min(BUCKET_BATCHES, nb - b0);
    const rows = Array.from(order.slice(b0 * batch, (b0 + k) * batch), Number).sort((a, b) => len(a) - len(b) || a - b);
    for (let j = 0; j < k; j++) batches.push(rows.slice(j * batch, (j + 1) * batch));
  }
  const visit = epochPermutation(nb, (seed + 1) >>> 0, epoch);
  return Array.from(visit, (i) => batches[i] as number[]);
}

/** Training batches in a seeded, length-bucketed per-epoch order and validation on a fixed set of pairs. */
export class SnliTrainTask implements TrainTask {
  private state: SnliDataState = { epoch: 0, position: 0 };
  private batches: number[][];
  readonly batchesPerEpoch: number;

  constructor(
    private readonly model: SnliModel,
    private readonly train: EncodedSnli,
    private readonly valid: EncodedSnli,
    private readonly opts: {
      batch: number;
      seed: number;
      trainFeatures: FeatureTable | null;
      validFeatures: FeatureTable | null;
    },
  ) {
    this.batchesPerEpoch = Math.floor(train.count / opts.batch);
    if (this.batchesPerEpoch < 1)
      throw new RangeError(`batch ${opts.batch} is larger than the ${train.count} training pairs`);
    this.batches = epochBatches(train, opts.batch, opts.seed, 0);
  }

  /** Continue from a checkpoint's data state. */
  restore(s: SnliDataState): void {
    if (
      !Number.isInteger(s.epoch) ||
      !Number.isInteger(s.position) ||
      s.position < 0 ||
      s.position > this.batchesPerEpoch
    ) {
      throw new Error(`invalid data state in the checkpoint: ${JSON.stringify(s)}`);
    }
    this.state = { ...s };
    this.batches = epochBatches(this.train, this.opts.batch, this.opts.seed, s.epoch);
  }

  nextBatch(): { loss: () => tf.Scalar; tokens: number } {
    if (this.state.position >= this.batchesPerEpoch) {
      this.state = { epoch: this.state.epoch + 1, position: 0 };
      this.batches = epochBatches(this.train, this.opts.batch, this.opts.seed, this.state.epoch);
    }
    const rows = this.batches[this.state.position] as number[];
    this.state = { ...this.state, position: this.state.position + 1 };
    const T = batchLength(this.train, rows, lengthMultiple(this.model));
    const f = this.opts.trainFeatures;
    return {
      tokens: tokenCount(this.train, rows),
      loss: () => {
        const logits = this.model.forward(
          sentenceInput(this.train, 'premise', { rows, T }, f),
          sentenceInput(this.train, 'hypothesis', { rows, T }, f),
          true,
        );
        return crossEntropy(logits, labelTensor(this.train, rows));
      },
    };
  }

  dataState(): CheckpointJson {
    return { ...this.state };
  }

  async evaluate(): Promise<Record<string, number>> {
    const r = await evaluatePairs(this.model, this.valid, this.opts.validFeatures);
    return { val_loss: r.loss, val_acc: r.accuracy, val_err: 1 - r.accuracy };
  }
}

// Language modelling on token ids: training batches + loss, and perplexity over every token of a split.
import * as tf from '@tensorflow/tfjs-core';
import { LmTrainBatcher, lmEvalBatches, type LmBatcherState } from '@grassflow/datasets';
import { lmLoss, type LanguageModel } from '@grassflow/gpu-layers';
import type { EvalProgress, TrainTask } from '@grassflow/training';

/** Result of {@link evaluatePerplexity}: every target of the ids scored once. */
export interface Perplexity {
  /** Targets scored (N − 1 for N ids). */
  tokens: number;
  /** Mean NLL per target, nats. */
  nll: number;
  /** exp(nll). */
  ppl: number;
  /** Mean NLL of the targets at each position of their window, 1 … seqLen (nats): does the model use its context? */
  nllByPosition: number[];
}

/**
 * Perplexity of a model over an id sequence: PPL = exp(Σ_t nll_t / (N − 1)) over every target ids[1..N−1]
 * (lmEvalBatches: non-overlapping windows of L; the sum is taken in float64). `onProgress` is told the targets
 * scored after each batch, and the N − 1 in all.
 */
export async function evaluatePerplexity(
  model: LanguageModel,
  ids: Int32Array,
  opts: { seqLen: number; batch: number; onProgress?: EvalProgress },
): Promise<Perplexity> {
  let sum = 0;
  let count = 0;
  const posSum = new Float64Array(opts.seqLen);
  const posCount = new Float64Array(opts.seqLen);
  const total = Math.max(0, ids.length - 1);
  for (const b of lmEvalBatches(ids, { seqLen: opts.seqLen, batchSize: opts.batch })) {
    const [B, L] = b.shape;
    const nll = tf.tidy(() => {
      const x = tf.tensor2d(b.x, [B, L], 'int32');
      return model.headNll(model.hidden(x, { training: false }), b.y); // [B·L], row b·L + t
    });
    const values = await nll.data(); // asynchronous readback: no blocking sync on a GPU backend
    nll.dispose();
    for (let i = 0; i < values.length; i++) {
      if (b.mask[i] === 1) {
        const v = values[i] as number;
        sum += v;
        count += 1;
        posSum[i % L] = (posSum[i % L] as number) + v; // row b·L + t: position t of its window
        posCount[i % L] = (posCount[i % L] as number) + 1;
      }
    }
    opts.onProgress?.(count, total);
  }
  if (count === 0) throw new Error(`nothing to evaluate: ${ids.length} ids hold no target`);
  const nll = sum / count;
  const nllByPosition = Array.from(posSum, (s, t) => ((posCount[t] as number) > 0 ? s / (posCount[t] as number) : NaN));
  return { tokens: count, nll, ppl: Math.exp(nll), nllByPosition };
}

/** TrainTask for next-token prediction: shuffled contiguous chunks of the train ids (resumable order). */
export class LmTrainTask implements TrainTask {
  readonly batcher: LmTrainBatcher;

  constructor(
    private readonly model: LanguageModel,
    trainIds: Int32Array,
    private readonly validIds: Int32Array,
    private readonly opts: {
      /** L: tokens per training row. */
      seqLen: number;
      batch: number;
      seed: number;
      evalBatch?: number;
      /**
       * 'chunked' (default): the model's headLoss, never the full [B·L, V] logits (the tied head in row chunks, the
       * adaptive head by cluster); 'full': lmLoss(apply(x)). Same loss and gradients.
       */
      loss?: 'chunked' | 'full';
      /**
       * Sequences per micro-batch (a divisor of batch; default: batch): gradients accumulate over batch/microBatch
       * passes.
       */
      microBatch?: number;
    },
  ) {
    const micro = opts.microBatch ?? opts.batch;
    if (!Number.isInteger(micro) || micro < 1 || opts.batch % micro !== 0) {
      throw new RangeError(
        `micro-batch ${micro} must be a whole divisor of the batch ${opts.batch} (e.g. ${opts.batch / 2 >= 1 && opts.batch % 2 === 0 ? opts.batch / 2 : 1})`,
      );
    }
    // dropLastBatch: every step sees B full rows, so each step's loss is a mean over B·L targets.
    this.batcher = new LmTrainBatcher(trainIds, {
      seqLen: opts.seqLen,
      batchSize: opts.batch,
      seed: opts.seed,
      dropLastBatch: true,
    });
  }

  restore(state: LmBatcherState): void {
    this.batcher.restore(state);
  }

  /**
   * The next batch: its tokens, its loss function, and (with a micro-batch smaller than the batch) one loss
   * function per micro-batch for trainStep's gradient accumulation.
   */
  nextBatch(): { loss: () => tf.Scalar; tokens: number; microLosses?: Array<() => tf.Scalar> } {
    const b = this.batcher.nextBatch();
    const [B, L] = b.shape;
    const lossOf = (from: number, rows: number) => (): tf.Scalar => {
      const x = tf.tensor2d(b.x.subarray(from * L, (from + rows) * L), [rows, L], 'int32');
      const targets = b.y.subarray(from * L, (from + rows) * L); // host ids: the adaptive head sorts them by cluster
      if (this.opts.loss === 'full')
        return lmLoss(this.model.apply(x, { training: true }), tf.tensor2d(targets, [rows, L], 'int32'));
      return this.model.headLoss(this.model.hidden(x, { training: true }), targets);
    };
    const micro = Math.min(this.opts.microBatch ?? B, B);
    return {
      tokens: B * L,
      loss: lossOf(0, B),
      ...(micro < B ? { microLosses: Array.from({ length: B / micro }, (_, k) => lossOf(k * micro, micro)) } : {}),
    };
  }

  dataState(): { epoch: number; position: number; seed: number } {
    return { ...this.batcher.state };
  }

  async evaluate(progress?: EvalProgress): Promise<Record<string, number>> {
    const r = await evaluatePerplexity(this.model, this.validIds, {
      seqLen: this.opts.seqLen,
      batch: this.opts.evalBatch ?? this.opts.batch,
      ...(progress === undefined ? {} : { onProgress: progress }),
    });
    return { val_ppl: r.ppl, val_nll: r.nll, val_tokens: r.tokens };
  }
}

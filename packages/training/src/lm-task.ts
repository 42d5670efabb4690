// Language modelling on token ids: training batches + loss, and perplexity over every token of a split.
import * as tf from '@tensorflow/tfjs-core';
import { LmTrainBatcher, lmEvalBatches, lmEvalWindowCount, type LmBatcherState } from '@grassflow/datasets';
import { checkTokenIds, lmLoss, type LanguageModel } from '@grassflow/gpu-layers';
import type { EvalProgress, TrainTask } from './train-loop.js';

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
  /**
   * With `bandEdges`: per scoring window (in order) the NLL sum of its scored targets in each band of window positions,
   * row-major [window][band] (float64), for a bootstrap over windows.
   */
  windowSums?: Float64Array;
}

/**
 * Bands of window positions for a window of L: upper edges 1, 8, 16, 32, 64, 128, … (doubling) up to L, L last; band j
 * holds positions edge[j − 1] + 1 … edge[j] (1-based). For L = 128: 1, 2–8, 9–16, 17–32, 33–64, 65–128.
 */
export function positionBandEdges(seqLen: number): number[] {
  const edges = [1];
  for (let e = 8; e < seqLen; e *= 2) edges.push(e);
  if (seqLen > 1) edges.push(seqLen);
  return edges;
}

/** Options of {@link evaluatePerplexity}. */
export interface PerplexityOptions {
  seqLen: number;
  batch: number;
  /**
   * New targets per window, ≤ seqLen (default seqLen: non-overlapping windows). With s < L every window after the
   * first scores only its last s targets, each with at least L − s tokens of context (sliding windows).
   */
  stride?: number;
  /** Upper edges of position bands (e.g. {@link positionBandEdges}, or [seqLen]): keep per-window sums by band. */
  bandEdges?: readonly number[];
  onProgress?: EvalProgress;
}

/**
 * Perplexity of a model over an id sequence: PPL = exp(Σ_t nll_t / (N − 1)) over every target ids[1..N−1]
 * (lmEvalBatches: windows of L, non-overlapping or sliding by `stride`; the sum is taken in float64). `onProgress` is
 * told the targets scored after each batch, and the N − 1 in all.
 */
export async function evaluatePerplexity(
  model: LanguageModel,
  ids: Int32Array,
  opts: PerplexityOptions,
): Promise<Perplexity> {
  checkTokenIds(ids, model.config.vocabSize); // a bad id would reach the embedding's gather, whose error names no id
  let sum = 0;
  let count = 0;
  const L = opts.seqLen;
  const posSum = new Float64Array(L);
  const posCount = new Float64Array(L);
  const total = Math.max(0, ids.length - 1);
  const stride = opts.stride ?? L;
  const edges = opts.bandEdges;
  // band of each window position (0-based)
  const bandOf = edges === undefined ? null : Int32Array.from({ length: L }, (_, t) => edges.findIndex((e) => t < e));
  if (bandOf !== null && bandOf.some((b) => b < 0))
    throw new Error(`bandEdges ${JSON.stringify(edges)} must end at the window length ${L} or beyond`);
  const nBands = edges?.length ?? 0;
  const windowSums = bandOf === null ? null : new Float64Array(lmEvalWindowCount(ids.length, stride) * nBands);
  let window = 0;
  for (const b of lmEvalBatches(ids, { seqLen: L, batchSize: opts.batch, stride })) {
    const [B, bl] = b.shape;
    const nll = tf.tidy(() => {
      const x = tf.tensor2d(b.x, [B, bl], 'int32');
      return model.headNll(model.hidden(x, { training: false }), b.y); // [B·L], row b·L + t
    });
    const values = await nll.data(); // asynchronous readback: no blocking sync on a GPU backend
    nll.dispose();
    for (let i = 0; i < values.length; i++) {
      if (b.mask[i] === 1) {
        const v = values[i] as number;
        const t = i % bl; // row b·L + t: position t of its window
        sum += v;
        count += 1;
        posSum[t] = (posSum[t] as number) + v;
        posCount[t] = (posCount[t] as number) + 1;
        if (windowSums !== null && bandOf !== null) {
          const w = (window + Math.floor(i / bl)) * nBands + (bandOf[t] as number);
          windowSums[w] = (windowSums[w] as number) + v;
        }
      }
    }
    window += B;
    opts.onProgress?.(count, total);
  }
  if (count === 0) throw new Error(`nothing to evaluate: ${ids.length} ids hold no target`);
  const nll = sum / count;
  const nllByPosition = Array.from(posSum, (s, t) => ((posCount[t] as number) > 0 ? s / (posCount[t] as number) : NaN));
  return { tokens: count, nll, ppl: Math.exp(nll), nllByPosition, ...(windowSums === null ? {} : { windowSums }) };
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
    checkTokenIds(trainIds, model.config.vocabSize);
    checkTokenIds(validIds, model.config.vocabSize);
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

  /** Every step takes B full rows of L tokens (dropLastBatch), so a data position is exactly one step count. */
  consumed(state: LmBatcherState): { steps: number; tokens: number } | null {
    const B = this.opts.batch;
    if (!Number.isInteger(state.epoch) || !Number.isInteger(state.position) || state.position % B !== 0) return null;
    const steps = state.epoch * this.batcher.batchesPerEpoch + state.position / B;
    return { steps, tokens: steps * B * this.opts.seqLen };
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

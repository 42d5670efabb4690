// Language-model batches: shuffled contiguous chunks for training (resumable), full-coverage windows for evaluation.
import { assertInteger, DatasetError, resolveSeqLen, type SeqLenOption } from './errors.js';
import { epochPermutation } from '@grassflow/prng';

/** One batch of next-token prediction, row-major, shape (B, L). */
export interface LmBatch {
  /** Inputs (B, L). */
  readonly x: Int32Array;
  /** Targets (B, L): y[b, t] is the token after x[b, t]. */
  readonly y: Int32Array;
  /** (B, L): 1 where y is a real target to score, 0 on padding (and on unscored context in strided eval). */
  readonly mask: Uint8Array;
  /** [B, L]; B may be smaller in the last batch of an epoch or of an evaluation. */
  readonly shape: readonly [number, number];
  /** Σ mask. */
  readonly targetCount: number;
  /** Offset in the id sequence of x[b, 0], per row. */
  readonly starts: Int32Array;
}

/** Resumable position of a training stream: epoch e, `position` chunks of epoch e already emitted. */
export interface LmBatcherState {
  readonly epoch: number;
  readonly position: number;
  readonly seed: number;
}

/** Options of {@link LmTrainBatcher}. */
export interface LmTrainOptions extends SeqLenOption {
  // seqLen = L: inputs per row; chunks hold L + 1 tokens.
  /** B: rows per batch. */
  batchSize: number;
  /** Seed of the per-epoch chunk order (uint32). */
  seed: number;
  /** Tail of N mod (L+1) tokens: 'drop' (default) leaves it out; 'pad' adds one shorter, masked chunk. */
  remainder?: 'drop' | 'pad';
  /** Drop the last batch of an epoch when it has fewer than B rows (default false). */
  dropLastBatch?: boolean;
  /** Id written into padding (default 0; padding is always mask 0). */
  padId?: number;
}

/**
 * Training batches from one token sequence ids[0..N). Chunk c = ids[c(L+1) .. (c+1)(L+1)) for
 * c < C = ⌊N/(L+1)⌋ (non-overlapping, so each token is in exactly one chunk per epoch); a row is
 * x = chunk[0..L), y = chunk[1..L]. Epoch e visits the chunks in the order of a Fisher–Yates permutation
 * seeded by mix(seed, e) and cut into batches of B. The state {epoch, position, seed} restores the exact stream.
 */
export class LmTrainBatcher {
  /** L: inputs per row. */
  readonly seqLen: number;
  readonly batchSize: number;
  readonly seed: number;
  /** Number of chunks per epoch (C, plus one for a padded tail). */
  readonly numChunks: number;
  /** Tokens in no chunk (the tail when remainder = 'drop', or a 1-token tail, which has no target). */
  readonly droppedTokens: number;
  private readonly ids: Int32Array;
  private readonly dropLast: boolean;
  private readonly padId: number;
  private epoch = 0;
  private position = 0;
  private order: Uint32Array | null = null;
  private orderEpoch = -1;

  constructor(ids: Int32Array, opts: LmTrainOptions) {
    const { seqLen: L, name } = resolveSeqLen(opts);
    assertInteger('batchSize', opts.batchSize, 1);
    assertInteger('seed', opts.seed, 0, 0xffffffff);
    this.ids = ids;
    this.seqLen = L;
    this.batchSize = opts.batchSize;
    this.seed = opts.seed;
    this.dropLast = opts.dropLastBatch ?? false;
    this.padId = opts.padId ?? 0;
    const full = Math.floor(ids.length / (L + 1));
    const tail = ids.length - full * (L + 1);
    const padTail = (opts.remainder ?? 'drop') === 'pad' && tail >= 2;
    this.numChunks = full + (padTail ? 1 : 0);
    this.droppedTokens = padTail ? 0 : tail;
    if (this.numChunks === 0) {
      throw new DatasetError(
        'INVALID_ARGUMENT',
        `${ids.length} tokens do not fill one chunk of ${name} + 1 = ${L + 1} tokens: use a smaller ${name} or more data.`,
      );
    }
    if (this.dropLast && this.numChunks < this.batchSize) {
      throw new DatasetError(
        'INVALID_ARGUMENT',
        `dropLastBatch with ${this.numChunks} chunks < batchSize ${this.batchSize} leaves no batch: lower batchSize.`,
      );
    }
  }

  /** Batches per epoch: ⌈chunks / B⌉, or ⌊chunks / B⌋ with dropLastBatch. */
  get batchesPerEpoch(): number {
    return this.dropLast ? Math.floor(this.numChunks / this.batchSize) : Math.ceil(this.numChunks / this.batchSize);
  }

  /** Where the stream is: save it with a checkpoint, pass it to {@link restore} to resume mid-epoch. */
  get state(): LmBatcherState {
    return { epoch: this.epoch, position: this.position, seed: this.seed };
  }

  /** Continue from a saved state (same ids, block size and seed; the batch size may differ). */
  restore(state: LmBatcherState): void {
    if (state.seed !== this.seed) {
      throw new DatasetError(
        'INVALID_ARGUMENT',
        `State seed ${state.seed} differs from this batcher's seed ${this.seed}: create the batcher with seed ${state.seed}.`,
      );
    }
    assertInteger('state.epoch', state.epoch, 0);
    assertInteger('state.position', state.position, 0, this.numChunks);
    this.epoch = state.epoch;
    this.position = state.position;
    this.rollOver();
  }

  /** Chunk order of an epoch: chunk indices in visiting order. */
  chunkOrder(epoch: number): Uint32Array {
    if (this.orderEpoch !== epoch || this.order === null) {
      this.order = epochPermutation(this.numChunks, this.seed, epoch);
      this.orderEpoch = epoch;
    }
    return this.order;
  }

  /** The next batch; after the last batch of an epoch the state moves to (epoch + 1, 0). */
  nextBatch(): LmBatch {
    const order = this.chunkOrder(this.epoch);
    const rows = Math.min(this.batchSize, this.numChunks - this.position);
    const L = this.seqLen;
    const x = new Int32Array(rows * L).fill(this.padId); // (B, L)
    const y = new Int32Array(rows * L).fill(this.padId); // (B, L)
    const mask = new Uint8Array(rows * L); // (B, L)
    const starts = new Int32Array(rows);
    let targetCount = 0;
    for (let b = 0; b < rows; b++) {
      const c = order[this.position + b] as number;
      const start = c * (L + 1);
      const len = Math.min(L + 1, this.ids.length - start); // L + 1, or the padded tail
      x.set(this.ids.subarray(start, start + len - 1), b * L);
      y.set(this.ids.subarray(start + 1, start + len), b * L);
      mask.fill(1, b * L, b * L + len - 1);
      targetCount += len - 1;
      starts[b] = start;
    }
    this.position += rows;
    this.rollOver();
    return { x, y, mask, shape: [rows, L], targetCount, starts };
  }

  /** The remaining batches of the current epoch (all of them from position 0). */
  *epochBatches(): Generator<LmBatch, void, void> {
    const epoch = this.epoch;
    while (this.epoch === epoch) yield this.nextBatch();
  }

  private rollOver(): void {
    const left = this.numChunks - this.position;
    if (left === 0 || (this.dropLast && left < this.batchSize)) {
      this.epoch += 1;
      this.position = 0;
    }
  }
}

/** Options of {@link lmEvalBatches}. */
export interface LmEvalOptions extends SeqLenOption {
  // seqLen = L: window length.
  /** B: windows per batch. */
  batchSize: number;
  /**
   * s ≤ L: new targets per window (default L: non-overlapping windows). With s < L each window re-reads L − s tokens of
   * context.
   */
  stride?: number;
  /** Id written into padding (default 0). */
  padId?: number;
}

/** Number of evaluation windows: ⌈(N − 1)/s⌉ (targets are ids[1..N−1]). */
export function lmEvalWindowCount(numTokens: number, stride: number): number {
  return numTokens < 2 ? 0 : Math.ceil((numTokens - 1) / stride);
}

/**
 * Evaluation windows that score every target ids[t], t = 1..N−1, exactly once, in order. Window k scores
 * t ∈ [ks + 1, min(ks + s, N − 1)] with inputs x = ids[max(0, ks + s − L) .. t_end) (with s < L a scored
 * token sees between L − s and L − 1 tokens of context); the last window (and, when s < L, the first ones)
 * is shorter and padded, with mask 0 on padding and on unscored context.
 * Perplexity over the split = exp(Σ masked NLL / (N − 1)).
 */
export function* lmEvalBatches(ids: Int32Array, opts: LmEvalOptions): Generator<LmBatch, void, void> {
  const { seqLen: L } = resolveSeqLen(opts);
  assertInteger('batchSize', opts.batchSize, 1);
  const s = opts.stride ?? L;
  assertInteger('stride', s, 1, L);
  const padId = opts.padId ?? 0;
  const N = ids.length;
  const K = lmEvalWindowCount(N, s);
  for (let k0 = 0; k0 < K; k0 += opts.batchSize) {
    const rows = Math.min(opts.batchSize, K - k0);
    const x = new Int32Array(rows * L).fill(padId); // (B, L)
    const y = new Int32Array(rows * L).fill(padId); // (B, L)
    const mask = new Uint8Array(rows * L); // (B, L)
    const starts = new Int32Array(rows);
    let targetCount = 0;
    for (let b = 0; b < rows; b++) {
      const k = k0 + b;
      const tStart = k * s + 1;
      const tEnd = Math.min(k * s + s, N - 1); // inclusive
      const start = Math.max(0, k * s + s - L); // where a full window would start: uniform alignment
      const len = tEnd - start; // inputs ids[start .. tEnd), targets ids[start+1 .. tEnd]; len < L only at the ends
      x.set(ids.subarray(start, tEnd), b * L);
      y.set(ids.subarray(start + 1, tEnd + 1), b * L);
      const firstScored = tStart - (start + 1); // row position of target tStart
      mask.fill(1, b * L + firstScored, b * L + len);
      targetCount += len - firstScored;
      starts[b] = start;
    }
    yield { x, y, mask, shape: [rows, L], targetCount, starts };
  }
}

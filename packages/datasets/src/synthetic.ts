// A seeded ladder of synthetic autoregressive tasks for comparing attention kinds (DPA, EA, local windows).
import { assertInteger, DatasetError, resolveSeqLen, type SeqLenOption } from './errors.js';
import type { LmBatch } from './lm-batches.js';
import { mixSeed, Prng } from '@grassflow/prng';

/**
 * 'lagged-sum': x_t = (1 + Σ_{i=1..level} x_{t−a_i}) mod V with lags a = LAGGED_SUM_LAGS[0..level).
 * 'recall': multi-query associative recall with 2^level key→value pairs, queried later in the sequence.
 */
export type SyntheticFamily = 'lagged-sum' | 'recall';

/** Lags of the 'lagged-sum' family: level ℓ uses the first ℓ. From level 4 on a rule reaches > 16 back. */
export const LAGGED_SUM_LAGS: readonly number[] = [1, 3, 7, 17, 33, 65, 129, 257];

/** Options of {@link SyntheticTask}. */
export interface SyntheticTaskOptions extends SeqLenOption {
  // seqLen = L: inputs per row; each sequence has L + 1 tokens.
  family: SyntheticFamily;
  /** Difficulty, an integer ≥ 1 (lagged-sum: ≤ 8; recall: 2^level ≤ V/2). */
  level: number;
  /** V: vocabulary size (default 16 for lagged-sum, 64 for recall). */
  vocabSize?: number;
  /** Seed (uint32); sequence i depends only on (family, level, seed, i, V, L, noise). */
  seed: number;
  /** lagged-sum only: probability that a rule position gets a uniform random token instead (default 0). */
  noise?: number;
}

/** One sequence of L + 1 tokens and the positions whose token the rule determines from earlier tokens. */
export interface SyntheticSequence {
  readonly tokens: Int32Array; // (L+1)
  readonly determined: Uint8Array; // (L+1): 1 where tokens[t] follows from tokens[0..t) by the rule
}

/**
 * A task of the ladder. `sequence(i)` is random-access and deterministic; `batch(first, B)` stacks sequences
 * first .. first+B−1 as next-token rows x = s[0..L), y = s[1..L], mask[t] = determined[t + 1].
 */
export class SyntheticTask {
  readonly family: SyntheticFamily;
  readonly level: number;
  /** L: inputs per row. */
  readonly seqLen: number;
  readonly vocabSize: number;
  readonly seed: number;
  readonly noise: number;
  /** lagged-sum: the lags a_1..a_level; recall: []. */
  readonly lags: readonly number[];
  /** recall: number of key→value pairs (2^level); lagged-sum: 0. */
  readonly numPairs: number;

  constructor(opts: SyntheticTaskOptions) {
    assertInteger('level', opts.level, 1);
    const { seqLen: L, name } = resolveSeqLen(opts);
    assertInteger('seed', opts.seed, 0, 0xffffffff);
    this.family = opts.family;
    this.level = opts.level;
    this.seqLen = L;
    this.seed = opts.seed;
    this.noise = opts.noise ?? 0;
    if (!(this.noise >= 0 && this.noise <= 1))
      throw new DatasetError('INVALID_ARGUMENT', `noise must be in [0, 1], got ${this.noise}.`);
    const T = L + 1;
    if (opts.family === 'lagged-sum') {
      this.vocabSize = opts.vocabSize ?? 16;
      assertInteger('vocabSize', this.vocabSize, 2, 0x7fffffff);
      assertInteger('level', opts.level, 1, LAGGED_SUM_LAGS.length);
      this.lags = LAGGED_SUM_LAGS.slice(0, opts.level);
      this.numPairs = 0;
      const maxLag = this.lags[this.lags.length - 1] as number;
      if (T <= maxLag)
        throw new DatasetError(
          'INVALID_ARGUMENT',
          `lagged-sum level ${opts.level} reaches ${maxLag} back: ${name} must be ≥ ${maxLag} (got ${L}).`,
        );
    } else if (opts.family === 'recall') {
      this.vocabSize = opts.vocabSize ?? 64;
      assertInteger('vocabSize', this.vocabSize, 4, 0x7fffffff);
      this.lags = [];
      this.numPairs = 2 ** opts.level;
      const keys = Math.floor(this.vocabSize / 2);
      if (this.numPairs > keys)
        throw new DatasetError(
          'INVALID_ARGUMENT',
          `recall level ${opts.level} needs 2^${opts.level} = ${this.numPairs} distinct keys, but V = ${this.vocabSize} has ${keys}: raise vocabSize.`,
        );
      if (T < 2 * this.numPairs + 2)
        throw new DatasetError(
          'INVALID_ARGUMENT',
          `recall level ${opts.level} needs ${name} ≥ ${2 * this.numPairs + 1} (pairs plus one query), got ${L}.`,
        );
    } else {
      throw new DatasetError(
        'INVALID_ARGUMENT',
        `family must be 'lagged-sum' or 'recall', got '${String(opts.family)}'.`,
      );
    }
  }

  /** Sequence number `index` (any non-negative integer), drawn from Prng(mix(seed, family, level, index)). */
  sequence(index: number): SyntheticSequence {
    assertInteger('index', index, 0);
    const rng = new Prng(mixSeed(this.seed, this.family === 'recall' ? 2 : 1, this.level, index));
    return this.family === 'recall' ? this.recall(rng) : this.laggedSum(rng);
  }

  /** Rows first .. first + B − 1 as an LM batch (B, L); mask marks the determined targets. */
  batch(first: number, batchSize: number): LmBatch {
    assertInteger('first', first, 0);
    assertInteger('batchSize', batchSize, 1);
    const L = this.seqLen;
    const x = new Int32Array(batchSize * L); // (B, L)
    const y = new Int32Array(batchSize * L); // (B, L)
    const mask = new Uint8Array(batchSize * L); // (B, L)
    const starts = new Int32Array(batchSize);
    let targetCount = 0;
    for (let b = 0; b < batchSize; b++) {
      const s = this.sequence(first + b);
      x.set(s.tokens.subarray(0, L), b * L);
      y.set(s.tokens.subarray(1, L + 1), b * L);
      mask.set(s.determined.subarray(1, L + 1), b * L);
      for (let t = 1; t <= L; t++) targetCount += s.determined[t] as number;
      starts[b] = first + b;
    }
    return { x, y, mask, shape: [batchSize, L], targetCount, starts };
  }

  private laggedSum(rng: Prng): SyntheticSequence {
    const T = this.seqLen + 1;
    const V = this.vocabSize;
    const tokens = new Int32Array(T);
    const determined = new Uint8Array(T);
    const maxLag = this.lags[this.lags.length - 1] as number;
    for (let t = 0; t < T; t++) {
      if (t < maxLag) {
        tokens[t] = rng.nextInt(V); // free prefix
        continue;
      }
      const flip = this.noise > 0 && rng.nextFloat() < this.noise;
      if (flip) {
        tokens[t] = rng.nextInt(V);
        continue;
      }
      let sum = 1;
      for (const a of this.lags) sum += tokens[t - a] as number;
      tokens[t] = sum % V;
      determined[t] = 1;
    }
    return { tokens, determined };
  }

  private recall(rng: Prng): SyntheticSequence {
    const T = this.seqLen + 1;
    const n = this.numPairs;
    const K = Math.floor(this.vocabSize / 2); // keys 0..K−1, values K..2K−1
    const tokens = new Int32Array(T);
    const determined = new Uint8Array(T);
    // n distinct keys: a partial Fisher–Yates over 0..K−1
    const pool = Int32Array.from({ length: K }, (_, i) => i);
    for (let i = 0; i < n; i++) {
      const j = i + rng.nextInt(K - i);
      const t = pool[i] as number;
      pool[i] = pool[j] as number;
      pool[j] = t;
    }
    const values = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      values[i] = K + rng.nextInt(K);
      tokens[2 * i] = pool[i] as number;
      tokens[2 * i + 1] = values[i] as number;
    }
    for (let t = 2 * n; t < T; t += 2) {
      const q = rng.nextInt(n);
      tokens[t] = pool[q] as number;
      if (t + 1 < T) {
        tokens[t + 1] = values[q] as number;
        determined[t + 1] = 1;
      }
    }
    return { tokens, determined };
  }
}

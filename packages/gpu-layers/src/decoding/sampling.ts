// Sampling from a language model: temperature and top-k, deterministic for a random stream, by incremental decoding.
import * as tf from '@tensorflow/tfjs-core';
import { checkTokenIds, LanguageModelBase, type LanguageModel } from '../language-model/language-model.js';
import { createDecoder, DecoderError } from './decoder.js';

/** How to sample. */
export interface SamplingOptions {
  /** Tokens to generate. */
  readonly maxTokens: number;
  /** 0: greedy (argmax); otherwise softmax(logits / temperature). */
  readonly temperature: number;
  /** Keep the k most likely tokens (0: all). */
  readonly topK: number;
  /**
   * Tokens kept when the positional table is full (1 … maxLen, default maxLen): decoding restarts from the last
   * `slideKeep` tokens. maxLen reproduces the full-forward sampler exactly (every token from then on re-reads the
   * last maxLen tokens, one full pass each); a smaller value re-primes once every maxLen − slideKeep + 1 tokens.
   */
  readonly slideKeep?: number;
}

/**
 * The slideKeep of the apps (`grassflow-lm generate`, the playground): half the positional table, so that once it is
 * full the decoder re-primes once every maxLen/2 + 1 tokens and each token sees maxLen/2 … maxLen − 1 tokens of context.
 * (The library's default, maxLen, reproduces the full-forward sampler at one full pass per token.)
 */
export function appSlideKeep(maxLen: number): number {
  return Math.max(1, Math.floor(maxLen / 2));
}

/** A uniform random stream in [0, 1): `new Prng(seed)` of @grassflow/prng (what grassflow-lm generate uses). */
export interface UniformStream {
  nextFloat(): number;
}

/** Whether id a ranks before id b: the higher logit, ties broken by the lower id. */
function ranksBefore(logits: Float32Array, a: number, b: number): boolean {
  const la = logits[a] as number;
  const lb = logits[b] as number;
  return la > lb || (la === lb && a < b);
}

/**
 * The k ids of highest logit, best first (ties by lower id): one pass over V with a heap of the k kept, worst at its
 * root, O(V log k), instead of a comparator sort of all V ids.
 */
export function topKIds(logits: Float32Array, k: number): Int32Array {
  const V = logits.length;
  const n = Math.min(k, V);
  const heap = new Int32Array(n); // a binary heap whose root is the worst kept id
  const worse = (a: number, b: number) => ranksBefore(logits, b, a);
  const siftDown = (i: number, size: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < size && worse(heap[l] as number, heap[w] as number)) w = l;
      if (r < size && worse(heap[r] as number, heap[w] as number)) w = r;
      if (w === i) return;
      const t = heap[i] as number;
      heap[i] = heap[w] as number;
      heap[w] = t;
      i = w;
    }
  };
  for (let id = 0; id < n; id++) {
    heap[id] = id;
    for (let i = id; i > 0;) {
      const p = (i - 1) >> 1;
      if (!worse(heap[i] as number, heap[p] as number)) break;
      const t = heap[i] as number;
      heap[i] = heap[p] as number;
      heap[p] = t;
      i = p;
    }
  }
  // The root's logit in a local: most ids lose to it on one float comparison (a later id never wins a tie).
  let worst = n > 0 ? (logits[heap[0] as number] as number) : Infinity;
  for (let id = n; id < V; id++) {
    if (!((logits[id] as number) > worst)) continue;
    heap[0] = id;
    siftDown(0, n);
    worst = logits[heap[0]] as number;
  }
  return heap.sort((a, b) => (ranksBefore(logits, a, b) ? -1 : ranksBefore(logits, b, a) ? 1 : 0));
}

/**
 * Picks one token from logits [V]: float64 softmax over the top k of logits / T (ties broken by lower id), one
 * draw u ~ U[0, 1) of `rng` scaled by the total weight, walked down the ids (best first for top-k, by id for all V);
 * T = 0 is argmax (no draw).
 */
export function sampleToken(
  logits: Float32Array,
  opts: Pick<SamplingOptions, 'temperature' | 'topK'>,
  rng: UniformStream,
): number {
  const V = logits.length;
  if (opts.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if ((logits[i] as number) > (logits[best] as number)) best = i;
    return best;
  }
  const ids = opts.topK > 0 && opts.topK < V ? topKIds(logits, opts.topK) : null; // null: every id, in id order
  const n = ids === null ? V : ids.length;
  const idAt = (k: number): number => (ids === null ? k : (ids[k] as number));
  let max = -Infinity;
  for (let k = 0; k < n; k++) max = Math.max(max, logits[idAt(k)] as number);
  const w = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    w[k] = Math.exp(((logits[idAt(k)] as number) - max) / opts.temperature);
    total += w[k] as number;
  }
  let u = rng.nextFloat() * total;
  for (let k = 0; k < n; k++) {
    u -= w[k] as number;
    if (u < 0) return idAt(k);
  }
  return idAt(n - 1);
}

/**
 * Values of logits [1, V] as a Float32Array, read asynchronously (dataSync throws on webgpu under Node and blocks a
 * browser's main thread); the tensor is disposed.
 */
async function takeRow(logits: tf.Tensor2D): Promise<Float32Array> {
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}

/**
 * Refuses sampling options that would silently do something else: maxTokens an integer >= 0, temperature a finite
 * number >= 0, topK an integer >= 0 (from JavaScript, `maxTokens: -1` or `temperature: 'hot'` would otherwise run).
 */
function checkSamplingOptions(opts: SamplingOptions): void {
  const o = opts as unknown as Record<string, unknown>;
  const bad = (field: string, what: string): never => {
    const v = o[field];
    throw new DecoderError(
      'BAD_INPUT',
      `${field} must be ${what}, got ${typeof v === 'string' ? `"${v}"` : String(v)}`,
    );
  };
  const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!isInt(o['maxTokens'])) bad('maxTokens', 'an integer >= 0 (the tokens to generate)');
  const t = o['temperature'];
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) bad('temperature', 'a number >= 0 (0: greedy)');
  if (!isInt(o['topK'])) bad('topK', 'an integer >= 0 (0: all tokens)');
}

function checkPrompt(prompt: Int32Array, model: LanguageModel): void {
  if (prompt.length === 0) throw new DecoderError('BAD_INPUT', 'the prompt has no tokens: give at least one token id');
  checkTokenIds(prompt, model.config.vocabSize);
}

/**
 * The reference sampler: for each new token, the full forward pass over the last ≤ maxLen tokens, sampling from the
 * last position's logits. O(L) work per layer and token for Grassmann, O(L²) for attention; kept to check
 * {@link sampleIds} and as the baseline of `grassflow-lm bench --generate`.
 */
export async function sampleIdsFullForward(
  model: LanguageModel,
  prompt: Int32Array,
  opts: SamplingOptions,
  rng: UniformStream,
): Promise<Int32Array> {
  checkPrompt(prompt, model);
  checkSamplingOptions(opts);
  const ids = Array.from(prompt);
  const maxLen = model.config.maxLen;
  for (let n = 0; n < opts.maxTokens; n++) {
    const ctx = ids.slice(-maxLen);
    const last = tf.tidy(() => {
      const logits = model.apply(tf.tensor2d(ctx, [1, ctx.length], 'int32'), { training: false }); // [1, L, V]
      return tf.reshape<tf.Rank.R2>(tf.slice(logits, [0, ctx.length - 1, 0], [1, 1, -1]), [1, -1]); // [1, V]
    });
    ids.push(sampleToken(await takeRow(last), opts, rng));
  }
  return Int32Array.from(ids.slice(prompt.length));
}

/**
 * Continues `prompt` by `maxTokens` tokens with incremental decoding, yielding each token id as it is sampled: the
 * prompt (its last maxLen tokens) is primed in one pass, then each token is one decoder step (GrassmannLM: constant
 * work and memory per token; TransformerLM: a key/value cache). The same stream gives the same tokens as
 * {@link sampleIdsFullForward} (up to float rounding in the logits) as long as prompt + output fit in maxLen, and
 * beyond that too with the default `slideKeep`. When the positional table is full, decoding restarts from the last
 * `slideKeep` tokens (positions are absolute, so the state cannot simply slide). A model that is not a
 * GrassmannLM/TransformerLM falls back to the full-forward sampler. Stopping the iteration early frees the decoder.
 */
export async function* sampleIds(
  model: LanguageModel,
  prompt: Int32Array,
  opts: SamplingOptions,
  rng: UniformStream,
): AsyncGenerator<number, void, undefined> {
  checkPrompt(prompt, model);
  checkSamplingOptions(opts);
  if (opts.maxTokens === 0) return;
  if (!(model instanceof LanguageModelBase)) {
    yield* await sampleIdsFullForward(model, prompt, opts, rng);
    return;
  }
  const maxLen = model.config.maxLen;
  const keep = opts.slideKeep ?? maxLen;
  if (!Number.isInteger(keep) || keep < 1 || keep > maxLen) {
    throw new DecoderError('BAD_INPUT', `slideKeep must be an integer in [1, maxLen = ${maxLen}], got ${keep}`);
  }
  const ids = Array.from(prompt);
  const decoder = createDecoder(model, { batch: 1 });
  const prime = (ctx: number[]): tf.Tensor2D =>
    tf.tidy(() => decoder.prime(tf.tensor2d(ctx, [1, ctx.length], 'int32'))); // [1, V]
  try {
    let logits = prime(ids.slice(-maxLen));
    for (let n = 0; ; n++) {
      const next = sampleToken(await takeRow(logits), opts, rng);
      ids.push(next);
      yield next;
      if (n + 1 >= opts.maxTokens) break;
      if (decoder.position < maxLen) {
        logits = decoder.step([next]);
      } else {
        decoder.reset();
        logits = prime(ids.slice(-keep));
      }
    }
  } finally {
    decoder.dispose();
  }
}

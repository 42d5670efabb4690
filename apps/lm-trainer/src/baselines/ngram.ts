// Count-based n-gram language models on a token-id stream: add-k unigram, linearly interpolated bigram, and
// interpolated modified Kneser–Ney bigram/trigram (Chen & Goodman 1998). No dense V×V table: n-grams are keys
// a·V + b (bigram) or (a·V + b)·V + c (trigram) in sorted Float64Arrays (exact integers below 2^53 for V ≤ 200,000),
// counted by sorting and looked up by binary search.

/** Largest vocabulary whose trigram keys stay exact integers in a float64: V³ < 2^53. */
const MAX_VOCAB = 200_000;

/**
 * The context of an n-gram key, ⌊key / V⌋, exact for every integer key below 2^53: key − key mod V is a multiple of
 * V, so the division has nothing to round (floor(key / V) would round up to the next context once half an ulp of
 * key / V exceeds 1/V).
 */
function contextOf(key: number, V: number): number {
  return (key - (key % V)) / V;
}

/** Sorted distinct keys of `keys` (sorted in place) and how often each occurs. */
function runLengths(keys: Float64Array): { keys: Float64Array; counts: Int32Array } {
  keys.sort();
  let distinct = 0;
  for (let i = 0; i < keys.length; i++) if (i === 0 || keys[i] !== keys[i - 1]) distinct++;
  const out = new Float64Array(distinct);
  const counts = new Int32Array(distinct);
  let j = -1;
  for (let i = 0; i < keys.length; i++) {
    if (i === 0 || keys[i] !== keys[i - 1]) out[++j] = keys[i] as number;
    counts[j] = (counts[j] as number) + 1;
  }
  return { keys: out, counts };
}

/** Index of `key` in the sorted `keys`, or −1. */
function find(keys: Float64Array, key: number): number {
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid] as number;
    if (k === key) return mid;
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Keys of every n-gram of the stream: ids[t..t+n−1] as Σ ids[t+i]·V^(n−1−i), t = 0..N−n. */
function ngramKeys(ids: Int32Array, n: number, V: number): Float64Array {
  const m = Math.max(0, ids.length - n + 1);
  const keys = new Float64Array(m);
  for (let t = 0; t < m; t++) {
    let k = 0;
    for (let i = 0; i < n; i++) k = k * V + (ids[t + i] as number);
    keys[t] = k;
  }
  return keys;
}

/**
 * Modified Kneser–Ney discounts from the count-of-counts n1..n4 (how many n-grams occur exactly 1..4 times),
 * Chen & Goodman (1998) eq. 26: Y = n1 / (n1 + 2·n2), D1 = 1 − 2Y·n2/n1, D2 = 2 − 3Y·n3/n2, D3+ = 3 − 4Y·n4/n3.
 * A D_k that is not finite or outside (0, k] (tiny corpora: some n_k = 0) falls back to k/2, KenLM's fallback.
 */
export function modifiedKneserNeyDiscounts(n: readonly [number, number, number, number]): [number, number, number] {
  const [n1, n2, n3, n4] = n;
  const Y = n1 / (n1 + 2 * n2);
  const raw = [1 - (2 * Y * n2) / n1, 2 - (3 * Y * n3) / n2, 3 - (4 * Y * n4) / n3];
  const ok = (d: number, k: number): number => (Number.isFinite(d) && d > 0 && d <= k ? d : k / 2);
  return [ok(raw[0] as number, 1), ok(raw[1] as number, 2), ok(raw[2] as number, 3)];
}

/** D(c) for a count c ≥ 1: D1, D2, or D3+ for c ≥ 3. */
function discountOf(d: readonly [number, number, number], c: number): number {
  return c >= 3 ? d[2] : c === 2 ? d[1] : d[0];
}

/** One order of an interpolated KN model: the m-grams with their (raw or continuation) counts and contexts. */
interface KnLevel {
  /** m-gram keys, sorted. */
  keys: Float64Array;
  counts: Int32Array;
  /** Distinct (m−1)-gram contexts, sorted; for m = 1 the one empty context (key 0). */
  ctxKeys: Float64Array;
  /** Σ_w c(h w) of each context. */
  ctxTotal: Float64Array;
  /** γ(h) = (D1·N1(h·) + D2·N2(h·) + D3+·N3+(h·)) / Σ_w c(h w): the mass handed to the lower order. */
  ctxBackoff: Float64Array;
  discounts: [number, number, number];
}

function knLevel(
  keys: Float64Array,
  counts: Int32Array,
  V: number,
  fixed: readonly [number, number, number] | undefined,
): KnLevel {
  const coc: [number, number, number, number] = [0, 0, 0, 0];
  for (const c of counts) if (c <= 4) coc[c - 1] = (coc[c - 1] as number) + 1;
  const discounts: [number, number, number] = fixed ? [...fixed] : modifiedKneserNeyDiscounts(coc);
  // keys are sorted, so the m-grams of one context h = floor(key / V) are contiguous
  let nCtx = 0;
  for (let i = 0; i < keys.length; i++) {
    if (i === 0 || contextOf(keys[i] as number, V) !== contextOf(keys[i - 1] as number, V)) nCtx++;
  }
  const ctxKeys = new Float64Array(nCtx);
  const ctxTotal = new Float64Array(nCtx);
  const ctxBackoff = new Float64Array(nCtx);
  let j = -1;
  for (let i = 0; i < keys.length; i++) {
    const h = contextOf(keys[i] as number, V);
    if (j < 0 || ctxKeys[j] !== h) ctxKeys[++j] = h;
    const c = counts[i] as number;
    ctxTotal[j] = (ctxTotal[j] as number) + c;
    ctxBackoff[j] = (ctxBackoff[j] as number) + discountOf(discounts, c);
  }
  for (let h = 0; h < nCtx; h++) ctxBackoff[h] = (ctxBackoff[h] as number) / (ctxTotal[h] as number);
  return { keys, counts, ctxKeys, ctxTotal, ctxBackoff, discounts };
}

/**
 * Continuation counts of the order below: N1+(· w_2..w_m) = the number of distinct words seen before each
 * (m−1)-gram suffix among the m-gram keys (sorted, distinct).
 */
function continuationCounts(keys: Float64Array, suffixBase: number): { keys: Float64Array; counts: Int32Array } {
  const suffixes = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) suffixes[i] = (keys[i] as number) % suffixBase;
  return runLengths(suffixes);
}

/** Options of {@link KneserNeyModel}. */
export interface KneserNeyOptions {
  /** D1, D2, D3+ for every order instead of the count-of-counts estimate (hand-checked tests). */
  discounts?: readonly [number, number, number];
}

/**
 * Interpolated modified Kneser–Ney model of order n (Chen & Goodman 1998, §4.1.6), over V token ids:
 *
 *   p_m(w | h) = max(c_m(h w) − D_m(c_m(h w)), 0) / Σ_v c_m(h v) + γ_m(h) · p_{m−1}(w | h'),   h' = h minus its first token
 *   p_0(w) = 1 / V (uniform, so no probability is 0)
 *
 * c_n are the raw counts of the training stream; each lower order m < n counts continuations, c_m(h w) = the number
 * of distinct tokens seen before (h w) at order m + 1. D_m(c) is D1, D2 or D3+ (c ≥ 3), estimated per order from that
 * order's count-of-counts. A context never seen at order m (Σ c_m = 0) gives p_m = p_{m−1}. A history shorter than
 * n − 1 (the first targets of a stream) starts at the order it fills.
 */
export class KneserNeyModel {
  /** levels[m − 1] is order m. */
  readonly levels: KnLevel[];

  constructor(
    trainIds: Int32Array,
    readonly order: number,
    readonly vocabSize: number,
    opts: KneserNeyOptions = {},
  ) {
    if (!Number.isInteger(order) || order < 1 || order > 3) throw new RangeError(`order ${order} must be 1, 2 or 3`);
    checkVocab(vocabSize);
    const V = vocabSize;
    const levels: KnLevel[] = [];
    let counted = runLengths(ngramKeys(trainIds, order, V));
    for (let m = order; m >= 1; m--) {
      levels[m - 1] = knLevel(counted.keys, counted.counts, V, opts.discounts);
      if (m > 1) counted = continuationCounts(counted.keys, V ** (m - 1));
    }
    this.levels = levels;
  }

  /** p(w | history): history = the up to n − 1 preceding ids, oldest first (only the last n − 1 are used). */
  prob(history: ArrayLike<number>, w: number): number {
    const V = this.vocabSize;
    const h = Math.min(history.length, this.order - 1);
    // p_0 = 1/V, then orders 1..h+1 with contexts of 0..h tokens, each interpolating the one below
    let p = 1 / V;
    for (let m = 1; m <= h + 1; m++) {
      const level = this.levels[m - 1] as KnLevel;
      let ctx = 0;
      for (let i = history.length - (m - 1); i < history.length; i++) ctx = ctx * V + (history[i] as number);
      const ci = find(level.ctxKeys, ctx);
      if (ci < 0) continue; // unseen context: p_m = p_{m−1}
      const gi = find(level.keys, ctx * V + w);
      const c = gi < 0 ? 0 : (level.counts[gi] as number);
      const own = c === 0 ? 0 : Math.max(c - discountOf(level.discounts, c), 0);
      p = own / (level.ctxTotal[ci] as number) + (level.ctxBackoff[ci] as number) * p;
    }
    return p;
  }
}

function checkVocab(V: number): void {
  if (!Number.isInteger(V) || V < 1 || V > MAX_VOCAB)
    throw new RangeError(`vocabulary size ${V} outside 1..${MAX_VOCAB}`);
}

/** Token counts c(w) of the ids (Float64Array of length V). */
function unigramCounts(ids: Int32Array, V: number): Float64Array {
  const c = new Float64Array(V);
  for (const id of ids) c[id] = (c[id] as number) + 1;
  return c;
}

/** Add-k unigram: p(w) = (c(w) + k) / (N + k·V), N = training tokens. */
export class AddKUnigram {
  private readonly counts: Float64Array;
  private readonly total: number;

  constructor(
    trainIds: Int32Array,
    readonly vocabSize: number,
    readonly k: number,
  ) {
    checkVocab(vocabSize);
    if (!(k > 0)) throw new RangeError(`add-k needs k > 0, got ${k}`);
    this.counts = unigramCounts(trainIds, vocabSize);
    this.total = trainIds.length;
  }

  prob(_history: ArrayLike<number>, w: number): number {
    return ((this.counts[w] as number) + this.k) / (this.total + this.k * this.vocabSize);
  }
}

/**
 * Bigram interpolated linearly with a unigram: p(w | v) = λ·c(v w) / c(v ·) + (1 − λ)·p_uni(w); a context v never
 * seen before another token (c(v ·) = 0) gives p_uni(w).
 */
export class InterpolatedBigram {
  private readonly keys: Float64Array;
  private readonly counts: Int32Array;
  private readonly ctxTotal: Float64Array;

  constructor(
    trainIds: Int32Array,
    readonly vocabSize: number,
    readonly lambda: number,
    private readonly unigram: AddKUnigram,
  ) {
    checkVocab(vocabSize);
    if (!(lambda >= 0 && lambda <= 1)) throw new RangeError(`λ must be in [0, 1], got ${lambda}`);
    const r = runLengths(ngramKeys(trainIds, 2, vocabSize));
    this.keys = r.keys;
    this.counts = r.counts;
    this.ctxTotal = new Float64Array(vocabSize);
    for (let i = 0; i < r.keys.length; i++) {
      const v = contextOf(r.keys[i] as number, vocabSize);
      this.ctxTotal[v] = (this.ctxTotal[v] as number) + (r.counts[i] as number);
    }
  }

  prob(history: ArrayLike<number>, w: number): number {
    const pu = this.unigram.prob(history, w);
    if (history.length === 0) return pu;
    const v = history[history.length - 1] as number;
    const total = this.ctxTotal[v] as number;
    if (total === 0) return pu;
    const i = find(this.keys, v * this.vocabSize + w);
    const c = i < 0 ? 0 : (this.counts[i] as number);
    return (this.lambda * c) / total + (1 - this.lambda) * pu;
  }
}

/** A model that gives p(w | preceding ids). */
export interface NgramModel {
  prob(history: ArrayLike<number>, w: number): number;
}

/** Score of a model on a split. */
export interface NgramScore {
  /** Targets scored: N − 1 for N ids. */
  tokens: number;
  /** Mean NLL per target, nats. */
  nll: number;
  /** exp(nll). */
  ppl: number;
}

/**
 * `eval`'s protocol for a count model: every target ids[t], t = 1..N − 1, scored once given at most the
 * `context` preceding ids of the stream; PPL = exp(mean NLL) (sum in float64).
 */
export function scoreNgram(model: NgramModel, ids: Int32Array, context: number): NgramScore {
  if (ids.length < 2) throw new Error(`nothing to evaluate: ${ids.length} ids hold no target`);
  let sum = 0;
  for (let t = 1; t < ids.length; t++) {
    const p = model.prob(ids.subarray(Math.max(0, t - context), t), ids[t] as number);
    sum -= Math.log(p);
  }
  const tokens = ids.length - 1;
  const nll = sum / tokens;
  return { tokens, nll, ppl: Math.exp(nll) };
}

/** One baseline line: what it is, its smoothing in words, and its score. */
export interface BaselineResult extends NgramScore {
  /** Short row name, e.g. 'bigram (KN)'. */
  name: string;
  /** n of the n-gram. */
  order: number;
  smoothing: string;
}

/** The add-k constant and interpolation weight paper-notes §2 quotes its baselines with. */
export const UNIGRAM_ADD_K = 0.1;
export const BIGRAM_LAMBDA = 0.7;

/**
 * Unigram (add-0.1), bigram linearly interpolated with it (λ = 0.7), and interpolated modified-KN bigram and
 * trigram, fitted on `trainIds` and scored on `evalIds` (ids below V).
 */
export function ngramBaselines(trainIds: Int32Array, evalIds: Int32Array, V: number): BaselineResult[] {
  const uni = new AddKUnigram(trainIds, V, UNIGRAM_ADD_K);
  const lin = new InterpolatedBigram(trainIds, V, BIGRAM_LAMBDA, uni);
  const kn2 = new KneserNeyModel(trainIds, 2, V);
  const kn3 = new KneserNeyModel(trainIds, 3, V);
  const knSmoothing = (m: KneserNeyModel): string =>
    `interpolated modified Kneser–Ney (Chen & Goodman 1998), discounts per order D1/D2/D3+ = ${m.levels
      .map((l) => l.discounts.map((d) => d.toFixed(3)).join('/'))
      .reverse()
      .join(', ')} (highest order first); unigram interpolated with uniform 1/V`;
  return [
    {
      name: 'unigram',
      order: 1,
      smoothing: `add-k, k = ${UNIGRAM_ADD_K}`,
      ...scoreNgram(uni, evalIds, 0),
    },
    {
      name: `bigram (linear interpolation, λ = ${BIGRAM_LAMBDA})`,
      order: 2,
      smoothing: `${BIGRAM_LAMBDA}·maximum likelihood bigram + ${(1 - BIGRAM_LAMBDA).toFixed(1)}·add-${UNIGRAM_ADD_K} unigram`,
      ...scoreNgram(lin, evalIds, 1),
    },
    { name: 'bigram (KN)', order: 2, smoothing: knSmoothing(kn2), ...scoreNgram(kn2, evalIds, 1) },
    { name: 'trigram (KN)', order: 3, smoothing: knSmoothing(kn3), ...scoreNgram(kn3, evalIds, 2) },
  ];
}

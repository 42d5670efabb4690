// The structural tokenizer interfaces this package needs (no dependency on @grassflow/tokenizers).

/** Token ids as any tokenizer returns them (number[], Int32Array, …). */
export type TokenIds = ArrayLike<number>;

/**
 * Anything that turns one text (a sentence, a line) into token ids, synchronously or not.
 * `id` identifies the tokenizer, its vocabulary and its options: it keys the token-id cache, so two
 * encoders with the same `id` must give the same ids.
 */
export interface TextEncoderLike {
  readonly id: string;
  encode(text: string): TokenIds | PromiseLike<TokenIds>;
}

/**
 * Anything that encodes a whole corpus (all lines of a split) at once, e.g. a WordPiece tokenizer's
 * `encodeCorpus`. Its own line handling applies; fold any options it uses into `id`.
 */
export interface CorpusEncoderLike {
  readonly id: string;
  encodeCorpus(text: string): TokenIds | PromiseLike<TokenIds>;
}

/** True for an encoder that encodes whole corpora. */
export function isCorpusEncoder(e: TextEncoderLike | CorpusEncoderLike): e is CorpusEncoderLike {
  return typeof (e as Partial<CorpusEncoderLike>).encodeCorpus === 'function';
}

function isThenable(v: unknown): v is PromiseLike<TokenIds> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * Encode many texts in order. Synchronous encoders run directly; asynchronous ones run `concurrency` calls at
 * a time (default 512) so a native tokenizer can work on several while JavaScript waits.
 */
export async function encodeTexts(
  encoder: TextEncoderLike,
  texts: readonly string[],
  concurrency = 512,
): Promise<TokenIds[]> {
  const out: TokenIds[] = new Array<TokenIds>(texts.length);
  let pending: { i: number; p: PromiseLike<TokenIds> }[] = [];
  const flush = async (): Promise<void> => {
    const done = await Promise.all(pending.map((x) => x.p));
    pending.forEach((x, k) => (out[x.i] = done[k] as TokenIds));
    pending = [];
  };
  for (let i = 0; i < texts.length; i++) {
    const r = encoder.encode(texts[i] as string);
    if (isThenable(r)) {
      pending.push({ i, p: r });
      if (pending.length >= concurrency) await flush();
    } else {
      out[i] = r;
    }
  }
  if (pending.length > 0) await flush();
  return out;
}

/** An id, checked to be an integer in the int32 range. */
export function checkedId(id: number, encoderId: string): number {
  if (!Number.isInteger(id) || id < -0x80000000 || id > 0x7fffffff) {
    throw new TypeError(`Tokenizer '${encoderId}' returned id ${id}, not an int32.`);
  }
  return id;
}

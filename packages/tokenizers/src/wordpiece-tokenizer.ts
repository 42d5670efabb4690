// BERT WordPiece tokenizer on the Hugging Face Rust `tokenizers` library: ids equal to HF's bert-base-uncased fast
// tokenizer.
import { resolve } from 'node:path';
import {
  bertNormalizer,
  bertPreTokenizer,
  templateProcessing,
  Tokenizer,
  WordPiece,
  wordPieceDecoder,
  type Decoder,
  type Encoding,
  type TruncationStrategy as HfTruncationStrategy,
} from 'tokenizers';
import { assertInteger, messageOf, TokenizerError } from './errors.js';
import { writeFileAtomicSync } from '@grassflow/checkpoints';
import { readFileOrThrow, sha256Hex } from './files.js';
import {
  hfStrategy,
  resolveEncodeOptions,
  type ResolvedEncodeOptions,
  type WordPieceEncodeOptions,
  type WordPieceEncoding,
  type WordPieceInput,
} from './wordpiece-options.js';
import {
  BERT_SPECIAL_TOKENS,
  checkedVocab,
  parseVocabTxt,
  summarizeTokenizerJson,
  type WordPieceVocab,
} from './wordpiece-vocab.js';

/** Options of {@link WordPieceTokenizer.fromVocabFile}. */
export interface WordPieceVocabOptions {
  /** Lowercase and strip accents (uncased BERT). Default true; false for a cased vocabulary. */
  readonly lowercase?: boolean;
}

/** Options of {@link WordPieceTokenizer.encodeCorpus}. */
export interface EncodeCorpusOptions {
  /** Lines handed to the Rust `encodeBatch` at a time (it encodes a batch on all cores). Default 2048. */
  readonly linesPerBatch?: number;
  /** Id appended after the tokens of every non-blank line, e.g. the [SEP] id; default none. */
  readonly lineEndId?: number;
}

/** Max characters of one word; longer words become [UNK] (HF and google-research/bert default). */
const MAX_INPUT_CHARS_PER_WORD = 100;

/** A HF tokenizer configured exactly as HF's bert-base-uncased tokenizer.json (vocabulary aside). */
function buildBertTokenizer(vocab: WordPieceVocab, lowercase: boolean): Tokenizer {
  const table = Object.create(null) as Record<string, number>; // null prototype: a token "__proto__" stays a key
  vocab.tokens.forEach((token, id) => (table[token] = id));
  const tokenizer = new Tokenizer(
    WordPiece.init(table, {
      unkToken: '[UNK]',
      continuingSubwordPrefix: '##',
      maxInputCharsPerWord: MAX_INPUT_CHARS_PER_WORD,
    }),
  );
  // strip_accents follows lowercase, as HF's BertNormalizer with strip_accents = null.
  tokenizer.setNormalizer(
    bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase }),
  );
  tokenizer.setPreTokenizer(bertPreTokenizer());
  const cls = vocab.ids.get('[CLS]') ?? 0;
  const sep = vocab.ids.get('[SEP]') ?? 0;
  tokenizer.setPostProcessor(
    templateProcessing('[CLS]:0 $A:0 [SEP]:0', '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', [
      ['[CLS]', cls],
      ['[SEP]', sep],
    ]),
  );
  tokenizer.setDecoder(wordPieceDecoder('##', true));
  tokenizer.addSpecialTokens(BERT_SPECIAL_TOKENS.filter((t) => vocab.ids.has(t)));
  return tokenizer;
}

/** Wrap an error of the Rust library into `ENCODE_FAILED` with its reason. */
function encodeFailed(err: unknown, what: string): TokenizerError {
  return new TokenizerError('ENCODE_FAILED', `Encoding ${what} failed: ${messageOf(err)}.`, { cause: err });
}

function checkText(value: unknown, name: string): string {
  if (typeof value !== 'string') {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      `${name} must be a string, got ${value === null ? 'null' : typeof value}.`,
    );
  }
  return value;
}

/**
 * BERT WordPiece tokenizer: BertNormalizer (clean text, CJK characters split, lowercase + strip accents
 * when uncased) → BertPreTokenizer (whitespace and punctuation) → WordPiece (greedy longest match, `##`
 * continuations, [UNK] for words it cannot cover or over 100 characters) → template
 * `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]` with type ids 0 / 1. Normalisation, splitting and
 * WordPiece run in HF's Rust library, so ids equal HF's `bert-base-uncased` fast tokenizer.
 *
 * Encoding is async (the napi binding offers only async encode); construction and decode are sync.
 */
export class WordPieceTokenizer {
  /** Stable identity for caches: `wordpiece:<sha256 of the vocabulary>:<lowercase|cased>[:json-<config hash>]`. */
  readonly id: string;
  /** Number of tokens in the vocabulary (30,522 for bert-base-uncased). */
  readonly vocabSize: number;
  /** Ids of the special tokens; `mask` is undefined when the vocabulary has no [MASK]. */
  readonly specialIds: {
    readonly pad: number;
    readonly unk: number;
    readonly cls: number;
    readonly sep: number;
    readonly mask: number | undefined;
  };

  /** Runs the async encodes; never has truncation or padding set. */
  private readonly raw: Tokenizer;
  /** Used only synchronously (postProcess), so per-call truncation settings cannot race with encodes. */
  private readonly post: Tokenizer;
  private readonly vocab: WordPieceVocab;
  private readonly skipOnDecode: ReadonlySet<number>;
  private readonly decoder: Decoder | null;
  private specialCounts: Promise<{ single: number; pair: number }> | undefined;

  private constructor(
    raw: Tokenizer,
    post: Tokenizer,
    vocab: WordPieceVocab,
    skipOnDecode: ReadonlySet<number>,
    id: string,
  ) {
    this.raw = raw;
    this.post = post;
    this.vocab = vocab;
    this.skipOnDecode = skipOnDecode;
    this.decoder = raw.getDecoder();
    this.id = id;
    this.vocabSize = vocab.tokens.length;
    const must = (t: string): number => vocab.ids.get(t) ?? -1; // present: checkedVocab requires them
    this.specialIds = {
      pad: must('[PAD]'),
      unk: must('[UNK]'),
      cls: must('[CLS]'),
      sep: must('[SEP]'),
      mask: vocab.ids.get('[MASK]'),
    };
  }

  /**
   * Build from a BERT `vocab.txt` (one token per line, id = line number − 1), with the configuration of
   * HF's `bert-base-uncased` tokenizer.json. Throws `FILE_NOT_FOUND` or `BAD_VOCAB` with the path.
   */
  static fromVocabFile(path: string, opts: WordPieceVocabOptions = {}): WordPieceTokenizer {
    const bytes = readFileOrThrow(
      path,
      'WordPiece vocab file',
      'Pass the path of a BERT vocab.txt, e.g. bert-base-uncased/vocab.txt.',
    );
    return WordPieceTokenizer.fromVocab(parseVocabTxt(bytes.toString('utf8'), path).tokens, opts, path);
  }

  /** Build from the tokens of a vocabulary in id order (`tokens[id]`), configured as {@link fromVocabFile}. */
  static fromVocab(tokens: readonly string[], opts: WordPieceVocabOptions = {}, source = 'tokens'): WordPieceTokenizer {
    const lowercase = opts.lowercase ?? true;
    if (typeof lowercase !== 'boolean') {
      throw new TokenizerError('INVALID_ARGUMENT', `lowercase must be a boolean, got ${String(lowercase)}.`);
    }
    const vocab = checkedVocab(tokens, source);
    const skip = new Set(BERT_SPECIAL_TOKENS.flatMap((t) => vocab.ids.get(t) ?? []));
    // The hash of tokens joined by "\n" plus a final "\n" is the SHA-256 of a canonical vocab.txt itself.
    const id = `wordpiece:${sha256Hex(vocab.tokens.join('\n') + '\n')}:${lowercase ? 'lowercase' : 'cased'}`;
    return new WordPieceTokenizer(
      buildBertTokenizer(vocab, lowercase),
      buildBertTokenizer(vocab, lowercase),
      vocab,
      skip,
      id,
    );
  }

  /**
   * Load a HF `tokenizer.json` whose model is WordPiece (its normalizer, pre-tokenizer, post-processor and
   * decoder are used as written). Its `truncation` and `padding` sections are ignored: pass them per call.
   * Throws `FILE_NOT_FOUND` or `BAD_TOKENIZER_JSON` with the path and the reason.
   */
  static fromTokenizerJson(path: string): WordPieceTokenizer {
    const text = readFileOrThrow(path, 'tokenizer.json', 'Pass the path of a Hugging Face tokenizer.json.').toString(
      'utf8',
    );
    const summary = summarizeTokenizerJson(text, path);
    const load = (): Tokenizer => {
      let tokenizer: Tokenizer;
      try {
        tokenizer = Tokenizer.fromString(text);
      } catch (err) {
        throw new TokenizerError(
          'BAD_TOKENIZER_JSON',
          `${path} is not a tokenizer.json the Hugging Face library can read: ${messageOf(err)}. ` +
            'Pass a tokenizer.json saved by Hugging Face tokenizers (or by saveTokenizerJson).',
          { file: path, cause: err },
        );
      }
      tokenizer.disableTruncation();
      tokenizer.disablePadding();
      return tokenizer;
    };
    const id =
      `wordpiece:${sha256Hex(summary.vocab.tokens.join('\n') + '\n')}:${summary.lowercase ? 'lowercase' : 'cased'}` +
      `:json-${sha256Hex(summary.configText).slice(0, 16)}`;
    return new WordPieceTokenizer(load(), load(), summary.vocab, new Set(summary.specialIds), id);
  }

  /** Id of a token, or undefined when it is not in the vocabulary. */
  tokenToId(token: string): number | undefined {
    return this.vocab.ids.get(token);
  }

  /** Token of an id, or undefined when the id is out of range. */
  idToToken(id: number): string | undefined {
    return this.vocab.tokens[id];
  }

  /** Encode one sentence, or a pair (sentence A, sentence B) with type ids 0 / 1. */
  async encode(text: string, pair?: string | null, opts: WordPieceEncodeOptions = {}): Promise<WordPieceEncoding> {
    const input: WordPieceInput =
      pair === undefined || pair === null
        ? checkText(text, 'text')
        : [checkText(text, 'text'), checkText(pair, 'pair')];
    const [encoding] = await this.encodeBatch([input], opts);
    if (encoding === undefined) throw new TokenizerError('ENCODE_FAILED', 'Encoding returned no result.');
    return encoding;
  }

  /**
   * Encode a batch of sentences and pairs. Order: word pieces (Rust, in parallel) → per-sentence
   * truncation → truncation of the whole encoding → special tokens → padding (to the longest or fixed).
   */
  async encodeBatch(
    inputs: readonly WordPieceInput[],
    opts: WordPieceEncodeOptions = {},
  ): Promise<WordPieceEncoding[]> {
    if (!Array.isArray(inputs))
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        'encodeBatch expects an array of strings or [string, string] pairs.',
      );
    const o = resolveEncodeOptions(opts);
    const sentences: string[] = [];
    inputs.forEach((input, i) => {
      if (typeof input === 'string') sentences.push(input);
      else if (Array.isArray(input) && input.length === 2) {
        sentences.push(checkText(input[0], `inputs[${i}][0]`), checkText(input[1], `inputs[${i}][1]`));
      } else throw new TokenizerError('INVALID_ARGUMENT', `inputs[${i}] must be a string or a [string, string] pair.`);
    });
    let pieces: Encoding[];
    try {
      pieces = await this.raw.encodeBatch(sentences, { addSpecialTokens: false });
    } catch (err) {
      throw encodeFailed(err, `a batch of ${inputs.length} inputs`);
    }
    if (o.maxTokensPerSentence !== undefined) for (const e of pieces) e.truncate(o.maxTokensPerSentence, 0, 'right');
    if (o.truncation !== undefined) await this.checkTruncationRoom(o, inputs);
    const finals = this.postProcessAll(inputs, pieces, o);
    if (o.padding !== undefined) pad(finals, o.padding, this.specialIds.pad);
    return finals.map(toResult);
  }

  /**
   * Token ids of a whole text corpus, line by line (split on "\n"), without special tokens: the input of
   * language-model training. Equal to the word pieces of the whole text, since BERT splits at whitespace.
   */
  async encodeCorpus(text: string, opts: EncodeCorpusOptions = {}): Promise<Int32Array> {
    checkText(text, 'text');
    const linesPerBatch = opts.linesPerBatch ?? 2048;
    assertInteger('linesPerBatch', linesPerBatch, 1);
    const lineEnd = opts.lineEndId;
    if (lineEnd !== undefined) assertInteger('lineEndId', lineEnd, 0, this.vocabSize - 1);
    const lines = text.split('\n');
    let out = new Int32Array(Math.max(1024, text.length >> 2));
    let n = 0;
    const batchAt = (start: number): Promise<Encoding[]> =>
      this.raw.encodeBatch(lines.slice(start, start + linesPerBatch), { addSpecialTokens: false });
    let next: Promise<Encoding[]> | undefined = lines.length > 0 ? batchAt(0) : undefined;
    for (let start = 0; next !== undefined; start += linesPerBatch) {
      let batch: Encoding[];
      try {
        batch = await next;
      } catch (err) {
        throw encodeFailed(err, `corpus lines ${start + 1}–${start + linesPerBatch}`);
      }
      // Start the next batch in Rust while this one is copied out here.
      next = start + linesPerBatch < lines.length ? batchAt(start + linesPerBatch) : undefined;
      for (const e of batch) {
        const ids = e.getIds();
        if (n + ids.length + 1 > out.length) out = grow(out, n + ids.length + 1);
        for (const id of ids) out[n++] = id;
        if (lineEnd !== undefined && ids.length > 0) out[n++] = lineEnd;
      }
    }
    return out.slice(0, n);
  }

  /**
   * Text of token ids, as HF `decode`: special tokens dropped (unless `skipSpecialTokens: false`), then HF's
   * WordPiece decoder joins `##` pieces to the previous token and removes the spaces before punctuation.
   */
  decode(ids: ArrayLike<number>, opts: { readonly skipSpecialTokens?: boolean } = {}): string {
    const skip = opts.skipSpecialTokens ?? true;
    const tokens: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const token = id === undefined ? undefined : this.vocab.tokens[id];
      if (token === undefined || !Number.isInteger(id)) {
        throw new TokenizerError(
          'INVALID_ARGUMENT',
          `decode: ids[${i}] = ${String(id)} is not a token id of this vocabulary (0 … ${this.vocabSize - 1}).`,
        );
      }
      if (!(skip && this.skipOnDecode.has(id as number))) tokens.push(token);
    }
    return this.decoder === null ? tokens.join(' ') : this.decoder.decode(tokens);
  }

  /** Save the configured HF tokenizer as a tokenizer.json (atomic write); `fromTokenizerJson` reads it back. */
  saveTokenizerJson(path: string): void {
    writeFileAtomicSync(resolve(path), (tmp) => this.raw.save(tmp, true)); // fills a temp file, then renames it
  }

  /** Number of special tokens the post-processor adds to a single sequence and to a pair. */
  private countSpecialTokens(): Promise<{ single: number; pair: number }> {
    this.specialCounts ??= this.raw.encode('', null, { addSpecialTokens: false }).then((empty) => ({
      single: this.post.postProcess(empty, null, true).getLength(),
      pair: this.post.postProcess(empty, empty, true).getLength(),
    }));
    return this.specialCounts;
  }

  /** HF leaves an encoding untouched when maxLength ≤ special tokens; we reject that instead. */
  private async checkTruncationRoom(o: ResolvedEncodeOptions, inputs: readonly WordPieceInput[]): Promise<void> {
    if (o.truncation === undefined) return;
    const counts = o.addSpecialTokens ? await this.countSpecialTokens() : { single: 0, pair: 0 };
    const hasPair = inputs.some((x) => typeof x !== 'string');
    const need = hasPair ? counts.pair : counts.single;
    if (o.truncation.maxLength <= need) {
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        `truncation.maxLength = ${o.truncation.maxLength} leaves no room for text: the post-processor adds ${need} special tokens ` +
          `to a ${hasPair ? 'pair' : 'single sentence'}; use maxLength ≥ ${need + 1}.`,
      );
    }
  }

  /** Truncation and special tokens through HF's own `postProcess`, synchronously (no other call can interleave). */
  private postProcessAll(inputs: readonly WordPieceInput[], pieces: Encoding[], o: ResolvedEncodeOptions): Encoding[] {
    const t = o.truncation;
    if (t !== undefined) {
      const strategy = hfStrategy(t.strategy) as HfTruncationStrategy;
      this.post.setTruncation(t.maxLength, { strategy, direction: t.direction, stride: 0 });
    }
    try {
      const out: Encoding[] = [];
      let k = 0;
      for (let i = 0; i < inputs.length; i++) {
        const a = pieces[k++];
        const b = typeof inputs[i] === 'string' ? null : pieces[k++];
        if (a === undefined || b === undefined) {
          throw new TokenizerError('ENCODE_FAILED', 'The Rust encodeBatch returned fewer encodings than inputs.');
        }
        try {
          out.push(this.post.postProcess(a, b, o.addSpecialTokens));
        } catch (err) {
          throw encodeFailed(err, `inputs[${i}]`);
        }
      }
      return out;
    } finally {
      if (t !== undefined) this.post.disableTruncation();
    }
  }
}

/** Pad every encoding to the longest (or a fixed length), rounded up to a multiple; HF `pad_encodings`. */
function pad(encodings: Encoding[], p: NonNullable<ResolvedEncodeOptions['padding']>, padId: number): void {
  let target = p.strategy === 'fixed' ? p.length : encodings.reduce((m, e) => Math.max(m, e.getLength()), 0);
  if (target % p.multiple !== 0) target += p.multiple - (target % p.multiple);
  for (const e of encodings) {
    if (e.getLength() < target) e.pad(target, { padId, padTypeId: 0, padToken: '[PAD]', direction: p.direction });
  }
}

function toResult(e: Encoding): WordPieceEncoding {
  return {
    ids: Int32Array.from(e.getIds()),
    typeIds: Int32Array.from(e.getTypeIds()),
    attentionMask: Int32Array.from(e.getAttentionMask()),
    specialTokensMask: Int32Array.from(e.getSpecialTokensMask()),
    tokens: e.getTokens(),
  };
}

function grow(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

// The Wikitext word-level tokenizer in plain TypeScript (no Node built-ins): the one implementation of its encoding
// rules, vocabulary order and vocabulary-file format, used by the Node entry's WordLevelTokenizer and by browsers.
import { TokenizerError, messageOf } from './errors.js';
import { WordIndex } from './word-index.js';

/** End-of-line token appended to every line. */
export const EOS = '<eos>';
/** Token for words not in the vocabulary (Wikitext already writes rare words as `<unk>`). */
export const UNK = '<unk>';

const FORMAT = 'grassflow-word-level-vocab';
const VERSION = 1;

/** Byte classes: 1 = word separator (space, \t, \v, \f, \r), 2 = line end (\n), 0 = part of a word. */
const CLASS = new Uint8Array(256);
for (const b of [0x20, 0x09, 0x0b, 0x0c, 0x0d]) CLASS[b] = 1;
CLASS[0x0a] = 2;

const utf8 = new TextEncoder();
// ignoreBOM: keep a U+FEFF that begins a word (Wikitext-2 train has such a word) instead of dropping it.
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The one scanner of the encoding rules: `word(start, end)` for each word of `bytes` (a maximal run of bytes of class
 * 0), then `lineEnd()` after each line's words; a last line without "\n" is a line too. Returns the number of lines.
 */
function forEachWord(bytes: Uint8Array, word: (start: number, end: number) => void, lineEnd: () => void): number {
  const n = bytes.length;
  let lines = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j < n && CLASS[bytes[j]!] !== 2) {
      while (j < n && CLASS[bytes[j]!] === 1) j++;
      const start = j;
      while (j < n && CLASS[bytes[j]!] === 0) j++;
      if (j > start) word(start, j);
    }
    lineEnd();
    lines++;
    i = j + 1;
  }
  return lines;
}

function bytesOf(text: string | Uint8Array, name: string): Uint8Array {
  if (typeof text === 'string') return utf8.encode(text);
  // A plain Uint8Array view (no copy): a Buffer subclass would make the scanning loops polymorphic and slower.
  if (text instanceof Uint8Array)
    return text.constructor === Uint8Array ? text : new Uint8Array(text.buffer, text.byteOffset, text.byteLength);
  throw new TokenizerError(
    'INVALID_ARGUMENT',
    `${name} must be a string or a Uint8Array of UTF-8, got ${typeof text}.`,
  );
}

/** A saved vocabulary (JSON). `sha256` covers `words.join("\n")` and guards against edits and truncation. */
export interface WordLevelVocabFile {
  format: typeof FORMAT;
  version: typeof VERSION;
  order: string;
  eos: string;
  unk: string;
  size: number;
  sha256: string;
  words: string[];
}

/**
 * The words of a corpus (text or UTF-8 bytes) in order of first appearance: lines top to bottom, each line's words
 * left to right followed by its `<eos>`; `<unk>` last when the corpus lacks it (see {@link PureWordLevelTokenizer}).
 */
export function wordLevelVocabulary(corpus: string | Uint8Array): string[] {
  const bytes = bytesOf(corpus, 'corpus');
  const index = new WordIndex();
  const words: string[] = [];
  const add = (start: number, end: number): void => {
    if (index.add(bytes, start, end) === words.length) words.push(utf8Decoder.decode(bytes.subarray(start, end)));
  };
  const eos = utf8.encode(EOS);
  const lines = forEachWord(bytes, add, () => {
    if (index.add(eos, 0, eos.length) === words.length) words.push(EOS);
  });
  if (lines === 0) {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      'Cannot build a word-level vocabulary from an empty corpus; pass the text of the training split.',
    );
  }
  if (!words.includes(UNK)) words.push(UNK);
  return words;
}

/** The JSON object of a saved vocabulary, given the SHA-256 (hex) of `words.join("\n")`. */
export function wordLevelVocabFile(words: readonly string[], sha256: string): WordLevelVocabFile {
  return {
    format: FORMAT,
    version: VERSION,
    order: 'first appearance in the corpus: lines top to bottom, words left to right, then <eos>',
    eos: EOS,
    unk: UNK,
    size: words.length,
    sha256,
    words: [...words],
  };
}

/** `BAD_VOCAB_FILE`: `source` is not a usable vocabulary, because of `what`. */
export function badWordLevelVocabFile(source: string, what: string): TokenizerError {
  return new TokenizerError(
    'BAD_VOCAB_FILE',
    `${source} is not a usable word-level vocabulary: ${what}. Rebuild it with fromCorpusFile(...).save(path).`,
    { file: source },
  );
}

/**
 * The words and recorded SHA-256 of a saved vocabulary's text, with format, version, special tokens and size checked
 * (`BAD_VOCAB_FILE` otherwise); the caller checks the SHA-256 (Node: node:crypto, browsers: Web Crypto).
 */
export function parseWordLevelVocabFile(text: string, source: string): { words: string[]; sha256: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badWordLevelVocabFile(source, `it is not valid JSON (${messageOf(err)})`);
  }
  const f = parsed as Partial<WordLevelVocabFile> | null;
  if (typeof f !== 'object' || f === null || f.format !== FORMAT)
    throw badWordLevelVocabFile(source, `"format" is not "${FORMAT}"`);
  if (f.version !== VERSION)
    throw badWordLevelVocabFile(source, `version ${String(f.version)} is not supported (expected ${VERSION})`);
  if (f.eos !== EOS || f.unk !== UNK) throw badWordLevelVocabFile(source, `"eos"/"unk" must be "${EOS}"/"${UNK}"`);
  const words = f.words;
  if (!Array.isArray(words) || !words.every((w): w is string => typeof w === 'string'))
    throw badWordLevelVocabFile(source, '"words" is not an array of strings');
  if (f.size !== words.length)
    throw badWordLevelVocabFile(source, `"size" is ${String(f.size)} but "words" has ${words.length} entries`);
  return { words, sha256: String(f.sha256) };
}

/** What this file needs of Web Crypto's SubtleCrypto (lib ES2022 has no DOM types). */
interface WebCryptoDigest {
  digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>;
}

/** SHA-256 (hex) of the UTF-8 of `text` by Web Crypto (browsers in a secure context, workers, Node ≥ 19). */
async function webSha256Hex(text: string): Promise<string> {
  const subtle = (globalThis as { crypto?: { subtle?: WebCryptoDigest } }).crypto?.subtle;
  if (subtle === undefined) {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      'Web Crypto (crypto.subtle) is not available to check the word-level vocabulary: browsers offer it only in a ' +
        'secure context (https:// or http://localhost / 127.0.0.1); serve the page from one.',
    );
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', utf8.encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Word-level tokenizer of the Wikitext `.tokens` format, in plain TypeScript (the Node entry's `WordLevelTokenizer`
 * adds files and synchronous hashing on top of it; both give the same ids and text).
 *
 * Line convention (how the files are written): a line is " " + words.join(" ") + " \n", a blank line is
 * " \n". Encoding: the text is cut at "\n" (a final "\n" ends the last line, it does not start a new one);
 * each line gives its words — maximal runs of bytes other than ASCII whitespace (space, \t, \v, \f, \r) —
 * then one `<eos>`; a word outside the vocabulary gives `<unk>`. Decoding writes " " + word for each word
 * and " \n" for each `<eos>`, so `decode(encode(text)) === text` for any file in that convention without
 * out-of-vocabulary words (all three Wikitext-2 splits). Unlike Python's `str.split()`, non-ASCII
 * whitespace (e.g. U+00A0) stays inside a word; Wikitext holds none.
 *
 * Vocabulary order (deterministic): order of first appearance in the corpus, reading lines top to bottom
 * and each line's words left to right followed by its `<eos>` — the `Dictionary` of PyTorch's
 * word_language_model example. On Wikitext-2 train `<eos>` gets id 0 (the file starts with a blank line),
 * then "=" 1, "Valkyria" 2, …; `<unk>` is wherever it first occurs (a corpus without it gets `<unk>` last).
 */
export class PureWordLevelTokenizer {
  /** Stable identity for caches: `wordlevel:<sha256 of the words joined by "\n">`. */
  readonly id: string;
  /** Number of word types, `<eos>` and `<unk>` included (33,278 for Wikitext-2 train). */
  readonly vocabSize: number;
  /** Id of `<eos>`. */
  readonly eosId: number;
  /** Id of `<unk>`. */
  readonly unkId: number;

  private readonly wordList: readonly string[];
  private readonly index: WordIndex;
  /**
   * Decoding table: the UTF-8 of " " + word for each id (" \n" for `<eos>`), back to back; id's bytes start at
   * spacedStart[id].
   */
  private readonly spaced: Uint8Array;
  private readonly spacedStart: Int32Array;
  private readonly ids: ReadonlyMap<string, number>;

  /** `sha256`: the SHA-256 (hex) of `words.join("\n")`, which the id carries. */
  protected constructor(words: readonly string[], source: string, sha256: string) {
    const index = new WordIndex();
    const ids = new Map<string, number>();
    words.forEach((word, i) => {
      if (typeof word !== 'string' || word.length === 0 || /[ \t\n\v\f\r]/.test(word)) {
        throw new TokenizerError(
          'BAD_VOCAB',
          `Word-level vocabulary ${source}: word ${i} (${JSON.stringify(word)}) is empty or contains ASCII whitespace; ` +
            'a word is a maximal run of non-whitespace bytes.',
        );
      }
      if (ids.has(word)) {
        throw new TokenizerError(
          'BAD_VOCAB',
          `Word-level vocabulary ${source}: ${JSON.stringify(word)} appears twice (ids ${ids.get(word)} and ${i}).`,
        );
      }
      ids.set(word, i);
      const b = utf8.encode(word);
      index.add(b, 0, b.length);
    });
    const eos = ids.get(EOS);
    const unk = ids.get(UNK);
    if (eos === undefined || unk === undefined) {
      throw new TokenizerError(
        'BAD_VOCAB',
        `Word-level vocabulary ${source} lacks ${eos === undefined ? EOS : UNK}; it needs both ${EOS} and ${UNK}.`,
      );
    }
    this.wordList = words;
    this.index = index;
    const pieces = words.map((w, i) => utf8.encode(i === eos ? ' \n' : ' ' + w));
    this.spacedStart = new Int32Array(words.length + 1);
    pieces.forEach((p, i) => (this.spacedStart[i + 1] = this.spacedStart[i]! + p.length));
    this.spaced = new Uint8Array(this.spacedStart[words.length]!);
    pieces.forEach((p, i) => this.spaced.set(p, this.spacedStart[i]));
    this.ids = ids;
    this.vocabSize = words.length;
    this.eosId = eos;
    this.unkId = unk;
    this.id = `wordlevel:${sha256}`;
  }

  /**
   * The tokenizer of a vocabulary file's text (what `WordLevelTokenizer.save` writes, e.g. a run folder's
   * word-vocab.json): format, size and SHA-256 checked (`BAD_VOCAB_FILE`, naming `source`).
   */
  static async fromVocabFileText(text: string, source = 'the word-level vocabulary'): Promise<PureWordLevelTokenizer> {
    const { words, sha256 } = parseWordLevelVocabFile(text, source);
    if (sha256 !== (await webSha256Hex(words.join('\n'))))
      throw badWordLevelVocabFile(source, 'the SHA-256 of "words" does not match "sha256" (file edited or damaged)');
    try {
      return new PureWordLevelTokenizer(words, source, sha256);
    } catch (err) {
      throw badWordLevelVocabFile(source, messageOf(err));
    }
  }

  /** The words in id order. */
  words(): readonly string[] {
    return this.wordList;
  }

  /** Id of a word, or undefined. */
  tokenToId(word: string): number | undefined {
    return this.ids.get(word);
  }

  /** Word of an id, or undefined when out of range. */
  idToToken(id: number): string | undefined {
    return this.wordList[id];
  }

  /** Ids of a text (string or UTF-8 bytes): per line its words (`<unk>` when unknown), then `<eos>`. */
  encode(text: string | Uint8Array): Int32Array {
    const bytes = bytesOf(text, 'text');
    const index = this.index;
    const unk = this.unkId;
    const eos = this.eosId;
    let out = new Int32Array(Math.max(256, bytes.length >> 2));
    let k = 0;
    forEachWord(
      bytes,
      (start, end) => {
        if (k === out.length) out = grow(out);
        const id = index.find(bytes, start, end);
        out[k++] = id < 0 ? unk : id;
      },
      () => {
        if (k === out.length) out = grow(out);
        out[k++] = eos;
      },
    );
    return out.slice(0, k);
  }

  /**
   * Ids of a prompt: the words of `text` taken as one line, without its `<eos>` (what `grassflow-lm generate` feeds
   * the model; leading and trailing whitespace dropped).
   */
  encodePrompt(text: string): Int32Array {
    const ids = this.encode(text.trim());
    return ids.subarray(0, Math.max(0, ids.length - 1));
  }

  /**
   * Text of ids in the `.tokens` convention: " " + word per word, " \n" per `<eos>`. Built as UTF-8 bytes in
   * one buffer and decoded once (no string per token).
   */
  decode(ids: ArrayLike<number>): string {
    const starts = this.spacedStart;
    const V = this.vocabSize;
    let total = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!(id >= 0 && id < V && Number.isInteger(id))) {
        throw new TokenizerError(
          'INVALID_ARGUMENT',
          `decode: ids[${i}] = ${String(id)} is not a word id (0 … ${V - 1}).`,
        );
      }
      total += starts[id + 1]! - starts[id]!;
    }
    const out = new Uint8Array(total);
    const spaced = this.spaced;
    let k = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const end = starts[id + 1]!;
      for (let j = starts[id]!; j < end; j++) out[k++] = spaced[j]!;
    }
    return utf8Decoder.decode(out);
  }
}

function grow(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

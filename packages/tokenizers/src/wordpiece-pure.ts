// BERT WordPiece in plain TypeScript, for browsers (no native binding): the steps of Hugging Face `tokenizers` as
// bert-base-uncased's tokenizer.json configures them, so that the ids equal WordPieceTokenizer's (HF's Rust library).
//
// 1. special tokens ([PAD] [UNK] [CLS] [SEP] [MASK]) are cut out of the raw text first (leftmost-longest, verbatim);
// 2. BertNormalizer: drop U+0000, U+FFFD and control characters (Unicode C*, except \t \n \r), every White_Space
//    character → ' ', spaces around CJK ideographs, then (uncased) NFD without nonspacing marks (Mn) and lowercase,
//    character by character (no context-dependent final sigma);
// 3. BertPreTokenizer: split on White_Space, then every punctuation character (ASCII punctuation or Unicode P*)
//    becomes a word of its own;
// 4. WordPiece: greedy longest match from the left, continuations prefixed '##'; a word longer than 100 characters or
//    one that cannot be covered becomes [UNK];
// 5. template [CLS] A [SEP] when special tokens are added.
import { TokenizerError } from './errors.js';
import { BERT_SPECIAL_TOKENS, checkedVocab, parseVocabTxt, type WordPieceVocab } from './wordpiece-vocab.js';

/** Max characters of one word; longer words become [UNK] (HF and google-research/bert default). */
const MAX_INPUT_CHARS_PER_WORD = 100;
const CONTINUATION = '##';

/** CJK Unified Ideographs and their extensions and compatibility blocks, as BertNormalizer's is_chinese_char. */
function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

const WHITESPACE = /^[\t\n\r\p{White_Space}]$/u;
const CONTROL = /^\p{C}$/u; // Cc, Cf, Cs, Co, Cn: Rust's char::is_other, as HF's is_control
const NONSPACING_MARK = /\p{Mn}/gu;
const PUNCTUATION = /^[!-/:-@[-`{-~\p{P}]$/u; // ASCII punctuation or Unicode P*

/** BertNormalizer on one piece of text (special tokens already cut out). */
function normalize(text: string, lowercase: boolean): string {
  let out = '';
  for (const c of text) {
    const cp = c.codePointAt(0) as number;
    if (cp === 0 || cp === 0xfffd) continue;
    if (WHITESPACE.test(c)) {
      out += ' ';
      continue;
    }
    if (CONTROL.test(c)) continue;
    out += isChineseChar(cp) ? ` ${c} ` : c;
  }
  if (!lowercase) return out;
  let lower = '';
  for (const c of out.normalize('NFD').replace(NONSPACING_MARK, '')) lower += c.toLowerCase();
  return lower;
}

/** BertPreTokenizer: words split on white space, each punctuation character a word of its own. */
function preTokenize(text: string): string[] {
  const words: string[] = [];
  let word = '';
  for (const c of text) {
    if (WHITESPACE.test(c)) {
      if (word !== '') words.push(word);
      word = '';
    } else if (PUNCTUATION.test(c)) {
      if (word !== '') words.push(word);
      words.push(c);
      word = '';
    } else word += c;
  }
  if (word !== '') words.push(word);
  return words;
}

/** HF's WordPiece decoder cleanup of one token (with its leading space). */
function cleanup(token: string): string {
  return token
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(' do not', " don't")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}

/** Options of {@link PureWordPieceTokenizer.fromVocabText}. */
export interface PureWordPieceOptions {
  /** Lowercase and strip accents (uncased BERT). Default true; false for a cased vocabulary. */
  readonly lowercase?: boolean;
}

/** What `encode` returns: the ids and their token strings. */
export interface PureWordPieceEncoding {
  readonly ids: Int32Array;
  readonly tokens: readonly string[];
}

/**
 * BERT WordPiece with no native code: the same ids as {@link WordPieceTokenizer} (HF's Rust library) for the same
 * vocabulary — the browser's tokenizer. Encoding is synchronous; it covers single sentences (no pairs, truncation
 * or padding: use WordPieceTokenizer in Node for those).
 */
export class PureWordPieceTokenizer {
  /** Number of tokens in the vocabulary (30,522 for bert-base-uncased). */
  readonly vocabSize: number;
  readonly specialIds: { readonly pad: number; readonly unk: number; readonly cls: number; readonly sep: number };

  private readonly specials: readonly string[];
  private readonly specialSet: ReadonlySet<number>;

  private constructor(
    private readonly vocab: WordPieceVocab,
    private readonly lowercase: boolean,
  ) {
    this.vocabSize = vocab.tokens.length;
    const id = (t: string): number => vocab.ids.get(t) as number; // checkedVocab guarantees the four
    this.specialIds = { pad: id('[PAD]'), unk: id('[UNK]'), cls: id('[CLS]'), sep: id('[SEP]') };
    // Longest first: at one position the longest special token wins (HF matches leftmost-longest).
    this.specials = BERT_SPECIAL_TOKENS.filter((t) => vocab.ids.has(t)).sort((a, b) => b.length - a.length);
    this.specialSet = new Set(this.specials.map(id));
  }

  /** From the text of a vocab.txt (one token per line, id = line number − 1), e.g. fetched by the page. */
  static fromVocabText(text: string, opts: PureWordPieceOptions = {}, source = 'vocab.txt'): PureWordPieceTokenizer {
    return new PureWordPieceTokenizer(parseVocabTxt(text, source), opts.lowercase ?? true);
  }

  /** From tokens in id order. */
  static fromVocab(
    tokens: readonly string[],
    opts: PureWordPieceOptions = {},
    source = 'tokens',
  ): PureWordPieceTokenizer {
    return new PureWordPieceTokenizer(checkedVocab(tokens, source), opts.lowercase ?? true);
  }

  /**
   * This tokenizer as Hugging Face's `tokenizer.json` (what `tokenizers`, transformers.js and transformers read): the
   * bytes WordPieceTokenizer's saveTokenizerJson writes for the same vocabulary, written here without native code.
   */
  tokenizerJson(): string {
    const special = BERT_SPECIAL_TOKENS.filter((t) => this.vocab.ids.has(t))
      .map((content) => ({ id: this.vocab.ids.get(content) as number, content }))
      .sort((a, b) => a.id - b.id);
    const { cls, sep } = this.specialIds;
    const token = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
    const sequence = (id: string, typeId: number) => ({ Sequence: { id, type_id: typeId } });
    const config = {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: special.map(({ id, content }) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: {
        type: 'BertNormalizer',
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: this.lowercase, // as HF's strip_accents = null: it follows lowercase
        lowercase: this.lowercase,
      },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [token('[CLS]', 0), sequence('A', 0), token('[SEP]', 0)],
        pair: [token('[CLS]', 0), sequence('A', 0), token('[SEP]', 0), sequence('B', 1), token('[SEP]', 1)],
        special_tokens: {
          '[CLS]': { id: '[CLS]', ids: [cls], tokens: ['[CLS]'] },
          '[SEP]': { id: '[SEP]', ids: [sep], tokens: ['[SEP]'] },
        },
      },
      decoder: { type: 'WordPiece', prefix: CONTINUATION, cleanup: true },
      model: {
        type: 'WordPiece',
        unk_token: '[UNK]',
        continuing_subword_prefix: CONTINUATION,
        max_input_chars_per_word: MAX_INPUT_CHARS_PER_WORD,
        vocab: null,
      },
    };
    // The vocabulary in id order, as HF writes it: a JS object would put integer-like tokens ("1", "100") first.
    const vocab = this.vocab.tokens.map((t, id) => `      ${JSON.stringify(t)}: ${id}`).join(',\n');
    const text = JSON.stringify(config, null, 2);
    const at = text.lastIndexOf('"vocab": null');
    return `${text.slice(0, at)}"vocab": {\n${vocab}\n    }${text.slice(at + '"vocab": null'.length)}`;
  }

  tokenToId(token: string): number | undefined {
    return this.vocab.ids.get(token);
  }

  idToToken(id: number): string | undefined {
    return this.vocab.tokens[id];
  }

  /** WordPiece of one word: greedy longest match from the left, '##' continuations; [UNK] if it cannot be covered. */
  private wordPieces(word: string, out: string[]): void {
    const chars = Array.from(word);
    if (chars.length > MAX_INPUT_CHARS_PER_WORD) {
      out.push('[UNK]');
      return;
    }
    const pieces: string[] = [];
    for (let start = 0; start < chars.length;) {
      let end = chars.length;
      let piece: string | undefined;
      for (; end > start; end--) {
        const sub = (start > 0 ? CONTINUATION : '') + chars.slice(start, end).join('');
        if (this.vocab.ids.has(sub)) {
          piece = sub;
          break;
        }
      }
      if (piece === undefined) {
        out.push('[UNK]');
        return;
      }
      pieces.push(piece);
      start = end;
    }
    out.push(...pieces);
  }

  /**
   * Token ids of `text`: `[CLS] … [SEP]` around them unless `addSpecialTokens: false`. Special tokens written in the
   * text ("[SEP]", "[UNK]", …, exactly so) are kept as one token each, as HF does.
   */
  encode(text: string, opts: { readonly addSpecialTokens?: boolean } = {}): PureWordPieceEncoding {
    if (typeof text !== 'string') {
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        `text must be a string, got ${text === null ? 'null' : typeof text}.`,
      );
    }
    const tokens: string[] = [];
    let rest = 0;
    const flush = (end: number): void => {
      for (const word of preTokenize(normalize(text.slice(rest, end), this.lowercase))) this.wordPieces(word, tokens);
    };
    for (let i = 0; i < text.length;) {
      const special = text[i] === '[' ? this.specials.find((t) => text.startsWith(t, i)) : undefined;
      if (special === undefined) {
        i++;
        continue;
      }
      flush(i);
      tokens.push(special);
      i += special.length;
      rest = i;
    }
    flush(text.length);
    const all = opts.addSpecialTokens === false ? tokens : ['[CLS]', ...tokens, '[SEP]'];
    return { ids: Int32Array.from(all, (t) => this.vocab.ids.get(t) as number), tokens: all };
  }

  /**
   * Text of token ids, as HF `decode`: special tokens dropped (unless `skipSpecialTokens: false`), '##' pieces joined
   * to the previous token, spaces before punctuation removed.
   */
  decode(ids: ArrayLike<number>, opts: { readonly skipSpecialTokens?: boolean } = {}): string {
    const skip = opts.skipSpecialTokens ?? true;
    let out = '';
    let first = true;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      const token = Number.isInteger(id) ? this.vocab.tokens[id] : undefined;
      if (token === undefined) {
        throw new TokenizerError(
          'INVALID_ARGUMENT',
          `decode: ids[${i}] = ${String(id)} is not a token id of this vocabulary (0 … ${this.vocabSize - 1}).`,
        );
      }
      if (skip && this.specialSet.has(id)) continue;
      const piece = first ? token : token.startsWith(CONTINUATION) ? token.slice(CONTINUATION.length) : ` ${token}`;
      out += cleanup(piece);
      first = false;
    }
    return out;
  }
}

// Options and results of WordPiece encoding: truncation, per-sentence truncation, padding; their validation.
import { assertInteger, TokenizerError } from './errors.js';

/**
 * Which sequence loses tokens when a pair is longer than `maxLength` (HF `TruncationStrategy`):
 * - `longest_first` (HF's rule): with m = maxLength − (special tokens) and n1 ≤ n2 the lengths of the
 *   shorter and the longer sequence, the shorter keeps n1 and the longer keeps max(n1, m − n1); if that is
 *   still over m, the shorter keeps ⌊m/2⌋ and the longer ⌈m/2⌉ (for equal lengths the second is "longer");
 * - `only_first` / `only_second`: cut only that sequence (an error when it is too short to reach maxLength).
 */
export type TruncationStrategy = 'longest_first' | 'only_first' | 'only_second';

/** Truncation of the whole encoding to at most `maxLength` tokens, special tokens included. */
export interface TruncationOptions {
  /** Maximum length of the final encoding, counting [CLS] and [SEP]; must exceed the special-token count. */
  readonly maxLength: number;
  /** Default `longest_first` (HF's default). */
  readonly strategy?: TruncationStrategy;
  /** Side to cut: `right` (default, keep the start) or `left` (keep the end). */
  readonly direction?: 'right' | 'left';
}

/** Padding with [PAD] (type id 0, attention mask 0). HF's rule: never shortens a longer encoding. */
export type PaddingOptions =
  | { readonly strategy: 'longest'; readonly padToMultipleOf?: number; readonly direction?: 'right' | 'left' }
  | {
      readonly strategy: 'fixed';
      readonly length: number;
      readonly padToMultipleOf?: number;
      readonly direction?: 'right' | 'left';
    };

/** Options of {@link WordPieceTokenizer.encode} and `encodeBatch`. */
export interface WordPieceEncodeOptions {
  /** Add [CLS] … [SEP] (and … [SEP] for the pair) from the post-processor. Default true. */
  readonly addSpecialTokens?: boolean;
  /**
   * Per-sentence truncation (the SNLI recipe: "at most K tokens per sentence"): each sentence, premise and
   * hypothesis alike, keeps at most K word pieces, counted before [CLS]/[SEP] are added. Applied first.
   */
  readonly maxTokensPerSentence?: number;
  /** Truncation of the whole encoding (applied after per-sentence truncation, before padding). */
  readonly truncation?: TruncationOptions;
  /** Padding. `longest` pads every encoding of a batch to the longest one; `fixed` to `length`. */
  readonly padding?: PaddingOptions;
}

/** One encoded input. All arrays have the same length (the sequence length L). */
export interface WordPieceEncoding {
  /** Token ids (L). */
  readonly ids: Int32Array;
  /** Segment ids: 0 for [CLS], sentence A and its [SEP]; 1 for sentence B and its [SEP]; 0 for padding. */
  readonly typeIds: Int32Array;
  /** 1 for real tokens, 0 for padding. */
  readonly attentionMask: Int32Array;
  /** 1 for tokens added by the post-processor or padding ([CLS], [SEP], [PAD]), 0 for tokens of the text. */
  readonly specialTokensMask: Int32Array;
  /** The token strings, e.g. ["[CLS]", "token", "##ization", "[SEP]"]. */
  readonly tokens: readonly string[];
}

/** One input of a batch: a sentence, or a pair [sentence A, sentence B]. */
export type WordPieceInput = string | readonly [string, string];

/** Options checked and completed with their defaults. */
export interface ResolvedEncodeOptions {
  readonly addSpecialTokens: boolean;
  readonly maxTokensPerSentence: number | undefined;
  readonly truncation: Required<TruncationOptions> | undefined;
  readonly padding:
    | {
        readonly strategy: 'longest' | 'fixed';
        readonly length: number;
        readonly multiple: number;
        readonly direction: 'right' | 'left';
      }
    | undefined;
}

const STRATEGIES: readonly TruncationStrategy[] = ['longest_first', 'only_first', 'only_second'];

function checkDirection(name: string, value: unknown): 'right' | 'left' {
  if (value === undefined) return 'right';
  if (value !== 'right' && value !== 'left') {
    throw new TokenizerError('INVALID_ARGUMENT', `${name} must be "right" or "left", got ${JSON.stringify(value)}.`);
  }
  return value;
}

/** Validate encode options and fill in defaults; throws `INVALID_ARGUMENT` naming the bad field. */
export function resolveEncodeOptions(opts: WordPieceEncodeOptions = {}): ResolvedEncodeOptions {
  const addSpecialTokens = opts.addSpecialTokens ?? true;
  if (typeof addSpecialTokens !== 'boolean') {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      `addSpecialTokens must be a boolean, got ${String(addSpecialTokens)}.`,
    );
  }
  const k = opts.maxTokensPerSentence;
  if (k !== undefined) assertInteger('maxTokensPerSentence', k, 1);
  let truncation: Required<TruncationOptions> | undefined;
  if (opts.truncation !== undefined) {
    const t = opts.truncation;
    assertInteger('truncation.maxLength', t.maxLength, 1);
    const strategy = t.strategy ?? 'longest_first';
    if (!STRATEGIES.includes(strategy)) {
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        `truncation.strategy must be one of ${STRATEGIES.join(', ')}, got ${JSON.stringify(strategy)}.`,
      );
    }
    truncation = { maxLength: t.maxLength, strategy, direction: checkDirection('truncation.direction', t.direction) };
  }
  let padding: ResolvedEncodeOptions['padding'];
  if (opts.padding !== undefined) {
    const p = opts.padding;
    const multiple = p.padToMultipleOf ?? 1;
    assertInteger('padding.padToMultipleOf', multiple, 1);
    const direction = checkDirection('padding.direction', p.direction);
    if (p.strategy === 'fixed') {
      assertInteger('padding.length', p.length, 1);
      padding = { strategy: 'fixed', length: p.length, multiple, direction };
    } else if (p.strategy === 'longest') {
      padding = { strategy: 'longest', length: 0, multiple, direction };
    } else {
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        `padding.strategy must be "longest" or "fixed", got ${JSON.stringify((p as { strategy: unknown }).strategy)}.`,
      );
    }
  }
  return { addSpecialTokens, maxTokensPerSentence: k, truncation, padding };
}

/** HF's strategy names for the Rust binding (its `TruncationStrategy` const enum holds these strings). */
export function hfStrategy(s: TruncationStrategy): 'LongestFirst' | 'OnlyFirst' | 'OnlySecond' {
  return s === 'longest_first' ? 'LongestFirst' : s === 'only_first' ? 'OnlyFirst' : 'OnlySecond';
}

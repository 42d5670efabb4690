// Reading and checking a BERT WordPiece vocabulary: vocab.txt (id = line number − 1) or a tokenizer.json model.
import { TokenizerError } from './errors.js';

/** Special tokens every BERT WordPiece vocabulary must hold (the HF `BertTokenizerFast` defaults). */
export const REQUIRED_SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;
/**
 * Special tokens registered as HF "special added tokens" when present: matched verbatim in input text, skipped on
 * decode.
 */
export const BERT_SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

/** A vocabulary in id order: `tokens[id]` is the token of `id`, `ids` the inverse map. */
export interface WordPieceVocab {
  readonly tokens: readonly string[];
  readonly ids: ReadonlyMap<string, number>;
}

const VOCAB_HINT =
  'Pass the vocab.txt of a BERT uncased model (one token per line, id = line number − 1; ' +
  'bert-base-uncased has 30,522 lines starting [PAD], [unused0], …).';

/**
 * Parse vocab.txt text. Each line is one token; trailing whitespace is trimmed as the HF Rust reader does
 * (`line.trim_end()`), and one final newline ends the file. Empty or duplicate tokens are errors: HF would
 * give a duplicate the later id and leave the earlier id without a token.
 */
export function parseVocabTxt(text: string, source: string): WordPieceVocab {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) {
    throw new TokenizerError('BAD_VOCAB', `WordPiece vocab ${source} is empty (0 tokens). ${VOCAB_HINT}`, {
      file: source,
    });
  }
  return checkedVocab(
    lines.map((line) => line.trimEnd()),
    source,
  );
}

/**
 * Build a vocabulary from tokens in id order, rejecting empty tokens, duplicates, and vocabularies
 * without [PAD], [UNK], [CLS] and [SEP].
 */
export function checkedVocab(tokens: readonly string[], source: string): WordPieceVocab {
  if (tokens.length === 0) {
    throw new TokenizerError('BAD_VOCAB', `WordPiece vocab ${source} is empty (0 tokens). ${VOCAB_HINT}`, {
      file: source,
    });
  }
  const ids = new Map<string, number>();
  for (let id = 0; id < tokens.length; id++) {
    const token = tokens[id];
    if (typeof token !== 'string' || token.length === 0) {
      throw new TokenizerError(
        'BAD_VOCAB',
        `WordPiece vocab ${source}: token ${id} (line ${id + 1}) is empty; every line must hold one token. ${VOCAB_HINT}`,
        { file: source },
      );
    }
    const previous = ids.get(token);
    if (previous !== undefined) {
      throw new TokenizerError(
        'BAD_VOCAB',
        `WordPiece vocab ${source}: token ${JSON.stringify(token)} appears twice (ids ${previous} and ${id}); ` +
          'each token must appear once.',
        { file: source },
      );
    }
    ids.set(token, id);
  }
  const missing = REQUIRED_SPECIAL_TOKENS.filter((t) => !ids.has(t));
  if (missing.length > 0) {
    throw new TokenizerError(
      'BAD_VOCAB',
      `WordPiece vocab ${source} lacks ${missing.join(', ')}; a BERT vocabulary needs ` +
        `${REQUIRED_SPECIAL_TOKENS.join(', ')}. ${VOCAB_HINT}`,
      { file: source },
    );
  }
  return { tokens, ids };
}

/** The parts of a HF tokenizer.json this package reads itself (the rest is read by the Rust library). */
export interface TokenizerJsonSummary {
  readonly vocab: WordPieceVocab;
  /** Ids of `added_tokens` with `special: true`: matched verbatim in input, skipped by decode. */
  readonly specialIds: readonly number[];
  /** `normalizer.lowercase` of a BertNormalizer; false for any other normalizer. */
  readonly lowercase: boolean;
  /** The JSON without `model.vocab`, with sorted keys: the pipeline configuration, for the identity hash. */
  readonly configText: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON text with object keys sorted at every level, so equal configurations give equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Check a tokenizer.json (parsed) and pull out its WordPiece vocabulary: `model.type` must be
 * "WordPiece" and `model.vocab` must map tokens to the ids 0 … V−1, each used once.
 */
export function summarizeTokenizerJson(text: string, source: string): TokenizerJsonSummary {
  const fail = (what: string): never => {
    throw new TokenizerError(
      'BAD_TOKENIZER_JSON',
      `${source} is not a usable WordPiece tokenizer.json: ${what}. Pass the tokenizer.json of a BERT model ` +
        '(e.g. bert-base-uncased from the Hugging Face hub), or build from its vocab.txt with WordPieceTokenizer.fromVocabFile.',
      { file: source },
    );
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return fail(`it is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!isRecord(parsed)) return fail('the top level is not a JSON object');
  const model = parsed['model'];
  if (!isRecord(model)) return fail('it has no "model" object');
  if (model['type'] !== 'WordPiece') return fail(`its model type is ${JSON.stringify(model['type'])}, not "WordPiece"`);
  const rawVocab = model['vocab'];
  if (!isRecord(rawVocab)) return fail('"model.vocab" is not an object mapping tokens to ids');
  const entries = Object.entries(rawVocab);
  const tokens: string[] = new Array<string>(entries.length);
  const seen = new Uint8Array(entries.length);
  for (const [token, id] of entries) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= entries.length) {
      return fail(
        `"model.vocab" gives ${JSON.stringify(token)} the id ${String(id)}; ids must be 0 … ${entries.length - 1}`,
      );
    }
    if (seen[id] === 1) return fail(`"model.vocab" gives the id ${id} to two tokens`);
    seen[id] = 1;
    tokens[id] = token;
  }
  let vocab: WordPieceVocab;
  try {
    vocab = checkedVocab(tokens, source);
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const specialIds: number[] = [];
  const added = parsed['added_tokens'];
  if (added !== undefined && !Array.isArray(added)) return fail('"added_tokens" is not an array');
  for (const entry of (added ?? []) as unknown[]) {
    if (!isRecord(entry) || typeof entry['id'] !== 'number' || typeof entry['content'] !== 'string') {
      return fail('an entry of "added_tokens" lacks a numeric "id" or a string "content"');
    }
    if (entry['special'] === true) specialIds.push(entry['id']);
  }
  const normalizer = parsed['normalizer'];
  const lowercase = isRecord(normalizer) && normalizer['type'] === 'BertNormalizer' && normalizer['lowercase'] === true;
  const config = { ...parsed, model: { ...model, vocab: null } };
  return { vocab, specialIds, lowercase, configText: stableJson(config) };
}

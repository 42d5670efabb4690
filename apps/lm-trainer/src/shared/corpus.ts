// Tokenizers and WikiText-2 token ids for the trainer: WordPiece (default) or word level, on the `.tokens` files.
import {
  BERT_VOCAB_REL_PATH,
  ensureDataFile,
  existingDataDir,
  loadWikitextIds,
  wikitextRelPath,
  type WikitextSplit,
} from '@grassflow/datasets';
import { checkTokenIds, WIKITEXT_WORDPIECE_PREPARATION, type loadPretrained } from '@grassflow/gpu-layers';
import { UsageError } from '@grassflow/training';
import { wikitextForWordPiece, wordPieceLines, WordLevelTokenizer, WordPieceTokenizer } from '@grassflow/tokenizers';

export type TokenizerKind = 'wordpiece' | 'word';

/** What the trainer needs from a tokenizer. */
export interface CorpusTokenizer {
  kind: TokenizerKind;
  /** Identity of tokenizer + preprocessing (goes into config.json and the token-id cache key). */
  id: string;
  vocabSize: number;
  encodeCorpus(text: string): Promise<Int32Array>;
  /** Ids of a prompt (no special tokens, no line end). */
  encodePrompt(text: string): Promise<Int32Array>;
  decode(ids: ArrayLike<number>): string;
  /**
   * The word-level tokenizer only: write its vocabulary file (train puts it in the run folder as
   * {@link WORD_VOCAB_FILE}, where the playground reads it).
   */
  saveVocab?: (path: string) => void;
  /** WordPiece only: write the tokenizer as Hugging Face's `tokenizers` saves it (tokenizer.json). */
  saveTokenizerJson?: (path: string) => void;
}

/** A word-level run's vocabulary in its folder: WordLevelTokenizer.save's JSON, read by PureWordLevelTokenizer. */
export const WORD_VOCAB_FILE = 'word-vocab.json';

export { wikitextForWordPiece };

// The preparation's name is gpu-layers', whose fromPretrained reads exports: one definition of it.
const WORDPIECE_PREP = WIKITEXT_WORDPIECE_PREPARATION;
const SEP_ID = 102;

/** Resolve and check the data folder (a missing folder is a DataDirError naming it). */
export function dataDirOrThrow(dataDir: string | undefined): string {
  return existingDataDir(
    dataDir,
    `${wikitextRelPath('train', 'tokens')}, ${wikitextRelPath('valid', 'tokens')}, ${wikitextRelPath('test', 'tokens')} and ${BERT_VOCAB_REL_PATH} ` +
      '(or create the folder to let the trainer download them)',
  );
}

/**
 * The WordPiece tokenizer of a BERT vocab.txt with the trainer's preparation ({@link WORDPIECE_PREPARATION}): the
 * data folder's bert-vocab/vocab.txt, or the copy an export folder holds.
 */
export function wordPieceTokenizer(vocabPath: string): CorpusTokenizer {
  const wp = WordPieceTokenizer.fromVocabFile(vocabPath);
  return {
    kind: 'wordpiece',
    id: `${wp.id}:${WORDPIECE_PREP}`,
    vocabSize: wp.vocabSize,
    encodeCorpus: (text) => wp.encodeCorpus(wikitextForWordPiece(text), { lineEndId: SEP_ID }),
    encodePrompt: async (text) =>
      (await wp.encode(wikitextForWordPiece(text), undefined, { addSpecialTokens: false })).ids,
    // [SEP] ends a line
    decode: (ids) => wordPieceLines(wp.decode(ids, { skipSpecialTokens: false })),
    saveTokenizerJson: (path) => wp.saveTokenizerJson(path),
  };
}

/**
 * How {@link wordPieceTokenizer} prepares text, as an export folder's tokenizer_config.json records it for readers
 * that rebuild the tokenizer elsewhere (the playground's PureWordPieceTokenizer gives the same ids).
 */
export const WORDPIECE_PREPARATION = {
  preparation: WORDPIECE_PREP,
  lowercase: true,
  prompt: 'wikitextForWordPiece(text), then WordPiece without special tokens',
  corpus: 'wikitextForWordPiece(text), each line ended by [SEP]',
  decode: 'wordPieceLines(decode(ids, { skipSpecialTokens: false })): [SEP] ends a line',
  lineEndToken: '[SEP]',
  lineEndId: SEP_ID,
} as const;

/** Build the tokenizer: WordPiece from `bert-vocab/vocab.txt`, or the word-level vocabulary of wiki.train.tokens. */
export async function loadTokenizer(kind: TokenizerKind, dataDir: string): Promise<CorpusTokenizer> {
  if (kind === 'wordpiece') return wordPieceTokenizer(await ensureDataFile(BERT_VOCAB_REL_PATH, { dataDir }));
  const wl = WordLevelTokenizer.fromCorpusFile(await ensureDataFile(wikitextRelPath('train', 'tokens'), { dataDir }));
  return {
    kind,
    id: wl.id,
    vocabSize: wl.vocabSize,
    encodeCorpus: (text) => Promise.resolve(wl.encode(text)),
    encodePrompt: (text) => Promise.resolve(wl.encodePrompt(text)), // one line's words, without its <eos>
    decode: (ids) => wl.decode(ids),
    saveVocab: (path) => wl.save(path),
  };
}

/** Token ids of a WikiText-2 split (`.tokens` file) under the tokenizer, through the datasets token-id cache. */
export async function loadSplitIds(split: WikitextSplit, tok: CorpusTokenizer, dataDir: string): Promise<Int32Array> {
  const r = await loadWikitextIds(
    split,
    { id: tok.id, encodeCorpus: (t: string) => tok.encodeCorpus(t) },
    { variant: 'tokens', dataDir },
  );
  // The forward pass does not read ids back (a device sync per call): they are checked here, where they enter.
  checkTokenIds(r.ids, tok.vocabSize);
  return r.ids;
}

/** Token ids a run trains and validates on, with the tokenizer and data folder they came from. */
export interface RunData {
  tok: CorpusTokenizer;
  dataDir: string;
  train: Int32Array;
  valid: Int32Array;
}

/** The tokenizer and the train/valid ids of the data folder. */
export async function loadRunData(tok: CorpusTokenizer, dataDir: string): Promise<RunData> {
  const [train, valid] = [await loadSplitIds('train', tok, dataDir), await loadSplitIds('valid', tok, dataDir)];
  return { tok, dataDir, train, valid };
}

/** The tokenizer an export folder describes (tokenizer_config.json + the files it names). */
export function tokenizerOfPretrained(
  dir: string,
  tokenizer: Awaited<ReturnType<typeof loadPretrained>>['tokenizer'],
): CorpusTokenizer {
  const { config, paths } = tokenizer;
  const vocab = paths['vocab'];
  if (config.kind !== 'wordpiece' || vocab === undefined) {
    throw new UsageError(
      `${dir}: its tokenizer is "${config.kind}"${vocab === undefined ? ' without a vocab file' : ''}; ` +
        'grassflow-lm reads WordPiece exports (kind "wordpiece", files.vocab)',
      'checkpoint',
    );
  }
  const tok = wordPieceTokenizer(vocab);
  if (typeof config['id'] === 'string' && config['id'] !== tok.id) {
    throw new UsageError(`${dir}: vocab.txt is ${tok.id}, but tokenizer_config.json records ${config['id']}`);
  }
  return tok;
}

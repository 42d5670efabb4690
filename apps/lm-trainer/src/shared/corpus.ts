// Tokenizers and token ids for the trainer: WordPiece (default) or word level, on WikiText-2's `.tokens` files or
// the user's own text files.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import {
  BERT_VOCAB_REL_PATH,
  ensureDataFile,
  existingDataDir,
  loadOrBuildTokenIds,
  loadWikitextIds,
  resolveTokenCacheDir,
  sha256Hex,
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
  /** The token of an id (WordPiece: '##' marks a piece continuing the word before; what generate's text joins). */
  idToToken(id: number): string | undefined;
  /**
   * The word-level tokenizer only: write its vocabulary file (train puts it in the run folder as
   * {@link WORD_VOCAB_FILE}, where the playground reads it).
   */
  saveVocab?: (path: string) => void;
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
    idToToken: (id) => wp.idToToken(id),
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
    idToToken: (id) => wl.idToToken(id),
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

/** Token ids a run trains and validates on, with the tokenizer, data folder and text they came from. */
export interface RunData {
  tok: CorpusTokenizer;
  dataDir: string;
  train: Int32Array;
  valid: Int32Array;
  source: TextSource;
}

/**
 * Token ids of the user's own plain-text files, one after another, under the tokenizer (as its corpus: each line
 * ended by the line-end id). Each file's ids go through the same token-id cache as WikiText-2's, keyed by the
 * file's SHA-256 and the tokenizer id, so a changed file is encoded again and an unchanged one is read back.
 */
export async function loadTextFileIds(paths: readonly string[], tok: CorpusTokenizer): Promise<Int32Array> {
  const parts: Int32Array[] = [];
  const dir = resolveTokenCacheDir();
  for (const path of paths) {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (err) {
      throw new UsageError(`cannot read the text file ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const text = bytes.toString('utf8');
    if (text.trim() === '') throw new UsageError(`the text file ${path} is empty: give a file with some text`);
    const key = {
      name: `text.${basename(path).replace(/[^A-Za-z0-9._-]/g, '_')}`,
      sourceSha256: sha256Hex(bytes),
      encoderKey: JSON.stringify({ corpusEncoder: tok.id }),
    };
    const r = await loadOrBuildTokenIds(dir, key, () => tok.encodeCorpus(text));
    checkTokenIds(r.ids, tok.vocabSize);
    parts.push(r.ids);
  }
  const all = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/**
 * The paths of a comma-separated --train-file/--valid-file/--file list, made absolute (config.json records them, and a
 * resume reads them again from wherever it is started); each must be a file (checked before any slow work).
 */
export function textFileList(list: string, flag: string): string[] {
  const paths = list.split(',').filter((p) => p.trim() !== '');
  if (paths.length === 0) throw new UsageError(`--${flag} needs at least one text file`, flag);
  return paths.map((p) => {
    const path = resolve(p);
    let file: boolean;
    try {
      file = statSync(path).isFile();
    } catch (err) {
      throw new UsageError(
        `--${flag}: cannot read the text file ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        flag,
      );
    }
    if (!file) throw new UsageError(`--${flag}: ${path} is not a file: give plain-text files`, flag);
    return path;
  });
}

/** The share of the training text held out for validation when no --valid-file is given (its end). */
const HELD_OUT_SHARE = 0.1;

/** Where a run's text comes from: WikiText-2's splits, or the user's files (validation: files, or the held-out end). */
export type TextSource = { kind: 'wikitext' } | { kind: 'files'; train: string[]; valid: string[] };

/**
 * The tokenizer and the train/valid ids of a run: WikiText-2's train/valid splits of the data folder, or the user's
 * text files (without validation files, the last {@link HELD_OUT_SHARE} of the training ids validates).
 */
export async function loadRunData(
  tok: CorpusTokenizer,
  dataDir: string,
  source: TextSource = { kind: 'wikitext' },
): Promise<RunData> {
  if (source.kind === 'wikitext') {
    const [train, valid] = [await loadSplitIds('train', tok, dataDir), await loadSplitIds('valid', tok, dataDir)];
    return { tok, dataDir, train, valid, source };
  }
  const ids = await loadTextFileIds(source.train, tok);
  if (source.valid.length > 0)
    return { tok, dataDir, train: ids, valid: await loadTextFileIds(source.valid, tok), source };
  const cut = ids.length - Math.max(2, Math.floor(ids.length * HELD_OUT_SHARE));
  return { tok, dataDir, train: ids.subarray(0, cut), valid: ids.subarray(cut), source };
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

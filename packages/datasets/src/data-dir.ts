// Where data lives: explicit path, else GRASSFLOW_DATA_DIR, else the per-user cache; per-file accessors.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { userCacheDir } from '@grassflow/checkpoints';
import { DatasetError } from './errors.js';

/** Options shared by every function that touches the data folder. */
export interface DataDirOptions {
  /** Data folder; wins over GRASSFLOW_DATA_DIR and the per-user cache. */
  dataDir?: string;
  /** Environment to read (default `process.env`); tests pass their own. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Wikitext-2 split names. */
export type WikitextSplit = 'train' | 'valid' | 'test';
/** `.tokens` = word level with `<unk>` (for the word-level tokenizer); `.raw` = original text (for WordPiece). */
export type WikitextVariant = 'tokens' | 'raw';
/** SNLI files: the official splits, and the 1% train sample of the shared data. */
export type SnliSplit = 'train' | 'dev' | 'test' | 'train_0.01';

/**
 * The data folder, absolute: `opts.dataDir` ?? `$GRASSFLOW_DATA_DIR` ?? `userCacheDir()` of @grassflow/checkpoints.
 * Relative paths resolve against the current working directory.
 */
export function resolveDataDir(opts: DataDirOptions = {}): string {
  if (opts.dataDir !== undefined) {
    if (opts.dataDir === '')
      throw new DatasetError('INVALID_ARGUMENT', 'dataDir is an empty string: pass a folder path or leave it unset.');
    return resolve(opts.dataDir);
  }
  const env = opts.env ?? process.env;
  const fromEnv = env['GRASSFLOW_DATA_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  return userCacheDir(env);
}

/** The data folder, or a file an app needs in it, is missing: says which one and how to provide it. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

/**
 * {@link resolveDataDir} of an app's `--data-dir` flag, checked to be an existing folder. A missing folder is a
 * {@link DataDirError} that says where the path came from (--data-dir, GRASSFLOW_DATA_DIR or the default cache)
 * and, from `needs`, what the folder should hold, e.g. `'wikitext-2/wiki.train.tokens and bert-vocab/vocab.txt'`.
 */
export function existingDataDir(
  flag: string | undefined,
  needs: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const dir = resolveDataDir(flag === undefined ? { env } : { dataDir: flag, env });
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    const envDir = env['GRASSFLOW_DATA_DIR'];
    const from =
      flag !== undefined
        ? '--data-dir'
        : envDir !== undefined && envDir !== ''
          ? 'GRASSFLOW_DATA_DIR'
          : 'the default cache folder';
    throw new DataDirError(
      `data folder ${dir} (from ${from}) does not exist. Pass --data-dir DIR or set GRASSFLOW_DATA_DIR to a folder with ${needs}.`,
    );
  }
  return dir;
}

/** Path of a Wikitext-2 file relative to the data folder: `wikitext-2/wiki.{split}.{variant}`. */
export function wikitextRelPath(split: WikitextSplit, variant: WikitextVariant): string {
  checkOneOf('split', split, ['train', 'valid', 'test']);
  checkOneOf('variant', variant, ['tokens', 'raw']);
  return `wikitext-2/wiki.${split}.${variant}`;
}

/** Path of an SNLI file relative to the data folder: `snli/snli_1.0_{split}.jsonl`. */
export function snliRelPath(split: SnliSplit): string {
  checkOneOf('split', split, ['train', 'dev', 'test', 'train_0.01']);
  return `snli/snli_1.0_${split}.jsonl`;
}

/** Relative path of the BERT uncased WordPiece vocabulary. */
export const BERT_VOCAB_REL_PATH = 'bert-vocab/vocab.txt';

/** Absolute path of `wikitext-2/wiki.{split}.{variant}` in the data folder (the file may not exist yet). */
export function wikitextPath(
  split: WikitextSplit,
  variant: WikitextVariant = 'tokens',
  opts: DataDirOptions = {},
): string {
  return join(resolveDataDir(opts), wikitextRelPath(split, variant));
}

/** Absolute path of `snli/snli_1.0_{split}.jsonl` in the data folder (the file may not exist yet). */
export function snliPath(split: SnliSplit, opts: DataDirOptions = {}): string {
  return join(resolveDataDir(opts), snliRelPath(split));
}

/** Absolute path of `bert-vocab/vocab.txt` in the data folder (the file may not exist yet). */
export function bertVocabPath(opts: DataDirOptions = {}): string {
  return join(resolveDataDir(opts), BERT_VOCAB_REL_PATH);
}

function checkOneOf(name: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) {
    throw new DatasetError(
      'INVALID_ARGUMENT',
      `${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got '${value}'.`,
    );
  }
}

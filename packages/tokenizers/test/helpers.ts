// Test helpers: the shared data folder (GRASSFLOW_DATA_DIR) and temp folders with small vocabularies.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll } from 'vitest';

const fromEnv = process.env['GRASSFLOW_DATA_DIR'];
/** Absolute data folder from GRASSFLOW_DATA_DIR (CI always sets it), or undefined. */
export const dataDir = fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : undefined;
if (dataDir === undefined) {
  console.warn(
    '[@grassflow/tokenizers] GRASSFLOW_DATA_DIR is unset: the tests on the real BERT vocabulary and Wikitext-2 are SKIPPED. ' +
      'Set GRASSFLOW_DATA_DIR to the shared data folder (CI sets it) to run them.',
  );
}
/** Path of a file in the data folder (only call inside tests that skip without data). */
export const dataPath = (rel: string): string => join(dataDir ?? '', rel);
export const BERT_VOCAB = 'bert-vocab/vocab.txt';

/** A temp folder removed after the test file. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'grassflow-tok-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A tiny BERT-style vocabulary: ids 0–4 the specials, then whole words and `##` pieces.
 * id: 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] 4 [MASK] 5 the 6 cat 7 un 8 ##aff 9 ##able 10 , 11 ! 12 . 13 a 14 ##a
 */
export const TINY_VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  '[MASK]',
  'the',
  'cat',
  'un',
  '##aff',
  '##able',
  ',',
  '!',
  '.',
  'a',
  '##a',
];

/** Write `lines` as a vocab.txt (one token per line, final newline) in `dir`; returns its path. */
export function writeVocab(dir: string, name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => l + '\n').join(''));
  return path;
}

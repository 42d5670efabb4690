// SNLI pairs for the app: which file, WordPiece ids per sentence (≤ 48 each), clear errors for missing data.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  bertVocabPath,
  DataDirError,
  encodeSnliPairs,
  existingDataDir,
  loadSnli,
  parseSnliJsonl,
  type EncodedSnli,
  type SnliData,
} from '@grassflow/datasets';
import { WordPieceTokenizer } from '@grassflow/tokenizers';

export { DataDirError };

/** The data folder from --data-dir, else GRASSFLOW_DATA_DIR, else the per-user cache; it must exist. */
export function dataDirOrThrow(flag: string | undefined): string {
  return existingDataDir(
    flag,
    'snli/snli_1.0_{dev,test}.jsonl, a train file (snli/snli_1.0_train.jsonl or snli/snli_1.0_train_0.01.jsonl) and bert-vocab/vocab.txt',
  );
}

/** BERT uncased WordPiece from `<dataDir>/bert-vocab/vocab.txt`. */
export function loadVocab(dataDir: string): WordPieceTokenizer {
  const path = bertVocabPath({ dataDir });
  if (!existsSync(path))
    throw new DataDirError(`${path} is missing: place BERT uncased vocab.txt there (bert-base-uncased, 30,522 lines).`);
  return WordPieceTokenizer.fromVocabFile(path);
}

/** Labelled pairs of a jsonl file given by path (no checksum: any SNLI-format file, e.g. a fraction of train). */
export async function readPairsFile(path: string): Promise<SnliData> {
  const abs = resolve(path);
  if (!existsSync(abs))
    throw new DataDirError(
      `${abs} does not exist: pass an SNLI jsonl file (one {"sentence1", "sentence2", "gold_label"} object a line).`,
    );
  return parseSnliJsonl(await readFile(abs), abs);
}

/** Pairs of a data-folder split (checksums verified by @grassflow/datasets), or of `file` when given. */
export async function loadPairs(
  split: 'train' | 'dev' | 'test',
  dataDir: string,
  file: string | undefined,
): Promise<SnliData & { isSample: boolean }> {
  if (file !== undefined) return { ...(await readPairsFile(file)), isSample: false };
  return loadSnli(split, { dataDir });
}

/**
 * Each sentence on its own: [CLS] pieces [SEP], truncated to `maxTokens` ids keeping the final [SEP], padded with 0.
 */
export async function encodePairs(data: SnliData, tok: WordPieceTokenizer, maxTokens: number): Promise<EncodedSnli> {
  if (data.pairs.length === 0) throw new DataDirError(`${data.file} holds no labelled pairs`);
  return encodeSnliPairs(
    data.pairs,
    { id: tok.id, encode: async (t: string) => (await tok.encode(t)).ids },
    { maxTokens, keepLastToken: true, padId: 0 },
  );
}

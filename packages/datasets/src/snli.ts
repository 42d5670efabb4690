// SNLI 1.0: read jsonl (dropping gold label '-'), encode sentence pairs, batch them with padding masks.
import { readFile } from 'node:fs/promises';
import { snliRelPath, resolveDataDir, type SnliSplit } from './data-dir.js';
import { ensureDataFile, type EnsureOptions } from './ensure-dataset.js';
import { assertInteger, DatasetError } from './errors.js';
import { isFile, sha256Hex } from './files.js';
import { epochPermutation } from '@grassflow/prng';
import { DEFAULT_MANIFEST, expectedSha256 } from './sources.js';
import { checkedId, encodeTexts, type TextEncoderLike } from './text-encoder.js';
import { join } from 'node:path';

/** Class ids: entailment 0, neutral 1, contradiction 2. */
export const SNLI_LABELS = ['entailment', 'neutral', 'contradiction'] as const;
export type SnliLabel = 0 | 1 | 2;

/** One labelled pair. */
export interface SnliPair {
  readonly premise: string;
  readonly hypothesis: string;
  readonly label: SnliLabel;
  readonly pairId: string;
}

/** Parsed file: kept pairs, how many had no gold label ('-'), counts per class [E, N, C]. */
export interface SnliData {
  readonly pairs: readonly SnliPair[];
  readonly droppedNoGold: number;
  readonly labelCounts: readonly [number, number, number];
  /** The file read. */
  readonly file: string;
}

/**
 * Parse SNLI jsonl text: one JSON object per line with string fields sentence1, sentence2, gold_label
 * (and pairID); gold '-' is dropped, the rest map to {@link SNLI_LABELS}. Blank lines are skipped.
 * Malformed lines throw `MALFORMED_JSONL` naming `file:line`.
 */
export function parseSnliJsonl(text: string | Uint8Array, file: string): SnliData {
  const pairs: SnliPair[] = [];
  const counts: [number, number, number] = [0, 0, 0];
  let dropped = 0;
  for (const [i, raw] of lineIterator(text)) {
    const line = raw.trim();
    if (line === '') continue;
    const where = `${file}:${i + 1}`;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch (err) {
      throw new DatasetError(
        'MALFORMED_JSONL',
        `${where}: not valid JSON (${(err as Error).message}). Fix or remove line ${i + 1}, or re-download the file.`,
        { file },
      );
    }
    if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
      throw new DatasetError('MALFORMED_JSONL', `${where}: expected a JSON object per line.`, { file });
    }
    const r = rec as Record<string, unknown>;
    const s1 = r['sentence1'];
    const s2 = r['sentence2'];
    const gold = r['gold_label'];
    for (const [k, v] of [
      ['sentence1', s1],
      ['sentence2', s2],
      ['gold_label', gold],
    ] as const) {
      if (typeof v !== 'string')
        throw new DatasetError('MALFORMED_JSONL', `${where}: field '${k}' is missing or not a string.`, { file });
    }
    if (gold === '-') {
      dropped++;
      continue;
    }
    const label = SNLI_LABELS.indexOf(gold as (typeof SNLI_LABELS)[number]);
    if (label < 0) {
      throw new DatasetError(
        'MALFORMED_JSONL',
        `${where}: gold_label '${String(gold)}' is not one of ${SNLI_LABELS.join(', ')} or '-'.`,
        { file },
      );
    }
    counts[label as SnliLabel] += 1;
    const pairId = typeof r['pairID'] === 'string' ? r['pairID'] : `${file}:${i + 1}`;
    pairs.push({ premise: s1 as string, hypothesis: s2 as string, label: label as SnliLabel, pairId });
  }
  return { pairs, droppedNoGold: dropped, labelCounts: counts, file };
}

/** (0-based index, text) of each '\n'-separated line; bytes are decoded line by line (no string of the whole file). */
function* lineIterator(text: string | Uint8Array): Generator<[number, string], void, void> {
  if (typeof text === 'string') {
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) yield [i, lines[i] as string];
    return;
  }
  const buf = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  let start = 0;
  for (let i = 0; start <= buf.length; i++) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    yield [i, buf.toString('utf8', start, end)];
    start = end + 1;
  }
}

/** Options of {@link loadSnli}. */
export interface SnliLoadOptions extends EnsureOptions {
  /**
   * For split 'train': 'auto' (default) uses snli_1.0_train.jsonl when present, else the 1% sample
   * snli_1.0_train_0.01.jsonl when present, else downloads the full split; 'full' always the full split
   * (downloading it if needed); 'sample' always the 1% sample.
   */
  train?: 'auto' | 'full' | 'sample';
  /** Check the file's SHA-256 against the sources table (default true). */
  verify?: boolean;
}

/** {@link SnliData} plus which file was used. */
export interface SnliSplitData extends SnliData {
  readonly split: SnliSplit;
  /** True when the train data is the 1% sample, not the official train split. */
  readonly isSample: boolean;
}

/** Read an SNLI split from the data folder (downloading snli_1.0.zip when missing and allowed). */
export async function loadSnli(
  split: 'train' | 'dev' | 'test' | 'train_0.01',
  opts: SnliLoadOptions = {},
): Promise<SnliSplitData> {
  let actual: SnliSplit = split;
  if (split === 'train') {
    const mode = opts.train ?? 'auto';
    const dir = resolveDataDir(opts);
    if (mode === 'sample') actual = 'train_0.01';
    else if (
      mode === 'auto' &&
      !(await isFile(join(dir, snliRelPath('train')))) &&
      (await isFile(join(dir, snliRelPath('train_0.01'))))
    )
      actual = 'train_0.01';
  }
  const rel = snliRelPath(actual);
  const path = await ensureDataFile(rel, opts);
  const bytes = await readFile(path);
  const expected = expectedSha256(rel, opts.manifest ?? DEFAULT_MANIFEST);
  if ((opts.verify ?? true) && expected !== null) {
    const got = sha256Hex(bytes);
    if (got !== expected) {
      throw new DatasetError(
        'CHECKSUM_MISMATCH',
        `${path} has SHA-256 ${got}, but the published ${rel} has ${expected}. Delete it to download the official file again (or put the official file there); to use it as it is, load it through the API with verify: false.`,
        { file: path },
      );
    }
  }
  return { ...parseSnliJsonl(bytes, path), split: actual, isSample: actual === 'train_0.01' };
}

/** Options of {@link encodeSnliPairs}. */
export interface SnliEncodeOptions {
  /** T: tokens kept per sentence (default 48, the paper's limit). */
  maxTokens?: number;
  /** When truncating, keep the sentence's last id (e.g. a [SEP] the tokenizer appends) in slot T−1 (default false). */
  keepLastToken?: boolean;
  /** Id written into padding (default 0 = BERT [PAD]). */
  padId?: number;
}

/** Encoded pairs, row-major (n, T), with lengths; rows beyond a length are padding. */
export interface EncodedSnli {
  readonly count: number;
  readonly maxTokens: number;
  readonly premise: Int32Array; // (n, T)
  readonly premiseLength: Uint16Array; // (n)
  readonly hypothesis: Int32Array; // (n, T)
  readonly hypothesisLength: Uint16Array; // (n)
  readonly labels: Int32Array; // (n)
  /** Sentences longer than T before truncation. */
  readonly truncated: number;
}

/** Encode each sentence separately with `encoder` (sync or async), truncate to T = maxTokens ids, pad with padId. */
export async function encodeSnliPairs(
  pairs: readonly SnliPair[],
  encoder: TextEncoderLike,
  opts: SnliEncodeOptions = {},
): Promise<EncodedSnli> {
  const T = opts.maxTokens ?? 48;
  assertInteger('maxTokens', T, 1, 65535);
  const padId = opts.padId ?? 0;
  const n = pairs.length;
  const premise = new Int32Array(n * T).fill(padId); // (n, T)
  const hypothesis = new Int32Array(n * T).fill(padId); // (n, T)
  const premiseLength = new Uint16Array(n);
  const hypothesisLength = new Uint16Array(n);
  const labels = new Int32Array(n);
  let truncated = 0;
  const put = (ids: ArrayLike<number>, out: Int32Array, row: number): number => {
    const len = Math.min(ids.length, T);
    if (ids.length > T) truncated++;
    for (let j = 0; j < len; j++) out[row * T + j] = checkedId(ids[j] as number, encoder.id);
    if (ids.length > T && opts.keepLastToken === true)
      out[row * T + T - 1] = checkedId(ids[ids.length - 1] as number, encoder.id);
    return len;
  };
  const encoded = await encodeTexts(
    encoder,
    pairs.flatMap((p) => [p.premise, p.hypothesis]),
  );
  pairs.forEach((p, i) => {
    premiseLength[i] = put(encoded[2 * i] as ArrayLike<number>, premise, i);
    hypothesisLength[i] = put(encoded[2 * i + 1] as ArrayLike<number>, hypothesis, i);
    labels[i] = p.label;
  });
  return { count: n, maxTokens: T, premise, premiseLength, hypothesis, hypothesisLength, labels, truncated };
}

/** A batch of pairs, shape (B, T) per sentence. */
export interface SnliBatch {
  readonly premise: Int32Array; // (B, T)
  readonly premiseMask: Uint8Array; // (B, T): 1 on real tokens
  readonly hypothesis: Int32Array; // (B, T)
  readonly hypothesisMask: Uint8Array; // (B, T)
  readonly labels: Int32Array; // (B)
  readonly shape: readonly [number, number];
  /** Row indices into the encoded pairs. */
  readonly indices: Int32Array;
}

/** Options of {@link snliBatches}. */
export interface SnliBatchOptions {
  batchSize: number;
  /** Shuffle with epochPermutation(n, seed, epoch); omit for file order (evaluation). */
  seed?: number;
  epoch?: number;
  dropLastBatch?: boolean;
}

/** Batches of encoded pairs, in file order or in a seeded per-epoch order. */
export function* snliBatches(data: EncodedSnli, opts: SnliBatchOptions): Generator<SnliBatch, void, void> {
  assertInteger('batchSize', opts.batchSize, 1);
  const T = data.maxTokens;
  const n = data.count;
  const order = opts.seed === undefined ? null : epochPermutation(n, opts.seed, opts.epoch ?? 0);
  for (let i0 = 0; i0 < n; i0 += opts.batchSize) {
    const rows = Math.min(opts.batchSize, n - i0);
    if (rows < opts.batchSize && opts.dropLastBatch === true) return;
    const premise = new Int32Array(rows * T);
    const hypothesis = new Int32Array(rows * T);
    const premiseMask = new Uint8Array(rows * T);
    const hypothesisMask = new Uint8Array(rows * T);
    const labels = new Int32Array(rows);
    const indices = new Int32Array(rows);
    for (let b = 0; b < rows; b++) {
      const r = order === null ? i0 + b : (order[i0 + b] as number);
      premise.set(data.premise.subarray(r * T, (r + 1) * T), b * T);
      hypothesis.set(data.hypothesis.subarray(r * T, (r + 1) * T), b * T);
      premiseMask.fill(1, b * T, b * T + (data.premiseLength[r] as number));
      hypothesisMask.fill(1, b * T, b * T + (data.hypothesisLength[r] as number));
      labels[b] = data.labels[r] as number;
      indices[b] = r;
    }
    yield { premise, premiseMask, hypothesis, hypothesisMask, labels, shape: [rows, T], indices };
  }
}

// WikiText-2 splits: locate (or download) and verify a split, encode it line by line, cache the ids.
import { readFile } from 'node:fs/promises';
import { wikitextRelPath, type WikitextSplit, type WikitextVariant } from './data-dir.js';
import { ensureDataFile, type EnsureOptions } from './ensure-dataset.js';
import { DatasetError } from './errors.js';
import { sha256Hex } from './files.js';
import { DEFAULT_MANIFEST, expectedSha256 } from './sources.js';
import {
  checkedId,
  encodeTexts,
  isCorpusEncoder,
  type CorpusEncoderLike,
  type TextEncoderLike,
} from './text-encoder.js';
import { loadOrBuildTokenIds, resolveTokenCacheDir, type TokenCacheStatus } from './token-cache.js';

/** Options of {@link loadWikitextText}. */
export interface WikitextOptions extends EnsureOptions {
  /** `.tokens` (word level, default) or `.raw` (original text, for WordPiece). */
  variant?: WikitextVariant;
  /** Check the file's SHA-256 against the sources table (default true; unknown hashes are not checked). */
  verify?: boolean;
}

/** A split's text and identity. */
export interface WikitextText {
  readonly path: string;
  readonly text: string;
  readonly sha256: string;
}

/**
 * Read a WikiText-2 split (`wikitext-2/wiki.{split}.{variant}`), downloading it when missing (see
 * `ensureDataFile`) and checking its SHA-256. A missing split that the shared data lacks (wiki.train.raw,
 * wiki.valid.raw) fails with an error naming the file, the zip that provides it and that the shared set lacks it.
 */
export async function loadWikitextText(split: WikitextSplit, opts: WikitextOptions = {}): Promise<WikitextText> {
  const { path, bytes, sha256 } = await readVerified(split, opts);
  return { path, text: bytes.toString('utf8'), sha256 };
}

async function readVerified(
  split: WikitextSplit,
  opts: WikitextOptions,
): Promise<{ path: string; bytes: Buffer; sha256: string }> {
  const rel = wikitextRelPath(split, opts.variant ?? 'tokens');
  const path = await ensureDataFile(rel, opts);
  const bytes = await readFile(path);
  const sha256 = sha256Hex(bytes);
  const expected = expectedSha256(rel, opts.manifest ?? DEFAULT_MANIFEST);
  if ((opts.verify ?? true) && expected !== null && expected !== sha256) {
    throw new DatasetError(
      'CHECKSUM_MISMATCH',
      `${path} has SHA-256 ${sha256}, but the published ${rel} has ${expected}. Delete it to download the official file again (or put the official file there); to use it as it is, load it through the API with verify: false.`,
      { file: path },
    );
  }
  return { path, bytes, sha256 };
}

/** How lines become ids. */
export interface LineEncodingOptions {
  /** Ids appended after each line (e.g. the word-level `<eos>` id, or WordPiece [SEP]); default none. */
  eolIds?: readonly number[];
  /** Skip lines that are empty or only whitespace (default false: they still add `eolIds`). */
  skipBlankLines?: boolean;
}

/**
 * Encode a text line by line: ids = concat over lines ℓ of (encode(ℓ) ++ eolIds). Lines are split on '\n';
 * the empty string after a final newline is not a line. Throws when an id is not an integer in the int32 range.
 */
export async function encodeLines(
  text: string,
  encoder: TextEncoderLike,
  opts: LineEncodingOptions = {},
): Promise<Int32Array> {
  const eol = opts.eolIds ?? [];
  let lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (opts.skipBlankLines === true) lines = lines.filter((l) => l.trim() !== '');
  const encoded = await encodeTexts(encoder, lines);
  let total = 0;
  for (const ids of encoded) total += ids.length + eol.length;
  const out = new Int32Array(total);
  let n = 0;
  for (const ids of encoded) {
    for (let i = 0; i < ids.length; i++) out[n++] = checkedIdOrThrow(ids[i] as number, encoder.id);
    for (const id of eol) out[n++] = id;
  }
  return out;
}

function checkedIdOrThrow(id: number, encoderId: string): number {
  try {
    return checkedId(id, encoderId);
  } catch (err) {
    throw new DatasetError('INVALID_ARGUMENT', (err as Error).message);
  }
}

/** Ids of a whole text under a corpus encoder (its own line handling), checked to be int32. */
export async function encodeCorpusText(text: string, encoder: CorpusEncoderLike): Promise<Int32Array> {
  const ids = await encoder.encodeCorpus(text);
  if (ids instanceof Int32Array) return ids;
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = checkedIdOrThrow(ids[i] as number, encoder.id);
  return out;
}

/** Options of {@link loadWikitextIds}. */
export interface WikitextIdsOptions extends WikitextOptions, LineEncodingOptions {
  /** Token-id cache folder (see `resolveTokenCacheDir`); `false` disables the cache. */
  cacheDir?: string | false;
}

/** Encoded split. */
export interface WikitextIds {
  readonly ids: Int32Array;
  readonly path: string;
  readonly sha256: string;
  /** Token-id cache outcome ('hit', 'miss', 'stale', 'corrupt'), or 'disabled'. */
  readonly cache: TokenCacheStatus | 'disabled';
  readonly cachePath: string | null;
  /** Set when the ids could not be stored in the cache (they are still correct). */
  readonly cacheWriteError?: string;
}

/**
 * Token ids of a WikiText-2 split under `encoder`, via the token-id cache keyed by the file's SHA-256 and
 * `encoder.id` + encoding options. First run encodes and stores; later runs load; stale or corrupt files are
 * rebuilt. A {@link CorpusEncoderLike} gets the whole text (line options must then be left unset); a
 * {@link TextEncoderLike} gets one line at a time ({@link encodeLines}).
 */
export async function loadWikitextIds(
  split: WikitextSplit,
  encoder: TextEncoderLike | CorpusEncoderLike,
  opts: WikitextIdsOptions = {},
): Promise<WikitextIds> {
  const variant = opts.variant ?? 'tokens';
  const corpus = isCorpusEncoder(encoder);
  if (corpus && (opts.eolIds !== undefined || opts.skipBlankLines !== undefined)) {
    throw new DatasetError(
      'INVALID_ARGUMENT',
      `eolIds / skipBlankLines apply to line encoders; encoder '${encoder.id}' encodes whole corpora with its own line handling.`,
    );
  }
  const { path, bytes, sha256 } = await readVerified(split, opts);
  const encoding = {
    ...(opts.eolIds === undefined ? {} : { eolIds: opts.eolIds }),
    ...(opts.skipBlankLines === undefined ? {} : { skipBlankLines: opts.skipBlankLines }),
  };
  // decoded only when the ids must be built
  const build = (): Promise<Int32Array> =>
    corpus ? encodeCorpusText(bytes.toString('utf8'), encoder) : encodeLines(bytes.toString('utf8'), encoder, encoding);
  if (opts.cacheDir === false) return { ids: await build(), path, sha256, cache: 'disabled', cachePath: null };
  const dir = resolveTokenCacheDir({
    ...(opts.cacheDir === undefined ? {} : { cacheDir: opts.cacheDir }),
    ...(opts.env === undefined ? {} : { env: opts.env }),
  });
  const key = {
    name: `wikitext-2.${split}.${variant}`,
    sourceSha256: sha256,
    encoderKey: JSON.stringify(
      corpus
        ? { corpusEncoder: encoder.id }
        : { tokenizer: encoder.id, eol: opts.eolIds ?? [], skipBlank: opts.skipBlankLines === true },
    ),
  };
  const r = await loadOrBuildTokenIds(dir, key, build);
  return {
    ids: r.ids,
    path,
    sha256,
    cache: r.status,
    cachePath: r.path,
    ...(r.writeError === undefined ? {} : { cacheWriteError: r.writeError }),
  };
}

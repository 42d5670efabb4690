// N-gram baselines cached per data hash, as JSON beside the token-id cache (GRASSFLOW_CACHE_DIR or
// ~/.cache/grassflow/token-ids), so every report can show them without refitting.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '@grassflow/checkpoints';
import { resolveTokenCacheDir } from '@grassflow/datasets';
import type { WikitextSplit } from '@grassflow/datasets';
import { loadSplitIds, type CorpusTokenizer } from '../shared/corpus.js';
import { ngramBaselines, type BaselineResult } from './ngram.js';

/** Bump when a model, its smoothing or the scoring changes: old cache files are then not read. */
export const BASELINES_METHOD_VERSION = 'ngram-baselines:v1';

/** The baselines of one (train, eval) pair of id streams. */
export interface CachedBaselines {
  /** sha256 of method version, tokenizer id, V, train ids and eval ids. */
  key: string;
  method: string;
  tokenizerId: string;
  vocabSize: number;
  trainTokens: number;
  evalTokens: number;
  results: BaselineResult[];
}

/** Where the lookup came from. */
export type BaselinesCacheStatus = 'hit' | 'miss';

/** Cache key: sha256(method version, tokenizer id, V, the Int32 bytes of the train ids, then of the eval ids). */
export function baselinesKey(
  trainIds: Int32Array,
  evalIds: Int32Array,
  vocabSize: number,
  tokenizerId: string,
): string {
  const h = createHash('sha256');
  h.update(`${BASELINES_METHOD_VERSION}\n${tokenizerId}\n${vocabSize}\n${trainIds.length}\n`);
  h.update(new Uint8Array(trainIds.buffer, trainIds.byteOffset, trainIds.byteLength));
  h.update(new Uint8Array(evalIds.buffer, evalIds.byteOffset, evalIds.byteLength));
  return h.digest('hex');
}

/**
 * {@link ngramBaselines} through the cache: `<cacheDir>/ngram-baselines.<first 16 hex of the key>.json`; a file whose
 * key differs (or that does not parse) is recomputed and rewritten atomically.
 */
export async function cachedNgramBaselines(opts: {
  trainIds: Int32Array;
  evalIds: Int32Array;
  vocabSize: number;
  tokenizerId: string;
  /** Default: the token-id cache folder. */
  cacheDir?: string;
}): Promise<{ baselines: CachedBaselines; cache: BaselinesCacheStatus; path: string }> {
  const key = baselinesKey(opts.trainIds, opts.evalIds, opts.vocabSize, opts.tokenizerId);
  const dir = opts.cacheDir ?? resolveTokenCacheDir();
  const path = join(dir, `ngram-baselines.${key.slice(0, 16)}.json`);
  const old = await readCached(path);
  if (old !== undefined && old.key === key) return { baselines: old, cache: 'hit', path };
  const baselines: CachedBaselines = {
    key,
    method: BASELINES_METHOD_VERSION,
    tokenizerId: opts.tokenizerId,
    vocabSize: opts.vocabSize,
    trainTokens: opts.trainIds.length,
    evalTokens: opts.evalIds.length,
    results: ngramBaselines(opts.trainIds, opts.evalIds, opts.vocabSize),
  };
  await writeJsonAtomic(path, baselines);
  return { baselines, cache: 'miss', path };
}

async function readCached(path: string): Promise<CachedBaselines | undefined> {
  try {
    const v = JSON.parse(await readFile(path, 'utf8')) as Partial<CachedBaselines>;
    return typeof v.key === 'string' && Array.isArray(v.results) ? (v as CachedBaselines) : undefined;
  } catch {
    return undefined; // missing or unreadable: recompute
  }
}

/** Baselines of a WikiText-2 split under a tokenizer: fitted on the train split, scored on every token of `split`. */
export async function splitBaselines(
  tok: CorpusTokenizer,
  dataDir: string,
  split: WikitextSplit,
  opts: { trainIds?: Int32Array; evalIds?: Int32Array; cacheDir?: string } = {},
): Promise<{ baselines: CachedBaselines; cache: BaselinesCacheStatus; path: string }> {
  const trainIds = opts.trainIds ?? (await loadSplitIds('train', tok, dataDir));
  const evalIds = opts.evalIds ?? (await loadSplitIds(split, tok, dataDir));
  return cachedNgramBaselines({
    trainIds,
    evalIds,
    vocabSize: tok.vocabSize,
    tokenizerId: tok.id,
    ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
  });
}

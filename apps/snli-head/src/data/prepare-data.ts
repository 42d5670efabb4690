// Everything a command needs before the model runs: tokenizer, encoded pairs and, for DistilBERT, features.
import { basename } from 'node:path';
import type { EncodedSnli } from '@grassflow/datasets';
import type { DistilBertEncoder } from '@grassflow/distilbert-adapter';
import type { WordPieceTokenizer } from '@grassflow/tokenizers';
import { UsageError } from '@grassflow/training';
import { computeFeatures, featureBytes, loadFrozenBackbone, MAX_FEATURE_BYTES } from './backbone.js';
import type { FeatureTable } from './batches.js';
import { encodePairs, loadPairs, loadVocab } from './snli-data.js';

/** The tokenizer and (for a DistilBERT backbone) the frozen encoder of `backbone`. */
export interface Featurizer {
  backbone: string;
  tok: WordPieceTokenizer;
  encoder: DistilBertEncoder | null;
  /** Width of the features the head sees (the embedding width for 'none'). */
  dim: number | null;
}

/**
 * 'none': BERT vocab from the data folder, no encoder; else load DistilBERT (folder or hub id) in frozen mode with the
 * feature cache.
 */
export async function featurizer(backbone: string, dataDir: string, seqLen: number): Promise<Featurizer> {
  if (backbone === 'none') return { backbone, tok: loadVocab(dataDir), encoder: null, dim: null };
  const encoder = await loadFrozenBackbone(backbone);
  if (seqLen > encoder.config.maxPositionEmbeddings) {
    encoder.dispose();
    throw new UsageError(
      `--seq-len ${seqLen} exceeds the backbone's ${encoder.config.maxPositionEmbeddings} positions (seqLen ≤ maxLen)`,
      'seq-len',
    );
  }
  return { backbone, tok: encoder.tokenizer, encoder, dim: encoder.config.dim };
}

/** The first `n` pairs of an encoded set (all when n is 0 or ≥ count). */
export function firstPairs(d: EncodedSnli, n: number): EncodedSnli {
  if (n <= 0 || n >= d.count) return d;
  const T = d.maxTokens;
  return {
    count: n,
    maxTokens: T,
    premise: d.premise.subarray(0, n * T),
    premiseLength: d.premiseLength.subarray(0, n),
    hypothesis: d.hypothesis.subarray(0, n * T),
    hypothesisLength: d.hypothesisLength.subarray(0, n),
    labels: d.labels.subarray(0, n),
    truncated: d.truncated,
  };
}

/** One split, encoded (and featurized for a DistilBERT backbone). */
export interface PreparedSplit {
  file: string;
  isSample: boolean;
  data: EncodedSnli;
  features: FeatureTable | null;
}

/** Load, encode and (DistilBERT) featurize a split or an explicit file; `limit` keeps the first N pairs. */
export async function prepareSplit(
  f: Featurizer,
  split: 'train' | 'dev' | 'test',
  dataDir: string,
  file: string | undefined,
  seqLen: number,
  limit = 0,
  log?: (line: string) => void,
): Promise<PreparedSplit> {
  const raw = await loadPairs(split, dataDir, file);
  const data = firstPairs(await encodePairs(raw, f.tok, seqLen), limit);
  let features: FeatureTable | null = null;
  if (f.encoder !== null) {
    const bytes = featureBytes(data, f.encoder.config.dim);
    if (bytes > MAX_FEATURE_BYTES) {
      throw new UsageError(
        `the features of ${data.count.toLocaleString('en-US')} pairs of ${raw.file} would take ${(bytes / 2 ** 30).toFixed(1)} GiB in memory (limit ${MAX_FEATURE_BYTES / 2 ** 30} GiB): pass a smaller --train-file`,
        'train-file',
      );
    }
    log?.(
      `features of ${data.count.toLocaleString('en-US')} pairs of ${raw.file} through ${f.backbone} (feature cache: computed once, read later)`,
    );
    let last = 0;
    features = await computeFeatures(f.encoder, data, (done, total) => {
      if (done - last >= 2000 || done === total) {
        last = done;
        log?.(`  ${done}/${total} sentences`);
      }
    });
  }
  // the 1% sample, whether picked by loadSnli or given by path
  return {
    file: raw.file,
    isSample: raw.isSample || basename(raw.file) === 'snli_1.0_train_0.01.jsonl',
    data,
    features,
  };
}

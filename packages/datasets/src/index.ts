// @grassflow/datasets: Wikitext-2, SNLI and synthetic attention tasks: verified downloads, token caches and batches.
export { DatasetError, type DatasetErrorCode, type SeqLenOption } from './errors.js';
export {
  resolveDataDir,
  existingDataDir,
  DataDirError,
  wikitextPath,
  snliPath,
  bertVocabPath,
  wikitextRelPath,
  snliRelPath,
  BERT_VOCAB_REL_PATH,
  type DataDirOptions,
  type WikitextSplit,
  type WikitextVariant,
  type SnliSplit,
} from './data-dir.js';
export {
  DEFAULT_MANIFEST,
  DEFAULT_USER_AGENT,
  WIKITEXT2_TOKENS,
  WIKITEXT2_RAW,
  SNLI_1_0,
  BERT_VOCAB,
  findOrigin,
  expectedSha256,
  sourceByName,
  mirroredUrl,
  type ArchiveMember,
  type ArchiveSource,
  type FileSource,
  type LocalOnlyFile,
  type SourcesManifest,
  type FileOrigin,
} from './sources.js';
export { extractZip, unsafeEntryReason, type ExtractOptions } from './zip-extract.js';
export {
  ensureDataset,
  ensureDataFile,
  verifyDataFile,
  type EnsureOptions,
  type EnsureResult,
  type VerifyResult,
} from './ensure-dataset.js';
export { sha256Hex } from './files.js';
export {
  encodeTexts,
  isCorpusEncoder,
  type TextEncoderLike,
  type CorpusEncoderLike,
  type TokenIds,
} from './text-encoder.js';
export {
  loadOrBuildTokenIds,
  encodeTokenCache,
  decodeTokenCache,
  resolveTokenCacheDir,
  tokenCachePath,
  TOKEN_CACHE_MAGIC,
  TOKEN_CACHE_VERSION,
  TOKEN_CACHE_HEADER_BYTES,
  type TokenCacheKey,
  type TokenCacheResult,
  type TokenCacheStatus,
} from './token-cache.js';
export {
  loadWikitextText,
  loadWikitextIds,
  encodeLines,
  encodeCorpusText,
  type WikitextOptions,
  type WikitextText,
  type WikitextIds,
  type WikitextIdsOptions,
  type LineEncodingOptions,
} from './wikitext.js';
export {
  LmTrainBatcher,
  lmEvalBatches,
  lmEvalWindowCount,
  type LmBatch,
  type LmBatcherState,
  type LmTrainOptions,
  type LmEvalOptions,
} from './lm-batches.js';
export {
  SNLI_LABELS,
  parseSnliJsonl,
  loadSnli,
  encodeSnliPairs,
  snliBatches,
  type SnliLabel,
  type SnliPair,
  type SnliData,
  type SnliSplitData,
  type SnliLoadOptions,
  type SnliEncodeOptions,
  type EncodedSnli,
  type SnliBatch,
  type SnliBatchOptions,
} from './snli.js';
export {
  SyntheticTask,
  LAGGED_SUM_LAGS,
  type SyntheticFamily,
  type SyntheticTaskOptions,
  type SyntheticSequence,
} from './synthetic.js';

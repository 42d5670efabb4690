// @grassflow/tokenizers: BERT WordPiece (Hugging Face tokenizers, exact ids) and the Wikitext word-level tokenizer.
export { TokenizerError, type TokenizerErrorCode } from './errors.js';
export { WordPieceTokenizer, type WordPieceVocabOptions, type EncodeCorpusOptions } from './wordpiece-tokenizer.js';
export type {
  WordPieceEncodeOptions,
  WordPieceEncoding,
  WordPieceInput,
  TruncationOptions,
  TruncationStrategy,
  PaddingOptions,
} from './wordpiece-options.js';
export { packBatch, type PackedBatch } from './pack-batch.js';
export { WordLevelTokenizer, EOS, UNK } from './word-level-tokenizer.js';
export { PureWordLevelTokenizer, type WordLevelVocabFile } from './word-level-pure.js';
export { PureWordPieceTokenizer, type PureWordPieceEncoding, type PureWordPieceOptions } from './wordpiece-pure.js';
export { wikitextForWordPiece, wordPieceLines } from './wikitext-wordpiece.js';
export { continuationText, ContinuationStream, type Detokenizer } from './continuation-text.js';

// @grassflow/tokenizers: BERT WordPiece (Hugging Face tokenizers, exact ids) and the Wikitext word-level tokenizer.
export { TokenizerError, type TokenizerErrorCode } from './errors';
export { WordPieceTokenizer, type WordPieceVocabOptions, type EncodeCorpusOptions } from './wordpiece-tokenizer';
export type {
  WordPieceEncodeOptions,
  WordPieceEncoding,
  WordPieceInput,
  TruncationOptions,
  TruncationStrategy,
  PaddingOptions,
} from './wordpiece-options';
export { packBatch, type PackedBatch } from './pack-batch';
export { WordLevelTokenizer, EOS, UNK } from './word-level-tokenizer';
export { PureWordLevelTokenizer, type WordLevelVocabFile } from './word-level-pure';
export { PureWordPieceTokenizer, type PureWordPieceEncoding, type PureWordPieceOptions } from './wordpiece-pure';
export { wikitextForWordPiece, wordPieceLines } from './wikitext-wordpiece';

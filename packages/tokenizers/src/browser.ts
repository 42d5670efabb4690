// @grassflow/tokenizers in browsers (the package's "browser" export condition): BERT WordPiece in plain TypeScript,
// with the ids of the Node entry's WordPieceTokenizer (HF's native library, which a browser cannot load), and the
// Wikitext word-level tokenizer (the same class the Node entry's WordLevelTokenizer extends).
export { TokenizerError, type TokenizerErrorCode } from './errors.js';
export { PureWordPieceTokenizer, type PureWordPieceEncoding, type PureWordPieceOptions } from './wordpiece-pure.js';
export { wikitextForWordPiece, wordPieceLines } from './wikitext-wordpiece.js';
export { continuationText, ContinuationStream, type Detokenizer } from './continuation-text.js';
export { PureWordLevelTokenizer, EOS, UNK, type WordLevelVocabFile } from './word-level-pure.js';

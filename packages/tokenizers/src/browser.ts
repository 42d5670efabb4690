// @grassflow/tokenizers in browsers (the package's "browser" export condition): BERT WordPiece in plain TypeScript,
// with the ids of the Node entry's WordPieceTokenizer (HF's native library, which a browser cannot load).
export { TokenizerError, type TokenizerErrorCode } from './errors';
export { PureWordPieceTokenizer, type PureWordPieceEncoding, type PureWordPieceOptions } from './wordpiece-pure';
export { wikitextForWordPiece, wordPieceLines } from './wikitext-wordpiece';

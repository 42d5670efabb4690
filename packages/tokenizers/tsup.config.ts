import { libraryTsup } from '../../tooling/tsup.mjs';

// src/browser.ts: the "browser" export condition (the pure-TypeScript WordPiece, no native binding).
export default libraryTsup({ entry: ['src/browser.ts'] });

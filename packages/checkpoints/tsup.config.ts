import { libraryTsup } from '../../tooling/tsup.mjs';

// src/browser.ts: the "browser" export condition (no node: modules).
export default libraryTsup({ entry: ['src/browser.ts'] });

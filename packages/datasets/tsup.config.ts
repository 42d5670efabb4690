import { libraryTsup } from '../../tooling/tsup.mjs';

// src/prng.ts: `@grassflow/datasets/prng`, the seeded stream alone (no node: modules), for browsers.
export default libraryTsup({ entry: ['src/prng.ts'] });

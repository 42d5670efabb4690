import type { Options } from 'tsup';
import { libraryTsup } from '../../tooling/tsup.mjs';

// shims: the CJS build gets import.meta.url (backend/webgpu-node.ts resolves Dawn's binding from this package's folder).
// src/browser.ts: the "browser" export condition (no node: modules, no tfjs-node, no Dawn).
// src/internals.ts: `@grassflow/gpu-layers/internals`, the building blocks of grassflow's own tools.
const config: Options = { ...libraryTsup({ entry: ['src/browser.ts', 'src/internals.ts'] }), shims: true };
export default config;

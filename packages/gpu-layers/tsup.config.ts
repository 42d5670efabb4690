import type { Options } from 'tsup';
import { libraryTsup } from '../../tooling/tsup.mjs';

// shims: the CJS build gets import.meta.url (webgpu-node.ts resolves Dawn's binding from this package's folder).
const config: Options = { ...libraryTsup(), shims: true };
export default config;

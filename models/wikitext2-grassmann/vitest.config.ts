import { packageVitest } from '../../tooling/vitest.mjs';

export default packageVitest(import.meta.dirname);

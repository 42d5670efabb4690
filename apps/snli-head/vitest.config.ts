import { packageVitest } from '../../tooling/vitest.mjs';

// App tests train small models end to end: a longer limit than the packages' tests.
export default packageVitest(import.meta.dirname, { timeoutMs: 240_000 });

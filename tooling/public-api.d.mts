/** Entry of package.json's `exports` ('.', './browser', …) → the sorted names its source exports (values and types). */
export function publicApi(packageDir: string): Record<string, string[]>;
/** Registers the vitest suite that pins each entry's exported names to the package's test/public-api.json. */
export function describePublicApi(packageDir: string): void;

/** Writes dist/<entry>.d.ts and .d.cts for each entry (e.g. 'src/index.ts'), chunks named after their modules. */
export function bundleDeclarations(packageDir: string, entries: string[]): Promise<void>;

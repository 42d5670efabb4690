/** Registers the vitest suite that runs every TypeScript/JavaScript example of the package README in packageDir. */
export function describeReadmeExamples(packageDir: string, options?: { needsData?: boolean }): void;

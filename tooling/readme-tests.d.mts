/**
 * Registers the vitest suite that runs every TypeScript/JavaScript example of the package README in packageDir, or of
 * `markdown` (a path relative to packageDir, e.g. the package's guide under docs/).
 */
export function describeReadmeExamples(packageDir: string, options?: { needsData?: boolean; markdown?: string }): void;

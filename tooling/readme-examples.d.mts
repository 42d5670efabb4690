export interface ReadmeExample {
  index: number;
  line: number;
  lang: string;
  code: string;
  skip: string | undefined;
}
/** The TypeScript/JavaScript code blocks of packageDir/README.md (or of packageDir/file), in order. */
export function readmeExamples(packageDir: string, file?: string): ReadmeExample[];
export function runReadmeExample(
  packageDir: string,
  example: ReadmeExample,
  options?: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string },
): { status: number | null; stdout: string; stderr: string };

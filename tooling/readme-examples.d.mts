export interface ReadmeExample {
  index: number;
  line: number;
  lang: string;
  code: string;
  skip: string | undefined;
}
export function readmeExamples(packageDir: string): ReadmeExample[];
export function runReadmeExample(
  packageDir: string,
  example: ReadmeExample,
  options?: { timeoutMs?: number; env?: NodeJS.ProcessEnv },
): { status: number | null; stdout: string; stderr: string };

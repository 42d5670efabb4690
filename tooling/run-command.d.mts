export interface CommandResult {
  /** Exit code; null when a signal ended the process or it did not start. */
  code: number | null;
  /** The signal that ended it, else null. */
  signal: NodeJS.Signals | null;
  /** The spawn error (a timeout: ETIMEDOUT), else undefined. */
  error: string | undefined;
  stdout: string;
  stderr: string;
}
export declare function runCommand(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): CommandResult;
export declare function describeRun(r: CommandResult): string;

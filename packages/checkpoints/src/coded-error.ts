// The one shape of the packages' error classes: a machine-readable `code`, a message that says what to do, the file
// it is about, the cause.

/** An error with a `code` (what failed), the `file` it is about when there is one, and an optional `cause`. */
export class CodedError<Code extends string> extends Error {
  readonly code: Code;
  /** The file, folder or URL the error is about, when there is one. */
  readonly file: string | undefined;

  constructor(code: Code, message: string, options: { file?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options.file;
  }
}

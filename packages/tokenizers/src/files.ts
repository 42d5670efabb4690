// File helpers: read with a clear not-found error, SHA-256, atomic writes (via @grassflow/checkpoints).
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { TokenizerError } from './errors.js';

/** Read a whole file as bytes; a missing path throws `FILE_NOT_FOUND` naming the path and `what` it should be. */
export function readFileOrThrow(path: string, what: string, hint: string): Buffer {
  if (typeof path !== 'string' || path.length === 0) {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      `The path of the ${what} must be a non-empty string, got ${String(path)}.`,
    );
  }
  const abs = resolve(path);
  let isFile = false;
  try {
    isFile = statSync(abs).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    throw new TokenizerError('FILE_NOT_FOUND', `${what} not found: ${abs} does not exist or is not a file. ${hint}`, {
      file: abs,
    });
  }
  return readFileSync(abs);
}

/** SHA-256 of bytes or a UTF-8 string, hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

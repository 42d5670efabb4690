// File helpers: read with a clear not-found error, SHA-256, atomic writes (temp file beside the target + rename).
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { TokenizerError } from './errors';

/** Read a whole file as bytes; a missing path throws `FILE_NOT_FOUND` naming the path and `what` it should be. */
export function readFileOrThrow(path: string, what: string, hint: string): Buffer {
  if (typeof path !== 'string' || path.length === 0) {
    throw new TokenizerError('INVALID_ARGUMENT', `The path of the ${what} must be a non-empty string, got ${String(path)}.`);
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

/** A unique temp name in the same folder as `target` (so the final rename stays on one file system). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Write a file atomically: `write(tmp)` fills a temp file beside `target`, which is then renamed over it,
 * so readers see either the old file or the complete new one, never a partial write.
 */
export function writeAtomically(target: string, write: (tmpPath: string) => void): void {
  const abs = resolve(target);
  mkdirSync(dirname(abs), { recursive: true });
  const tmp = tempPathFor(abs);
  try {
    write(tmp);
    renameSync(tmp, abs);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Write `data` to `target` atomically (see {@link writeAtomically}). */
export function writeFileAtomic(target: string, data: string | Uint8Array): void {
  writeAtomically(target, (tmp) => writeFileSync(tmp, data));
}

// File helpers: streaming SHA-256, existence checks; atomic writes come from @grassflow/checkpoints.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

/** SHA-256 of a file, hex, computed in a stream (constant memory). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** SHA-256 of bytes or a UTF-8 string, hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** True when `path` exists and is a regular file. */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Atomic writes are @grassflow/checkpoints' (temp file beside the target, fsync, rename, fsync of the
 * folder); re-exported because datasets has always exported `writeFileAtomic`.
 */
export { writeFileAtomic } from '@grassflow/checkpoints';

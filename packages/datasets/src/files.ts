// File helpers: SHA-256 of bytes, existence checks (a file's SHA-256, atomic writes and downloads are
// @grassflow/checkpoints').
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';

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

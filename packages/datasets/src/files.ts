// File helpers: streaming SHA-256, existence checks, atomic writes (temp file next to the target + rename).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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

/** A unique temp name in the same folder as `target` (so the final rename stays on one file system). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Write `data` to `target` atomically: write a temp file beside it, then rename over the target. */
export async function writeFileAtomic(target: string, data: Uint8Array | readonly Uint8Array[]): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const tmp = tempPathFor(target);
  try {
    const parts = data instanceof Uint8Array ? [data] : data;
    await writeFile(tmp, Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))));
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

// Crash-safe file writes: temp file in the same folder, fsync, rename over the target, fsync the folder.
//
// rename(2) within one file system is atomic: a reader (or a crash) sees the old file or the new
// one, never a mix. The fsyncs order the data before the rename on disk, so a power loss cannot
// leave the new name pointing at unwritten blocks.

import { randomBytes } from 'node:crypto';
import { open, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A file opened for writing by `FileSystemOps.create`. */
export interface WritableFileOps {
  /** Appends all of `bytes` to the file. */
  write(bytes: Uint8Array): Promise<void>;
  /** fsync: the bytes written so far reach stable storage. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file-system operations that writers here use, so that a caller can substitute them
 * (a test that simulates a crash at every step, or another storage layer). Reads use `node:fs`.
 */
export interface FileSystemOps {
  /** Creates a new file (fails if it exists) and opens it for writing. */
  create(path: string): Promise<WritableFileOps>;
  /** Atomically renames `from` to `to` (same file system). */
  rename(from: string, to: string): Promise<void>;
  /** Creates one directory (fails if it exists). */
  mkdir(path: string): Promise<void>;
  /** Removes a file or a directory tree; no error if it is absent. */
  remove(path: string): Promise<void>;
  /** fsync of a directory, so that renames and creations inside it are durable. */
  syncDirectory(path: string): Promise<void>;
}

const CHUNK = 1 << 30; // largest single write: 1 GiB

/** `FileSystemOps` backed by `node:fs/promises`. */
export const nodeFileSystem: FileSystemOps = {
  async create(path) {
    const handle = await open(path, 'wx', 0o644);
    return {
      async write(bytes) {
        let done = 0;
        while (done < bytes.byteLength) {
          const length = Math.min(CHUNK, bytes.byteLength - done);
          const { bytesWritten } = await handle.write(bytes, done, length);
          if (bytesWritten <= 0) throw new Error(`write to ${path} made no progress`);
          done += bytesWritten;
        }
      },
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
  rename: (from, to) => rename(from, to),
  async mkdir(path) {
    await mkdir(path);
  },
  remove: (path) => rm(path, { recursive: true, force: true }),
  async syncDirectory(path) {
    let handle;
    try {
      handle = await open(path, 'r');
      await handle.sync();
    } catch (error) {
      // Windows and some file systems cannot fsync a directory; their renames are durable anyway.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF' && code !== 'ENOTSUP') throw error;
    } finally {
      await handle?.close();
    }
  },
};

/** A name no other writer picks: `<base>.tmp-<pid>-<12 hex>` (same folder, so rename stays atomic). */
export function temporarySibling(path: string, tag = 'tmp'): string {
  return join(dirname(path), `${basename(path)}.${tag}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/**
 * Writes `chunks` to `path` atomically: temp sibling → write → fsync → close → rename → fsync folder.
 * After a crash `path` holds the old content or the new content; a stale `<name>.tmp-*` may remain.
 */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  fs: FileSystemOps = nodeFileSystem,
): Promise<void> {
  const tmp = temporarySibling(path);
  await writeFileDurable(tmp, chunks, fs);
  try {
    await fs.rename(tmp, path);
  } catch (error) {
    await fs.remove(tmp).catch(() => undefined);
    throw error;
  }
  await fs.syncDirectory(dirname(path));
}

/** Creates `path` (must not exist), writes `chunks`, fsyncs and closes it; removes it on failure. */
export async function writeFileDurable(
  path: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  fs: FileSystemOps = nodeFileSystem,
): Promise<void> {
  const file = await fs.create(path);
  try {
    for await (const chunk of chunks) await file.write(chunk);
    await file.sync();
  } catch (error) {
    await file.close().catch(() => undefined);
    await fs.remove(path).catch(() => undefined);
    throw error;
  }
  await file.close();
}

// Crash-safe file writes: temp file in the same folder, fsync, rename over the target, fsync the folder.
//
// rename(2) within one file system is atomic: a reader (or a crash) sees the old file or the new
// one, never a mix. The fsyncs order the data before the rename on disk, so a power loss cannot
// leave the new name pointing at unwritten blocks. The async writers and the sync one below share
// the temp name (`temporarySibling`), the order of steps and the folder-fsync rules.

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { makeFolder, makeFolderSync } from './make-folder.js';

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

/** What the atomic writers accept: UTF-8 text, bytes, or chunks of bytes written in order. */
export type AtomicWriteData = string | Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

const CHUNK = 1 << 30; // largest single write: 1 GiB

/**
 * Errors of a directory fsync that mean "this platform cannot do it", not "it failed": Windows and
 * some file systems cannot fsync a directory; their renames are durable anyway.
 */
function cannotSyncDirectory(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL' || code === 'EBADF' || code === 'ENOTSUP';
}

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
      if (!cannotSyncDirectory(error)) throw error;
    } finally {
      await handle?.close();
    }
  },
};

/** A name no other writer picks: `<base>.tmp-<pid>-<12 hex>` (same folder, so rename stays atomic). */
export function temporarySibling(path: string, tag = 'tmp'): string {
  return join(dirname(path), `${basename(path)}.${tag}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

const utf8 = new TextEncoder();

function chunksOf(data: AtomicWriteData): Iterable<Uint8Array> | AsyncIterable<Uint8Array> {
  if (typeof data === 'string') return [utf8.encode(data)];
  if (data instanceof Uint8Array) return [data];
  return data;
}

/**
 * Writes `data` to `path` atomically: temp sibling → write → fsync → close → rename → fsync folder.
 * Creates missing parent folders. After a crash `path` holds the old content or the new content;
 * a stale `<name>.tmp-*` may remain.
 */
export async function writeFileAtomic(
  path: string,
  data: AtomicWriteData,
  fs: FileSystemOps = nodeFileSystem,
): Promise<void> {
  await makeFolder(dirname(path)); // level by level: Node's recursive mkdir never returns under /proc
  const tmp = temporarySibling(path);
  await writeFileDurable(tmp, chunksOf(data), fs);
  await renameDurable(tmp, path, fs);
}

/** Writes `value` as JSON (two-space indent, final newline) to `path` atomically, as `writeFileAtomic`. */
export async function writeJsonAtomic(path: string, value: unknown, fs: FileSystemOps = nodeFileSystem): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, fs);
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

/** Renames the complete, fsynced file `tmp` over `path`, then fsyncs the folder; removes `tmp` if the rename fails. */
async function renameDurable(tmp: string, path: string, fs: FileSystemOps): Promise<void> {
  try {
    await fs.rename(tmp, path);
  } catch (error) {
    await fs.remove(tmp).catch(() => undefined);
    throw error;
  }
  await fs.syncDirectory(dirname(path));
}

/**
 * Finishes an atomic write of a temp file that something else wrote and closed (a download stream):
 * fsync `tmp`, rename it over `path`, fsync the folder. Use `temporarySibling(path)` for `tmp`.
 */
export async function commitFileAtomic(tmp: string, path: string, fs: FileSystemOps = nodeFileSystem): Promise<void> {
  const handle = await open(tmp, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await renameDurable(tmp, path, fs);
}

/**
 * The synchronous `writeFileAtomic` (for synchronous APIs such as a tokenizer's `save`): the same
 * temp sibling → write → fsync → close → rename → fsync folder, on `node:fs`. `data` may also be a
 * function that writes the temp file at the path it is given (a library's own `save(path)`);
 * that file is then opened again and fsynced before the rename.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array | ((tmpPath: string) => void)): void {
  makeFolderSync(dirname(path));
  const tmp = temporarySibling(path);
  try {
    if (typeof data === 'function') {
      data(tmp);
      const fd = openSync(tmp, 'r+');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } else {
      const bytes = typeof data === 'string' ? utf8.encode(data) : data;
      const fd = openSync(tmp, 'wx', 0o644);
      try {
        let done = 0;
        while (done < bytes.byteLength) {
          const written = writeSync(fd, bytes, done, Math.min(CHUNK, bytes.byteLength - done));
          if (written <= 0) throw new Error(`write to ${tmp} made no progress`);
          done += written;
        }
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  syncDirectorySync(dirname(path));
}

/** fsync of a directory, synchronously; a platform that cannot (see `cannotSyncDirectory`) is skipped. */
function syncDirectorySync(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (!cannotSyncDirectory(error)) throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// Safetensors files (node only): bounded reads that validate the header before any tensor byte is read, and the
// atomic writer. The byte-level reader and writer, which any JavaScript runtime can use, are in safetensors.ts.

import { open, type FileHandle } from 'node:fs/promises';
import { nodeFileSystem, writeFileAtomic, type FileSystemOps } from './atomic-write.js';
import { encodeSafetensors, readSafetensorsInputs, type SafetensorsTensorInputs } from './safetensors.js';
import {
  decodeHeaderLength,
  parseHeaderJson,
  SafetensorsError,
  type SafetensorsContents,
  type SafetensorsHeader,
  type SafetensorsTensor,
  type SafetensorsTensorInfo,
} from './safetensors-header.js';

/** An open safetensors file whose header has been validated; tensors are read on demand. */
export interface SafetensorsFileReader {
  readonly path: string;
  readonly header: SafetensorsHeader;
  /** The first 8 + N bytes of the file (length field and JSON header). */
  readonly headerBytes: Uint8Array;
  /** Reads one tensor's bytes into a fresh, aligned buffer. Throws `TENSOR_NOT_FOUND` for an unknown name. */
  read(name: string): Promise<SafetensorsTensor>;
  close(): Promise<void>;
}

/**
 * Opens `path` and validates its header with bounded reads (8 bytes, then N ≤ 100 MB checked against
 * the file size), so a corrupt or hostile multi-GB file is rejected before any tensor is read.
 * Errors are `SafetensorsError`s whose message starts with the path.
 */
export async function openSafetensorsFile(path: string): Promise<SafetensorsFileReader> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : (cause as Error).message;
    throw new SafetensorsError('IO', `${path}: ${why}`, { cause });
  }
  try {
    const { size } = await handle.stat();
    const prefix = new Uint8Array(Math.min(8, size));
    await readFully(handle, prefix, 0, path);
    const n = withPath(path, () => decodeHeaderLength(prefix, size));
    const headerBytes = new Uint8Array(8 + n);
    headerBytes.set(prefix, 0);
    await readFully(handle, headerBytes.subarray(8), 8, path);
    const header = withPath(path, () => parseHeaderJson(headerBytes.subarray(8), size));
    const byName = new Map<string, SafetensorsTensorInfo>(header.tensors.map((t) => [t.name, t]));
    return {
      path,
      header,
      headerBytes,
      async read(name) {
        const info = byName.get(name);
        if (info === undefined)
          throw new SafetensorsError('TENSOR_NOT_FOUND', `${path} has no tensor named ${JSON.stringify(name)}`);
        const [begin, end] = info.dataOffsets;
        const data = new Uint8Array(end - begin);
        await readFully(handle, data, header.dataStart + begin, path);
        return { dtype: info.dtype, shape: info.shape, data };
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads a whole safetensors file (header validated first, then each tensor into its own buffer). */
export async function readSafetensorsFile(path: string): Promise<SafetensorsContents> {
  const reader = await openSafetensorsFile(path);
  try {
    const tensors = new Map<string, SafetensorsTensor>();
    for (const info of reader.header.tensors) tensors.set(info.name, await reader.read(info.name));
    return { tensors, metadata: reader.header.metadata };
  } finally {
    await reader.close();
  }
}

function withPath<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SafetensorsError)
      throw new SafetensorsError(error.code, `${path}: ${error.message}`, { cause: error.cause });
    throw error;
  }
}

async function readFully(handle: FileHandle, into: Uint8Array, position: number, path: string): Promise<void> {
  let done = 0;
  while (done < into.byteLength) {
    const length = Math.min(1 << 30, into.byteLength - done);
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(into, done, length, position + done));
    } catch (cause) {
      throw new SafetensorsError('IO', `${path}: cannot read: ${(cause as Error).message}`, { cause });
    }
    if (bytesRead === 0) {
      throw new SafetensorsError(
        'TRUNCATED',
        `${path}: the file ended at byte ${position + done} while reading; it shrank or is being rewritten`,
      );
    }
    done += bytesRead;
  }
}

/** Options of `writeSafetensorsFile`. */
export interface WriteSafetensorsOptions {
  /** File-system operations to use (default: node:fs); tests substitute them to simulate crashes. */
  readonly fs?: FileSystemOps;
}

/**
 * Writes tensors to `path` as safetensors, atomically (temp file, fsync, rename, fsync folder),
 * streaming each tensor's bytes without building the whole file in memory. Tensor-likes are read with
 * `await data()` (`readSafetensorsInputs`), so tfjs tensors on any backend can be written.
 */
export async function writeSafetensorsFile(
  path: string,
  tensors: SafetensorsTensorInputs,
  metadata?: Readonly<Record<string, string>> | null,
  options: WriteSafetensorsOptions = {},
): Promise<void> {
  const { chunks } = encodeSafetensors(await readSafetensorsInputs(tensors), metadata);
  await writeFileAtomic(path, chunks, options.fs ?? nodeFileSystem);
}

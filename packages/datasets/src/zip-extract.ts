// Safe zip extraction: refuses entries that would land outside the target folder, symlinks, and oversize data.
import { createWriteStream } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { makeFolder } from '@grassflow/checkpoints';
import { DatasetError, messageOf } from './errors.js';

/** Options of {@link extractZip}. */
export interface ExtractOptions {
  /**
   * Which entries to extract and where: archive path → output path relative to the target folder,
   * or `null` to skip. Default: every file entry at its own path.
   */
  select?: (archivePath: string) => string | null;
  /** Bound on the sum of extracted (uncompressed) bytes; checked on declared sizes and on actual bytes. */
  maxTotalBytes: number;
  /** Per-entry bound on extracted bytes, by archive path (default: maxTotalBytes). */
  maxEntryBytes?: (archivePath: string) => number;
}

/**
 * Reason an archive entry name is unsafe, or null: absolute paths (`/x`, `C:x`), `..` segments,
 * backslashes, NUL bytes. Every entry is checked, extracted or not: one hostile entry refuses the archive.
 */
export function unsafeEntryReason(name: string): string | null {
  if (name.length === 0) return 'empty name';
  if (name.includes('\0')) return 'NUL byte in name';
  if (name.includes('\\')) return 'backslash in name';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'absolute path';
  if (name.split('/').includes('..')) return "'..' path segment";
  return null;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Extract selected entries of the zip at `zipPath` into `targetDir`. Every entry name must pass
 * {@link unsafeEntryReason}, no entry may be a symlink, each output path must resolve inside `targetDir`,
 * and the extracted bytes must stay within the bounds. Returns archive path → absolute output path.
 * The caller owns `targetDir` and removes it on error (extraction may have written part of it).
 */
export async function extractZip(
  zipPath: string,
  targetDir: string,
  opts: ExtractOptions,
): Promise<Map<string, string>> {
  const root = resolve(targetDir);
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { decodeStrings: false, autoClose: false, validateEntrySizes: true });
  } catch (err) {
    throw new DatasetError('ARCHIVE_INVALID', `${zipPath} is not a readable zip archive: ${messageOf(err)}.`, {
      file: zipPath,
      cause: err,
    });
  }
  const out = new Map<string, string>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const raw = entry.fileNameRaw;
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
      const reason = unsafeEntryReason(name);
      if (reason !== null) throw unsafe(zipPath, name, reason);
      const hostSystem = entry.versionMadeBy >>> 8; // 3 = Unix: mode bits in the high 16 bits
      if (hostSystem === 3 && ((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK)
        throw unsafe(zipPath, name, 'symbolic link');
      if (name.endsWith('/')) continue; // directory entry
      const rel = opts.select === undefined ? name : opts.select(name);
      if (rel === null) continue;
      const dest = resolve(root, rel);
      const r = relative(root, dest);
      if (r === '' || r.startsWith('..' + sep) || r === '..' || isAbsolute(r))
        throw unsafe(zipPath, name, `output path ${rel} leaves ${root}`);
      const entryMax = Math.min(opts.maxEntryBytes?.(name) ?? opts.maxTotalBytes, opts.maxTotalBytes);
      if (entry.uncompressedSize > entryMax || total + entry.uncompressedSize > opts.maxTotalBytes) {
        throw unsafe(
          zipPath,
          name,
          `declares ${entry.uncompressedSize} bytes uncompressed, over the bound (entry ${entryMax}, total ${opts.maxTotalBytes})`,
        );
      }
      await makeFolder(dirname(dest));
      let written = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          written += chunk.length;
          if (written > entryMax || total + written > opts.maxTotalBytes) {
            done(
              unsafe(zipPath, name, `inflates beyond the bound (entry ${entryMax}, total ${opts.maxTotalBytes} bytes)`),
            );
            return;
          }
          done(null, chunk);
        },
      });
      try {
        const stream = await zip.openReadStreamPromise(entry);
        await pipeline(stream, counter, createWriteStream(dest, { flags: 'wx' }));
      } catch (err) {
        if (err instanceof DatasetError) throw err;
        throw new DatasetError('ARCHIVE_INVALID', `Cannot extract ${name} from ${zipPath}: ${messageOf(err)}.`, {
          file: zipPath,
          cause: err,
        });
      }
      total += written;
      out.set(name, dest);
    }
  } catch (err) {
    if (err instanceof DatasetError) throw err;
    throw new DatasetError('ARCHIVE_INVALID', `${zipPath} is not a valid zip archive: ${messageOf(err)}.`, {
      file: zipPath,
      cause: err,
    });
  } finally {
    zip.close();
  }
  return out;
}

function unsafe(zipPath: string, name: string, reason: string): DatasetError {
  return new DatasetError(
    'UNSAFE_ARCHIVE',
    `Refusing archive ${zipPath}: entry '${name}' is unsafe (${reason}). Nothing was installed.`,
    { file: zipPath },
  );
}

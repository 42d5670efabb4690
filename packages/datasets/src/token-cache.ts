// Token-id cache: a split encoded once, stored as Int32 LE ids behind a checksummed header, reused next run.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataDirOptions } from './data-dir.js';
import { DatasetError, messageOf } from './errors.js';
import { userCacheDir, writeFileAtomic } from '@grassflow/checkpoints';

/**
 * File format (all little-endian), 128-byte header then payload:
 *   0  magic 'GFTOKIDS' (8 bytes)      8  version u32 = 1     12  reserved u32 = 0
 *  16  count u64 (number of ids)      24  SHA-256 of the source file (32 bytes)
 *  56  SHA-256 of the encoder key (32 bytes)   88  SHA-256 of the payload (32 bytes)   120  zero padding
 * 128  count × Int32 ids
 */
export const TOKEN_CACHE_MAGIC = 'GFTOKIDS';
export const TOKEN_CACHE_VERSION = 1;
export const TOKEN_CACHE_HEADER_BYTES = 128;

/** How a cache lookup ended. */
export type TokenCacheStatus = 'hit' | 'miss' | 'stale' | 'corrupt';

/** Identity of cached ids: the source file's SHA-256 and the encoder key (tokenizer id + encoding options). */
export interface TokenCacheKey {
  /** Human-readable file stem, e.g. 'wikitext-2.wiki.train.tokens' (one file per stem and encoder key). */
  readonly name: string;
  readonly sourceSha256: string;
  readonly encoderKey: string;
}

/** Token-id cache folder: `opts.cacheDir` ?? `$GRASSFLOW_CACHE_DIR` ?? `<user cache>/token-ids`. */
export function resolveTokenCacheDir(opts: DataDirOptions & { cacheDir?: string } = {}): string {
  if (opts.cacheDir !== undefined) return opts.cacheDir;
  const env = opts.env ?? process.env;
  const fromEnv = env['GRASSFLOW_CACHE_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return join(userCacheDir(env), 'token-ids');
}

/** Cache file of a key: `<dir>/<name>.<first 16 hex of SHA-256(encoderKey)>.ids`. */
export function tokenCachePath(dir: string, key: TokenCacheKey): string {
  if (!/^[A-Za-z0-9._-]+$/.test(key.name)) {
    throw new DatasetError(
      'INVALID_ARGUMENT',
      `Token cache name '${key.name}' may only hold letters, digits, '.', '_' and '-'.`,
    );
  }
  return join(dir, `${key.name}.${sha256(key.encoderKey).subarray(0, 8).toString('hex')}.ids`);
}

function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

function hexBytes(hex: string, what: string): Buffer {
  if (!/^[0-9a-f]{64}$/i.test(hex))
    throw new DatasetError('INVALID_ARGUMENT', `${what} must be a 64-digit hex SHA-256, got '${hex}'.`);
  return Buffer.from(hex, 'hex');
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Payload bytes (Int32 little-endian) of ids, without copying on little-endian hosts. */
function payloadBytes(ids: Int32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const b = Buffer.alloc(ids.length * 4);
  for (let i = 0; i < ids.length; i++) b.writeInt32LE(ids[i] as number, i * 4);
  return b;
}

/** Serialize ids with the header described above. */
export function encodeTokenCache(ids: Int32Array, key: TokenCacheKey): Buffer[] {
  const payload = payloadBytes(ids);
  const header = Buffer.alloc(TOKEN_CACHE_HEADER_BYTES);
  header.write(TOKEN_CACHE_MAGIC, 0, 'latin1');
  header.writeUInt32LE(TOKEN_CACHE_VERSION, 8);
  header.writeBigUInt64LE(BigInt(ids.length), 16);
  hexBytes(key.sourceSha256, 'sourceSha256').copy(header, 24);
  sha256(key.encoderKey).copy(header, 56);
  sha256(payload).copy(header, 88);
  return [header, payload];
}

/** Parse a cache file's bytes: the ids, or why they cannot be used ('stale' = other key, 'corrupt' = damaged). */
export function decodeTokenCache(
  bytes: Buffer,
  key: TokenCacheKey,
): { status: 'hit'; ids: Int32Array } | { status: 'stale' | 'corrupt'; reason: string } {
  if (bytes.length < TOKEN_CACHE_HEADER_BYTES)
    return { status: 'corrupt', reason: `only ${bytes.length} bytes, shorter than the header` };
  if (bytes.toString('latin1', 0, 8) !== TOKEN_CACHE_MAGIC) return { status: 'corrupt', reason: 'bad magic' };
  const version = bytes.readUInt32LE(8);
  if (version !== TOKEN_CACHE_VERSION)
    return { status: 'stale', reason: `format version ${version}, expected ${TOKEN_CACHE_VERSION}` };
  const count = bytes.readBigUInt64LE(16);
  if (BigInt(bytes.length) !== BigInt(TOKEN_CACHE_HEADER_BYTES) + count * 4n) {
    return { status: 'corrupt', reason: `length ${bytes.length} does not match ${count} ids` };
  }
  if (!bytes.subarray(24, 56).equals(hexBytes(key.sourceSha256, 'sourceSha256')))
    return { status: 'stale', reason: 'the source file changed' };
  if (!bytes.subarray(56, 88).equals(sha256(key.encoderKey)))
    return { status: 'stale', reason: 'another tokenizer or encoding' };
  const payload = bytes.subarray(TOKEN_CACHE_HEADER_BYTES);
  if (!sha256(payload).equals(bytes.subarray(88, 120))) return { status: 'corrupt', reason: 'payload checksum fails' };
  const n = Number(count);
  const ids = new Int32Array(n);
  if (LITTLE_ENDIAN) new Uint8Array(ids.buffer).set(payload);
  else for (let i = 0; i < n; i++) ids[i] = payload.readInt32LE(i * 4);
  return { status: 'hit', ids };
}

/** Result of {@link loadOrBuildTokenIds}. */
export interface TokenCacheResult {
  readonly ids: Int32Array;
  /** 'hit' = loaded; otherwise the ids were built (after a miss, or replacing a stale/corrupt file). */
  readonly status: TokenCacheStatus;
  readonly path: string;
  /** Why a stale or corrupt file was rebuilt. */
  readonly reason?: string;
  /** Set when the rebuilt ids could not be stored (read-only or full disk); the ids are still correct. */
  readonly writeError?: string;
}

/**
 * Load ids for `key` from `dir`, or build them with `build()` and store them atomically (`writeFileAtomic`:
 * temp file, fsync, rename, fsync of the folder).
 * A stale file (other source hash or encoder key) or a corrupt one (short, bad magic, failed payload
 * checksum) is replaced. A cache that cannot be written is not an error: the built ids are returned.
 */
export async function loadOrBuildTokenIds(
  dir: string,
  key: TokenCacheKey,
  build: () => Int32Array | Promise<Int32Array>,
): Promise<TokenCacheResult> {
  const path = tokenCachePath(dir, key);
  let status: TokenCacheStatus = 'miss';
  let reason: string | undefined;
  let bytes: Buffer | undefined;
  try {
    bytes = await readFile(path);
  } catch {
    bytes = undefined;
  }
  if (bytes !== undefined) {
    const decoded = decodeTokenCache(bytes, key);
    if (decoded.status === 'hit') return { ids: decoded.ids, status: 'hit', path };
    status = decoded.status;
    reason = decoded.reason;
  }
  const ids = await build();
  let writeError: string | undefined;
  try {
    await writeFileAtomic(path, encodeTokenCache(ids, key));
  } catch (err) {
    writeError = `cannot write ${path}: ${messageOf(err)}`; // the cache is an optimisation, not a requirement
  }
  return {
    ids,
    status,
    path,
    ...(reason === undefined ? {} : { reason }),
    ...(writeError === undefined ? {} : { writeError }),
  };
}

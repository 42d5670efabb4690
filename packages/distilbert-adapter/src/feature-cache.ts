// On-disk cache of per-example encoder features, keyed by model identity + input ids, verified on read.
//
// Entry file (little-endian): "GFDBFEAT" | u32 version | u32 n | u32 d | u32 0 | 32-byte model identity |
// i32 ids[n] | i32 mask[n] | f32 features[n·d] | SHA-256 of everything before it (32 bytes).
// n is the example's length up to and including its last position with mask = 1.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@grassflow/checkpoints';

const MAGIC = 'GFDBFEAT';
/** Version of the entry layout; an entry of another version counts as corrupt and is recomputed. */
export const FEATURE_CACHE_VERSION = 1;
const HEAD = 8 + 16 + 32;

/** One example as stored: its ids and mask up to its last attended position, and its features [n, d]. */
export interface FeatureEntry {
  readonly ids: Int32Array;
  readonly mask: Int32Array;
  readonly features: Float32Array;
}

/** Result of looking an example up. */
export type LookupResult =
  { readonly status: 'hit'; readonly features: Float32Array } | { readonly status: 'miss' | 'corrupt' };

/** A folder of feature entries for one model identity (hex SHA-256). */
export class FeatureCache {
  private readonly identityBytes: Uint8Array;

  constructor(
    /** Root folder; entries live in `<root>/<identity[0:16]>/<key[0:2]>/<key>.f32`. */
    readonly root: string,
    /** Hex SHA-256 identifying the model (weights and config). */
    readonly identity: string,
    /** Feature width d. */
    readonly dim: number,
  ) {
    this.identityBytes = Buffer.from(identity, 'hex');
    if (this.identityBytes.byteLength !== 32) throw new RangeError(`identity must be a hex SHA-256, got '${identity}'`);
  }

  /** Key of an example: SHA-256(identity | n | ids | mask), hex. */
  key(ids: Int32Array, mask: Int32Array): string {
    const h = createHash('sha256');
    h.update(this.identityBytes);
    const n = new Uint32Array([ids.length]);
    h.update(new Uint8Array(n.buffer));
    h.update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
    h.update(new Uint8Array(mask.buffer, mask.byteOffset, mask.byteLength));
    return h.digest('hex');
  }

  /** Path of an example's entry. */
  path(ids: Int32Array, mask: Int32Array): string {
    const key = this.key(ids, mask);
    return join(this.root, this.identity.slice(0, 16), key.slice(0, 2), `${key}.f32`);
  }

  /** Reads and verifies an entry: size, magic, version, identity, ids, mask and checksum must all match. */
  async lookup(ids: Int32Array, mask: Int32Array): Promise<LookupResult> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.path(ids, mask));
    } catch {
      return { status: 'miss' };
    }
    const n = ids.length;
    const d = this.dim;
    const size = HEAD + 8 * n + 4 * n * d + 32;
    if (bytes.byteLength !== size || bytes.toString('latin1', 0, 8) !== MAGIC) return { status: 'corrupt' };
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (
      view.getUint32(8, true) !== FEATURE_CACHE_VERSION ||
      view.getUint32(12, true) !== n ||
      view.getUint32(16, true) !== d
    )
      return { status: 'corrupt' };
    if (!bytes.subarray(24, 56).equals(this.identityBytes)) return { status: 'corrupt' };
    const digest = createHash('sha256')
      .update(bytes.subarray(0, size - 32))
      .digest();
    if (!digest.equals(bytes.subarray(size - 32))) return { status: 'corrupt' };
    const copy = new Uint8Array(bytes.subarray(HEAD, size - 32)); // aligned copy
    const storedIds = new Int32Array(copy.buffer, 0, n);
    const storedMask = new Int32Array(copy.buffer, 4 * n, n);
    for (let i = 0; i < n; i++) if (storedIds[i] !== ids[i] || storedMask[i] !== mask[i]) return { status: 'corrupt' };
    return { status: 'hit', features: new Float32Array(copy.buffer, 8 * n, n * d) };
  }

  /** Writes an entry atomically (temp file + rename); a concurrent reader sees the old file or the new one. */
  async store(entry: FeatureEntry): Promise<void> {
    const n = entry.ids.length;
    const d = this.dim;
    if (entry.mask.length !== n || entry.features.length !== n * d)
      throw new RangeError(`feature entry of ${n} tokens needs ${n * d} values, got ${entry.features.length}`);
    const size = HEAD + 8 * n + 4 * n * d + 32;
    const bytes = new Uint8Array(size);
    const view = new DataView(bytes.buffer);
    bytes.set(Buffer.from(MAGIC, 'latin1'), 0);
    view.setUint32(8, FEATURE_CACHE_VERSION, true);
    view.setUint32(12, n, true);
    view.setUint32(16, d, true);
    view.setUint32(20, 0, true);
    bytes.set(this.identityBytes, 24);
    bytes.set(new Uint8Array(entry.ids.buffer, entry.ids.byteOffset, entry.ids.byteLength), HEAD);
    bytes.set(new Uint8Array(entry.mask.buffer, entry.mask.byteOffset, entry.mask.byteLength), HEAD + 4 * n);
    bytes.set(
      new Uint8Array(entry.features.buffer, entry.features.byteOffset, entry.features.byteLength),
      HEAD + 8 * n,
    );
    bytes.set(
      createHash('sha256')
        .update(bytes.subarray(0, size - 32))
        .digest(),
      size - 32,
    );
    await writeFileAtomic(this.path(entry.ids, entry.mask), bytes);
  }
}

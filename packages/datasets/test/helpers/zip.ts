// Build test zip archives with yazl, including hostile ones (names yazl itself refuses are patched in afterwards).
import yazl from 'yazl';

export interface ZipEntrySpec {
  name: string;
  data: string | Uint8Array;
  /** Unix mode, e.g. 0o120777 for a symlink entry. */
  mode?: number;
}

export async function buildZip(entries: readonly ZipEntrySpec[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    zip.addBuffer(Buffer.from(e.data), e.name, e.mode === undefined ? {} : { mode: e.mode });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Replace every occurrence of an entry name by another of the same byte length (local header + central directory). */
export function renameEntry(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('names must have equal length');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  let hits = 0;
  for (let i = out.indexOf(needle); i >= 0; i = out.indexOf(needle, i + 1)) {
    Buffer.from(to).copy(out, i);
    hits++;
  }
  if (hits !== 2) throw new Error(`expected 2 occurrences of ${from}, found ${hits}`);
  return out;
}

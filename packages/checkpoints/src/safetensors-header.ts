// The safetensors header: dtypes, typed errors, and validation of an untrusted header before any data is read.
//
// Layout (https://github.com/huggingface/safetensors): u64 little-endian N, then N bytes of UTF-8 JSON
// `{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}`, then the byte
// buffer; offsets are relative to the buffer start. The rules enforced here are the Rust reference
// reader's (`Metadata::validate`): header ≤ 100,000,000 bytes, entries sorted by offsets must tile the
// buffer exactly from 0 to its end, and each entry's byte size must equal prod(shape) × dtype size.

import { JsonFloat, parseStrictJson, StrictJsonError, type JsonValue } from './safetensors-json.js';
import { CodedError } from './coded-error.js';

/** Bytes per element of every dtype of the safetensors format (sub-byte FP4/FP6 dtypes are not supported). */
export const SAFETENSORS_DTYPE_SIZES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
} as const;

/** A safetensors element type, spelled as in the header (`"F32"`, `"I64"`, …). */
export type SafetensorsDType = keyof typeof SAFETENSORS_DTYPE_SIZES;

/**
 * Rank of each dtype in the Rust `Dtype` enum (declared in increasing alignment). The reference writer
 * lays tensors out by descending rank, then by name, so larger-aligned tensors come first.
 */
export const SAFETENSORS_DTYPE_RANK: Readonly<Record<SafetensorsDType, number>> = Object.fromEntries(
  Object.keys(SAFETENSORS_DTYPE_SIZES).map((k, i) => [k, i]),
) as Record<SafetensorsDType, number>;

/** Largest header the reader accepts, in bytes: the Rust reference reader's `MAX_HEADER_SIZE`. */
export const SAFETENSORS_MAX_HEADER_BYTES = 100_000_000;

/** Why a safetensors buffer or file was rejected. */
export type SafetensorsErrorCode =
  | 'EMPTY_FILE'
  | 'TRUNCATED'
  | 'HEADER_TOO_LARGE'
  | 'HEADER_NOT_UTF8'
  | 'HEADER_NOT_JSON'
  | 'HEADER_NOT_OBJECT'
  | 'DUPLICATE_KEY'
  | 'INVALID_TENSOR_INFO'
  | 'UNKNOWN_DTYPE'
  | 'INVALID_SHAPE'
  | 'INVALID_OFFSETS'
  | 'SIZE_MISMATCH'
  | 'OFFSETS_OVERLAP'
  | 'OFFSETS_GAP'
  | 'TRAILING_BYTES'
  | 'INVALID_METADATA'
  | 'TENSOR_NOT_FOUND'
  | 'UNSUPPORTED_DTYPE'
  | 'INVALID_ARGUMENT'
  | 'IO';

/** Every rejection of a safetensors buffer, file or writer argument: `code` says which rule was broken. */
export class SafetensorsError extends CodedError<SafetensorsErrorCode> {
  override readonly name = 'SafetensorsError';
}

/** One tensor entry of a validated header. */
export interface SafetensorsTensorInfo {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  /** [begin, end) in bytes, relative to the start of the byte buffer. */
  readonly dataOffsets: readonly [number, number];
}

/** One tensor read from a safetensors buffer: raw little-endian bytes plus dtype and shape. */
export interface SafetensorsTensor {
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  /** The tensor's bytes, little-endian, row-major (C order). */
  readonly data: Uint8Array;
}

/** Everything in a safetensors buffer or file. */
export interface SafetensorsContents {
  /** Tensors in file order (by data offset). */
  readonly tensors: Map<string, SafetensorsTensor>;
  readonly metadata: Readonly<Record<string, string>> | null;
}

/** A validated header: every entry is consistent, and the entries tile the byte buffer exactly. */
export interface SafetensorsHeader {
  /** Entries ordered by data offset (the order of their bytes in the file). */
  readonly tensors: readonly SafetensorsTensorInfo[];
  /** The `__metadata__` map, or null when the header has none. */
  readonly metadata: Readonly<Record<string, string>> | null;
  /** N, the byte length of the JSON header (including padding). */
  readonly headerByteLength: number;
  /** 8 + N: where the byte buffer starts in the file. */
  readonly dataStart: number;
  /** Byte length of the byte buffer: file length − 8 − N. */
  readonly dataByteLength: number;
}

/**
 * Reads N from the first 8 bytes and checks it against the file length:
 * 0 < file, 8 ≤ file, N ≤ 100,000,000 and 8 + N ≤ file. Returns N.
 */
export function decodeHeaderLength(prefix: Uint8Array, fileByteLength: number): number {
  if (fileByteLength === 0) {
    throw new SafetensorsError(
      'EMPTY_FILE',
      'the safetensors input is empty (0 bytes): the file was never written or was truncated to nothing',
    );
  }
  if (fileByteLength < 8 || prefix.byteLength < 8) {
    throw new SafetensorsError(
      'TRUNCATED',
      `the safetensors input has ${fileByteLength} bytes, fewer than the 8-byte header length field: the file is truncated or not a safetensors file`,
    );
  }
  const view = new DataView(prefix.buffer, prefix.byteOffset, 8);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(SAFETENSORS_MAX_HEADER_BYTES)) {
    throw new SafetensorsError(
      'HEADER_TOO_LARGE',
      `the header length field says ${n} bytes, more than the ${SAFETENSORS_MAX_HEADER_BYTES}-byte limit: the file is corrupt or not a safetensors file`,
    );
  }
  const headerBytes = Number(n);
  if (8 + headerBytes > fileByteLength) {
    throw new SafetensorsError(
      'TRUNCATED',
      `the header length field says ${headerBytes} bytes but only ${fileByteLength - 8} bytes follow it: the file is truncated or not a safetensors file`,
    );
  }
  return headerBytes;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Validates the N header bytes (`json`, the bytes right after the length field) of a file of
 * `fileByteLength` bytes and returns the parsed header. Nothing of the byte buffer is read.
 */
export function parseHeaderJson(json: Uint8Array, fileByteLength: number): SafetensorsHeader {
  const headerByteLength = json.byteLength;
  let text: string;
  try {
    text = utf8.decode(json);
  } catch (cause) {
    throw new SafetensorsError('HEADER_NOT_UTF8', 'the header is not valid UTF-8: the file is corrupt', { cause });
  }
  let root: JsonValue;
  try {
    root = parseStrictJson(text, 8);
  } catch (cause) {
    if (cause instanceof StrictJsonError && cause.kind === 'duplicate-key') {
      throw new SafetensorsError(
        'DUPLICATE_KEY',
        `the header names an entry twice (${cause.message}): the file is corrupt`,
        { cause },
      );
    }
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new SafetensorsError(
      'HEADER_NOT_JSON',
      `the header is not valid JSON (${why}): the file is corrupt or not a safetensors file`,
      { cause },
    );
  }
  if (!(root instanceof Map)) {
    throw new SafetensorsError(
      'HEADER_NOT_OBJECT',
      `the header is JSON ${describe(root)}, not an object of tensor entries`,
    );
  }

  let metadata: Record<string, string> | null = null;
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [name, entry] of root) {
    if (name === '__metadata__') metadata = parseMetadata(entry);
    else tensors.push(parseEntry(name, entry));
  }

  const dataByteLength = fileByteLength - 8 - headerByteLength;
  checkTiling(tensors, dataByteLength);
  return { tensors, metadata, headerByteLength, dataStart: 8 + headerByteLength, dataByteLength };
}

function parseMetadata(value: JsonValue): Record<string, string> | null {
  if (value === null) return null;
  if (!(value instanceof Map)) {
    throw new SafetensorsError(
      'INVALID_METADATA',
      `"__metadata__" is ${describe(value)}, but it must be an object of string values`,
    );
  }
  const out: Record<string, string> = {};
  for (const [k, v] of value) {
    if (typeof v !== 'string') {
      throw new SafetensorsError(
        'INVALID_METADATA',
        `"__metadata__" key ${JSON.stringify(k)} holds ${describe(v)}; metadata values must be strings`,
      );
    }
    // defineProperty: a key "__proto__" becomes an own property instead of replacing the prototype.
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function parseEntry(name: string, entry: JsonValue): SafetensorsTensorInfo {
  const where = `tensor ${JSON.stringify(name)}`;
  if (!(entry instanceof Map)) {
    throw new SafetensorsError(
      'INVALID_TENSOR_INFO',
      `${where}: the entry is ${describe(entry)}, not an object {dtype, shape, data_offsets}`,
    );
  }
  // Unknown extra fields are ignored, as the reference reader does.
  const dtypeValue = entry.get('dtype');
  const shapeValue = entry.get('shape');
  const offsetsValue = entry.get('data_offsets');
  for (const [field, v] of [
    ['dtype', dtypeValue],
    ['shape', shapeValue],
    ['data_offsets', offsetsValue],
  ] as const) {
    if (v === undefined)
      throw new SafetensorsError('INVALID_TENSOR_INFO', `${where}: the entry has no "${field}" field`);
  }
  if (typeof dtypeValue !== 'string' || !Object.hasOwn(SAFETENSORS_DTYPE_SIZES, dtypeValue)) {
    throw new SafetensorsError(
      'UNKNOWN_DTYPE',
      `${where}: unknown dtype ${describe(dtypeValue ?? null)}; known: ${Object.keys(SAFETENSORS_DTYPE_SIZES).join(', ')}`,
    );
  }
  const dtype = dtypeValue as SafetensorsDType;

  if (!Array.isArray(shapeValue)) {
    throw new SafetensorsError(
      'INVALID_SHAPE',
      `${where}: shape is ${describe(shapeValue ?? null)}, not an array of non-negative integers`,
    );
  }
  const shape: number[] = [];
  for (const d of shapeValue) {
    if (typeof d !== 'number' || d < 0 || Object.is(d, -0)) {
      const why = typeof d === 'bigint' ? 'is too large' : 'is not a non-negative integer';
      throw new SafetensorsError(
        'INVALID_SHAPE',
        `${where}: shape ${showJson(shapeValue)} has a dimension that ${why}`,
      );
    }
    shape.push(d);
  }

  if (!Array.isArray(offsetsValue) || offsetsValue.length !== 2) {
    throw new SafetensorsError(
      'INVALID_OFFSETS',
      `${where}: data_offsets is ${showJson(offsetsValue ?? null)}, not a pair [begin, end]`,
    );
  }
  const [begin, end] = offsetsValue;
  if (typeof begin !== 'number' || typeof end !== 'number' || begin < 0 || end < 0) {
    throw new SafetensorsError(
      'INVALID_OFFSETS',
      `${where}: data_offsets ${showJson(offsetsValue)} must be two non-negative integers below 2^53`,
    );
  }
  if (end < begin) {
    throw new SafetensorsError('INVALID_OFFSETS', `${where}: data_offsets [${begin}, ${end}] end before they begin`);
  }

  let elements = 1;
  for (const d of shape) {
    elements *= d;
    if (!Number.isSafeInteger(elements)) {
      throw new SafetensorsError(
        'INVALID_SHAPE',
        `${where}: shape [${shape.join(', ')}] holds more than 2^53 elements`,
      );
    }
  }
  const expected = elements * SAFETENSORS_DTYPE_SIZES[dtype];
  if (!Number.isSafeInteger(expected)) {
    throw new SafetensorsError(
      'INVALID_SHAPE',
      `${where}: shape [${shape.join(', ')}] of ${dtype} needs more than 2^53 bytes`,
    );
  }
  if (end - begin !== expected) {
    throw new SafetensorsError(
      'SIZE_MISMATCH',
      `${where}: shape [${shape.join(', ')}] of ${dtype} needs ${expected} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`,
    );
  }
  return { name, dtype, shape, dataOffsets: [begin, end] };
}

/** Sorts `tensors` by offsets in place and checks they tile [0, dataByteLength) exactly. */
function checkTiling(tensors: SafetensorsTensorInfo[], dataByteLength: number): void {
  tensors.sort((a, b) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1]);
  let cursor = 0;
  let previous: SafetensorsTensorInfo | undefined;
  for (const t of tensors) {
    const [begin, end] = t.dataOffsets;
    if (begin > cursor) {
      const after =
        previous === undefined
          ? 'the start of the byte buffer'
          : `tensor ${JSON.stringify(previous.name)} (ends at ${cursor})`;
      throw new SafetensorsError(
        'OFFSETS_GAP',
        `tensor ${JSON.stringify(t.name)} begins at byte ${begin}, leaving ${begin - cursor} unclaimed bytes after ${after}; the offsets must tile the buffer`,
      );
    }
    if (begin < cursor && previous !== undefined) {
      throw new SafetensorsError(
        'OFFSETS_OVERLAP',
        `tensor ${JSON.stringify(t.name)} [${begin}, ${end}) overlaps tensor ${JSON.stringify(previous.name)} [${previous.dataOffsets[0]}, ${cursor})`,
      );
    }
    cursor = end;
    previous = t;
  }
  if (cursor > dataByteLength) {
    throw new SafetensorsError(
      'TRUNCATED',
      `the header describes ${cursor} bytes of tensor data but only ${dataByteLength} follow it: the file is truncated (interrupted download or write?)`,
    );
  }
  if (cursor < dataByteLength) {
    throw new SafetensorsError(
      'TRAILING_BYTES',
      `the tensors cover ${cursor} bytes but the byte buffer holds ${dataByteLength}: ${dataByteLength - cursor} trailing bytes belong to no tensor`,
    );
  }
}

function describe(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Map) return 'an object';
  if (v instanceof JsonFloat) return `the number ${v.value}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

function showJson(v: JsonValue): string {
  const s = toJsonText(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

function toJsonText(v: JsonValue): string {
  if (v instanceof JsonFloat) return String(v.value);
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(',')}]`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

// Read and write the safetensors format (Hugging Face) with no tfjs dependency: bytes in, bytes out.
//
// File: u64 LE header length N | N bytes of UTF-8 JSON header, space-padded to a multiple of 8 |
// byte buffer, tensors contiguous and little-endian, row-major. Headers are validated in full
// (see safetensors-header.ts) before any tensor byte is touched or allocated.

import {
  decodeHeaderLength,
  parseHeaderJson,
  SAFETENSORS_DTYPE_RANK,
  SAFETENSORS_DTYPE_SIZES,
  SafetensorsError,
  type SafetensorsDType,
  type SafetensorsContents,
  type SafetensorsHeader,
  type SafetensorsTensor,
} from './safetensors-header.js';

export {
  SAFETENSORS_DTYPE_SIZES,
  SAFETENSORS_MAX_HEADER_BYTES,
  SafetensorsError,
  type SafetensorsDType,
  type SafetensorsErrorCode,
  type SafetensorsContents,
  type SafetensorsHeader,
  type SafetensorsTensor,
  type SafetensorsTensorInfo,
} from './safetensors-header.js';

/** Typed arrays accepted as tensor data by the writer and returned by `safetensorsValues`. */
export type SafetensorsData =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** A tensor to write: `data` is the typed array of its dtype, or a Uint8Array of its little-endian bytes. */
export interface SafetensorsTensorInput {
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  readonly data: SafetensorsData;
}

/**
 * A tensor object that reads its own values, such as a TensorFlow.js `tf.Tensor` (matched by shape, not by
 * importing tfjs): `dtype` 'float32' → F32 (Float32Array), 'int32' → I32 (Int32Array), 'bool' → BOOL
 * (Uint8Array of 0/1); other dtypes ('complex64', 'string') are refused. The file writers (writeSafetensorsFile,
 * saveCheckpointFolder) read each one once with `await data()` when it has one; the in-memory encoders
 * (serializeSafetensors, encodeSafetensors), which are synchronous, with `dataSync()`, which tfjs's webgpu backend
 * cannot do under Node for tensors on the GPU (read those with `await data()` first, or use a file writer).
 */
export interface SafetensorsTensorLike {
  readonly dtype: string;
  readonly shape: readonly number[];
  dataSync(): unknown;
  data?(): Promise<unknown>;
}

/** Named tensors to write, as a Map or a plain object (a `tf.NamedTensorMap` qualifies). */
export type SafetensorsTensorInputs =
  | ReadonlyMap<string, SafetensorsTensorInput | SafetensorsTensorLike>
  | Readonly<Record<string, SafetensorsTensorInput | SafetensorsTensorLike>>;

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---------------------------------------------------------------------------------------------
// Reading from memory

/** Validates the header of a complete safetensors buffer and returns it; tensor bytes are not copied. */
export function readSafetensorsHeader(bytes: Uint8Array): SafetensorsHeader {
  const n = decodeHeaderLength(bytes, bytes.byteLength);
  return parseHeaderJson(bytes.subarray(8, 8 + n), bytes.byteLength);
}

/**
 * Parses a complete safetensors buffer. Every tensor's `data` is a view into `bytes` (no copy);
 * throws `SafetensorsError` (with a `code`) on any violation of the format.
 */
export function readSafetensors(bytes: Uint8Array): SafetensorsContents {
  const header = readSafetensorsHeader(bytes);
  const tensors = new Map<string, SafetensorsTensor>();
  for (const info of header.tensors) {
    const [begin, end] = info.dataOffsets;
    tensors.set(info.name, {
      dtype: info.dtype,
      shape: info.shape,
      data: bytes.subarray(header.dataStart + begin, header.dataStart + end),
    });
  }
  return { tensors, metadata: header.metadata };
}

/**
 * The values of a tensor as a typed array of its dtype: F32 → Float32Array, I32 → Int32Array,
 * I64 → BigInt64Array, F64 → Float64Array, U8/BOOL → Uint8Array, …; F16 and BF16 are widened
 * to Float32Array (exactly). The result may share memory with `tensor.data` when it is aligned.
 * F8 dtypes throw `UNSUPPORTED_DTYPE`.
 */
export function safetensorsValues(tensor: SafetensorsTensor): SafetensorsData {
  const { dtype, data } = tensor;
  switch (dtype) {
    case 'F32':
      return view(data, 4, (b, o, n) => new Float32Array(b, o, n));
    case 'F64':
      return view(data, 8, (b, o, n) => new Float64Array(b, o, n));
    case 'I32':
      return view(data, 4, (b, o, n) => new Int32Array(b, o, n));
    case 'U32':
      return view(data, 4, (b, o, n) => new Uint32Array(b, o, n));
    case 'I16':
      return view(data, 2, (b, o, n) => new Int16Array(b, o, n));
    case 'U16':
      return view(data, 2, (b, o, n) => new Uint16Array(b, o, n));
    case 'I64':
      return view(data, 8, (b, o, n) => new BigInt64Array(b, o, n));
    case 'U64':
      return view(data, 8, (b, o, n) => new BigUint64Array(b, o, n));
    case 'I8':
      return new Int8Array(data.buffer, data.byteOffset, data.byteLength);
    case 'U8':
    case 'BOOL':
      return data;
    case 'F16':
      return widenHalf(
        view(data, 2, (b, o, n) => new Uint16Array(b, o, n)),
        halfToFloat,
      );
    case 'BF16':
      return widenHalf(
        view(data, 2, (b, o, n) => new Uint16Array(b, o, n)),
        (h) => bf16ToFloat(h),
      );
    default:
      throw new SafetensorsError(
        'UNSUPPORTED_DTYPE',
        `dtype ${dtype} has no JavaScript typed array; read its raw bytes from tensor.data`,
      );
  }
}

function view<T extends SafetensorsData>(
  data: Uint8Array,
  size: number,
  make: (b: ArrayBufferLike, offset: number, n: number) => T,
): T {
  const n = data.byteLength / size;
  if (HOST_LITTLE_ENDIAN && data.byteOffset % size === 0) return make(data.buffer, data.byteOffset, n);
  const copy = data.slice();
  if (!HOST_LITTLE_ENDIAN) swapBytes(copy, size);
  return make(copy.buffer, 0, n);
}

function widenHalf(bits: Uint16Array, convert: (h: number) => number): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = convert(bits[i] ?? 0);
  return out;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE 754 binary16 → number: sign · 2^(e−15) · (1 + m/1024), subnormals 2^−14 · m/1024. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** bfloat16 → number: the high 16 bits of a float32. */
function bf16ToFloat(h: number): number {
  u32Scratch[0] = h << 16;
  return f32Scratch[0] ?? 0;
}

function swapBytes(bytes: Uint8Array, size: number): void {
  if (size === 1) return;
  for (let i = 0; i < bytes.length; i += size) bytes.subarray(i, i + size).reverse();
}

// ---------------------------------------------------------------------------------------------
// Writing

interface PlannedTensor {
  readonly name: string;
  readonly bytes: Uint8Array;
}

interface Plan {
  /** 8-byte length field + padded JSON header. */
  readonly head: Uint8Array;
  readonly tensors: readonly PlannedTensor[];
  readonly totalBytes: number;
}

const TYPED_ARRAY_FOR: Readonly<Record<SafetensorsDType, string>> = {
  BOOL: 'Uint8Array',
  U8: 'Uint8Array',
  I8: 'Int8Array',
  F8_E5M2: 'Uint8Array',
  F8_E4M3: 'Uint8Array',
  I16: 'Int16Array',
  U16: 'Uint16Array',
  F16: 'Uint16Array',
  BF16: 'Uint16Array',
  I32: 'Int32Array',
  U32: 'Uint32Array',
  F32: 'Float32Array',
  F64: 'Float64Array',
  I64: 'BigInt64Array',
  U64: 'BigUint64Array',
};

const utf8Encoder = new TextEncoder();

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function invalid(message: string): SafetensorsError {
  return new SafetensorsError('INVALID_ARGUMENT', message);
}

/** The safetensors dtype and typed array of each tensor-like dtype the writer takes. */
const TENSOR_LIKE_DTYPES: Readonly<Record<string, { dtype: SafetensorsDType; array: string }>> = {
  float32: { dtype: 'F32', array: 'Float32Array' },
  int32: { dtype: 'I32', array: 'Int32Array' },
  bool: { dtype: 'BOOL', array: 'Uint8Array' },
};

function isTensorLike(t: SafetensorsTensorInput | SafetensorsTensorLike): t is SafetensorsTensorLike {
  return typeof (t as Partial<SafetensorsTensorLike>).dataSync === 'function';
}

/** The safetensors dtype of a tensor-like, or an error naming the dtypes that can be written. */
function tensorLikeKind(name: string, t: SafetensorsTensorLike): { dtype: SafetensorsDType; array: string } {
  const kind = Object.hasOwn(TENSOR_LIKE_DTYPES, t.dtype) ? TENSOR_LIKE_DTYPES[t.dtype] : undefined;
  if (kind === undefined) {
    throw invalid(
      `tensor ${JSON.stringify(name)}: a tensor of dtype ${t.dtype} cannot be written; ` +
        `safetensors takes tensors of dtype ${Object.keys(TENSOR_LIKE_DTYPES).join(', ')} (cast it first)`,
    );
  }
  return kind;
}

/** A tensor-like's values as writer input, checked against its dtype (`how`: the read that gave them). */
function tensorLikeInput(name: string, t: SafetensorsTensorLike, data: unknown, how: string): SafetensorsTensorInput {
  const kind = tensorLikeKind(name, t);
  if (!ArrayBuffer.isView(data) || data.constructor.name !== kind.array) {
    throw invalid(`tensor ${JSON.stringify(name)}: ${how} of a ${t.dtype} tensor must give a ${kind.array}`);
  }
  return { dtype: kind.dtype, shape: [...t.shape], data: data as SafetensorsData };
}

/** A tensor-like (tf.Tensor) as writer input: its values read once with dataSync, its dtype mapped. */
function fromTensorLike(name: string, t: SafetensorsTensorLike): SafetensorsTensorInput {
  tensorLikeKind(name, t);
  let data: unknown;
  try {
    data = t.dataSync();
  } catch (cause) {
    throw new SafetensorsError(
      'INVALID_ARGUMENT',
      `tensor ${JSON.stringify(name)}: dataSync() failed (${(cause as Error).message}); on a backend that cannot ` +
        'read synchronously (tfjs webgpu under Node) use writeSafetensorsFile, which reads with await data(), or ' +
        'pass the values read with await tensor.data()',
    );
  }
  return tensorLikeInput(name, t, data, 'dataSync()');
}

/**
 * Writer input with every tensor-like read into a typed array by `await data()` where it has one (any tfjs
 * backend, webgpu included), else by dataSync; plain inputs are kept as they are. Insertion order is kept.
 */
export async function readSafetensorsInputs(
  tensors: SafetensorsTensorInputs,
): Promise<Map<string, SafetensorsTensorInput>> {
  const entries: [string, SafetensorsTensorInput | SafetensorsTensorLike][] =
    tensors instanceof Map
      ? [...(tensors as ReadonlyMap<string, SafetensorsTensorInput | SafetensorsTensorLike>)]
      : Object.entries(tensors as Readonly<Record<string, SafetensorsTensorInput | SafetensorsTensorLike>>);
  const out = new Map<string, SafetensorsTensorInput>();
  for (const [name, t] of entries) {
    if (!isTensorLike(t)) out.set(name, t);
    else if (typeof t.data === 'function') {
      tensorLikeKind(name, t);
      out.set(name, tensorLikeInput(name, t, await t.data(), 'data()'));
    } else out.set(name, fromTensorLike(name, t));
  }
  return out;
}

/**
 * The (name, tensor) pairs of writer input given as a Map or a plain object, in insertion order; tensor-likes
 * (tf.Tensor) are read into typed arrays here.
 */
export function safetensorsInputEntries(tensors: SafetensorsTensorInputs): [string, SafetensorsTensorInput][] {
  const entries: [string, SafetensorsTensorInput | SafetensorsTensorLike][] =
    tensors instanceof Map
      ? [...(tensors as ReadonlyMap<string, SafetensorsTensorInput | SafetensorsTensorLike>)]
      : Object.entries(tensors as Readonly<Record<string, SafetensorsTensorInput | SafetensorsTensorLike>>);
  return entries.map(([name, t]) => [name, isTensorLike(t) ? fromTensorLike(name, t) : t]);
}

/** Validates the writer's inputs and lays them out exactly as the Python/Rust reference writer does. */
function plan(tensors: SafetensorsTensorInputs, metadata: Readonly<Record<string, string>> | null | undefined): Plan {
  const entries = safetensorsInputEntries(tensors);
  const checked = entries.map(([name, t]) => {
    if (name === '__metadata__')
      throw invalid('"__metadata__" is reserved for the metadata map and cannot name a tensor');
    if (LONE_SURROGATE.test(name))
      throw invalid(`tensor name ${JSON.stringify(name)} holds a lone UTF-16 surrogate and cannot be encoded as UTF-8`);
    const where = `tensor ${JSON.stringify(name)}`;
    if (!Object.hasOwn(SAFETENSORS_DTYPE_SIZES, t.dtype)) throw invalid(`${where}: unknown dtype ${String(t.dtype)}`);
    let elements = 1;
    for (const d of t.shape) {
      if (!Number.isSafeInteger(d) || d < 0)
        throw invalid(`${where}: shape [${t.shape.join(', ')}] must hold non-negative integers`);
      elements *= d;
    }
    const byteLength = elements * SAFETENSORS_DTYPE_SIZES[t.dtype];
    if (!Number.isSafeInteger(byteLength)) throw invalid(`${where}: shape [${t.shape.join(', ')}] is too large`);
    const kind = t.data.constructor.name;
    const isRawBytes = t.data instanceof Uint8Array;
    if (!isRawBytes && kind !== TYPED_ARRAY_FOR[t.dtype]) {
      throw invalid(
        `${where}: dtype ${t.dtype} needs a ${TYPED_ARRAY_FOR[t.dtype]} (or a Uint8Array of its bytes), got a ${kind}`,
      );
    }
    if (t.data.byteLength !== byteLength) {
      throw invalid(
        `${where}: shape [${t.shape.join(', ')}] of ${t.dtype} needs ${byteLength} bytes, the data has ${t.data.byteLength}`,
      );
    }
    let bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    if (!HOST_LITTLE_ENDIAN && !isRawBytes) {
      bytes = bytes.slice();
      swapBytes(bytes, SAFETENSORS_DTYPE_SIZES[t.dtype]);
    }
    return { name, dtype: t.dtype, shape: [...t.shape], bytes };
  });
  // Reference order: descending dtype alignment rank, then name by UTF-8 bytes.
  checked.sort(
    (a, b) => SAFETENSORS_DTYPE_RANK[b.dtype] - SAFETENSORS_DTYPE_RANK[a.dtype] || compareUtf8(a.name, b.name),
  );

  const parts: string[] = [];
  if (metadata !== undefined && metadata !== null) {
    const keys = Object.keys(metadata).sort(compareUtf8);
    const fields = keys.map((k) => {
      const v: unknown = metadata[k];
      if (typeof v !== 'string') throw invalid(`metadata ${JSON.stringify(k)} must be a string, got ${typeof v}`);
      if (LONE_SURROGATE.test(k) || LONE_SURROGATE.test(v))
        throw invalid(`metadata ${JSON.stringify(k)} holds a lone UTF-16 surrogate`);
      return `${JSON.stringify(k)}:${JSON.stringify(v)}`;
    });
    parts.push(`"__metadata__":{${fields.join(',')}}`);
  }
  let offset = 0;
  for (const t of checked) {
    const end = offset + t.bytes.byteLength;
    parts.push(
      `${JSON.stringify(t.name)}:{"dtype":"${t.dtype}","shape":[${t.shape.join(',')}],"data_offsets":[${offset},${end}]}`,
    );
    offset = end;
  }
  const json = utf8Encoder.encode(`{${parts.join(',')}}`);
  const padded = Math.ceil(json.byteLength / 8) * 8;
  const head = new Uint8Array(8 + padded).fill(0x20, 8 + json.byteLength);
  new DataView(head.buffer).setBigUint64(0, BigInt(padded), true);
  head.set(json, 8);
  return { head, tensors: checked.map(({ name, bytes }) => ({ name, bytes })), totalBytes: head.byteLength + offset };
}

/**
 * Encodes tensors as safetensors without concatenating: `chunks` are the 8-byte length field plus
 * padded JSON header, then each tensor's bytes in file order (views of the inputs, not copies);
 * writing them one after the other gives exactly `serializeSafetensors(tensors, metadata)`.
 */
export function encodeSafetensors(
  tensors: SafetensorsTensorInputs,
  metadata?: Readonly<Record<string, string>> | null,
): { readonly chunks: readonly Uint8Array[]; readonly byteLength: number } {
  const { head, tensors: planned, totalBytes } = plan(tensors, metadata);
  return { chunks: [head, ...planned.map((t) => t.bytes)], byteLength: totalBytes };
}

/**
 * Serializes tensors to safetensors bytes, byte-identical to the reference writer (`safetensors.torch.save`)
 * for the same tensors: layout by descending dtype alignment then name, header padded with spaces to a
 * multiple of 8, `__metadata__` (keys sorted) first when given. Throws `INVALID_ARGUMENT` on bad input.
 */
export function serializeSafetensors(
  tensors: SafetensorsTensorInputs,
  metadata?: Readonly<Record<string, string>> | null,
): Uint8Array {
  const { head, tensors: planned, totalBytes } = plan(tensors, metadata);
  const out = new Uint8Array(totalBytes);
  out.set(head, 0);
  let at = head.byteLength;
  for (const t of planned) {
    out.set(t.bytes, at);
    at += t.bytes.byteLength;
  }
  return out;
}

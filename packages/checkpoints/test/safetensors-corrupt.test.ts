// Deliberately corrupted safetensors inputs: each must fail with a typed error, in memory and from a file.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openSafetensorsFile,
  readSafetensors,
  SafetensorsError,
  serializeSafetensors,
  type SafetensorsErrorCode,
} from '@grassflow/checkpoints';

/** A file from a header given as JSON text, `data` bytes after it, and an optional forged length field. */
function build(json: string, data: Uint8Array | number = 0, length?: bigint): Uint8Array {
  const header = Buffer.from(json, 'utf8');
  const body = typeof data === 'number' ? new Uint8Array(data) : data;
  const out = new Uint8Array(8 + header.byteLength + body.byteLength);
  new DataView(out.buffer).setBigUint64(0, length ?? BigInt(header.byteLength), true);
  out.set(header, 8);
  out.set(body, 8 + header.byteLength);
  return out;
}

const entry = (dtype: string, shape: unknown, offsets: unknown): string =>
  `{"dtype":${JSON.stringify(dtype)},"shape":${JSON.stringify(shape)},"data_offsets":${JSON.stringify(offsets)}}`;

const valid = serializeSafetensors({
  a: { dtype: 'F32', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) },
  b: { dtype: 'I32', shape: [3], data: new Int32Array([5, 6, 7]) },
});
const validN = Number(new DataView(valid.buffer).getBigUint64(0, true));

const utf8Bad = new Uint8Array([2, 0, 0, 0, 0, 0, 0, 0, 0xc3, 0x28]);
const deep = `{"__metadata__":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;

const cases: [label: string, bytes: Uint8Array, code: SafetensorsErrorCode, message: RegExp][] = [
  ['empty file', new Uint8Array(0), 'EMPTY_FILE', /empty/],
  ['truncated inside the length field', valid.subarray(0, 5), 'TRUNCATED', /fewer than the 8-byte/],
  [
    'truncated inside the header',
    valid.subarray(0, 8 + Math.floor(validN / 2)),
    'TRUNCATED',
    /header length field says \d+ bytes but only/,
  ],
  [
    'truncated inside the data',
    valid.subarray(0, valid.byteLength - 3),
    'TRUNCATED',
    /describes 28 bytes of tensor data but only 25/,
  ],
  ['header length larger than the file', build('{}', 0, 1000n), 'TRUNCATED', /says 1000 bytes but only 2/],
  ['header length 2^63', build('{}', 0, 2n ** 63n), 'HEADER_TOO_LARGE', /9223372036854775808/],
  ['header length 2^64 - 1', build('{}', 0, 2n ** 64n - 1n), 'HEADER_TOO_LARGE', /limit/],
  ['header length just over 100 MB', build('{}', 0, 100_000_001n), 'HEADER_TOO_LARGE', /100000000-byte limit/],
  ['header is not UTF-8', utf8Bad, 'HEADER_NOT_UTF8', /UTF-8/],
  ['header is not JSON', build('{"a": [1, 2'), 'HEADER_NOT_JSON', /not valid JSON/],
  ['header padded with NUL instead of spaces', build('{}\0\0\0\0\0\0'), 'HEADER_NOT_JSON', /after the JSON value/],
  ['header with a trailing comma', build('{"__metadata__":{},}'), 'HEADER_NOT_JSON', /expected a string key/],
  ['header nested 20,000 levels deep', build(deep), 'HEADER_NOT_JSON', /deeper than/],
  ['header is a JSON array', build('[]'), 'HEADER_NOT_OBJECT', /JSON an array, not an object/],
  ['header is a JSON string', build('"x"'), 'HEADER_NOT_OBJECT', /the string "x"/],
  ['entry is not an object', build('{"a":[0,4]}', 4), 'INVALID_TENSOR_INFO', /tensor "a": the entry is an array/],
  [
    'entry without data_offsets',
    build('{"a":{"dtype":"F32","shape":[1]}}', 4),
    'INVALID_TENSOR_INFO',
    /no "data_offsets"/,
  ],
  [
    'unknown dtype',
    build(`{"a":${entry('F128', [1], [0, 16])}}`, 16),
    'UNKNOWN_DTYPE',
    /unknown dtype the string "F128"/,
  ],
  ['lower-case dtype', build(`{"a":${entry('f32', [1], [0, 4])}}`, 4), 'UNKNOWN_DTYPE', /"f32"/],
  [
    'negative dimension',
    build(`{"a":${entry('F32', [-1, 2], [0, 4])}}`, 4),
    'INVALID_SHAPE',
    /\[-1,2\] has a dimension that is not a non-negative integer/,
  ],
  [
    'fractional dimension',
    build('{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}', 4),
    'INVALID_SHAPE',
    /\[1\.5\]/,
  ],
  [
    'float literal dimension 2.0',
    build('{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', 8),
    'INVALID_SHAPE',
    /not a non-negative integer/,
  ],
  [
    'dimension beyond 2^53',
    build('{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}', 1),
    'INVALID_SHAPE',
    /too large/,
  ],
  [
    'shape whose byte size overflows',
    build(`{"a":${entry('F64', [2 ** 30, 2 ** 30], [0, 8])}}`, 8),
    'INVALID_SHAPE',
    /more than 2\^53/,
  ],
  ['shape is not an array', build(`{"a":${entry('F32', 4, [0, 16])}}`, 16), 'INVALID_SHAPE', /number 4/],
  [
    'offsets end before they begin',
    build(`{"a":${entry('U8', [0], [4, 0])}}`, 4),
    'INVALID_OFFSETS',
    /end before they begin/,
  ],
  ['negative offset', build(`{"a":${entry('U8', [1], [-1, 0])}}`, 1), 'INVALID_OFFSETS', /non-negative integers/],
  [
    'offset beyond 2^53',
    build('{"a":{"dtype":"U8","shape":[1],"data_offsets":[9007199254740993,9007199254740994]}}', 1),
    'INVALID_OFFSETS',
    /below 2\^53/,
  ],
  ['offsets not a pair', build(`{"a":${entry('U8', [1], [0, 1, 2])}}`, 1), 'INVALID_OFFSETS', /not a pair/],
  [
    'offsets past the end of the buffer',
    build(`{"a":${entry('F32', [1], [0, 4])},"b":${entry('F32', [1], [4, 8])}}`, 4),
    'TRUNCATED',
    /describes 8 bytes of tensor data but only 4/,
  ],
  [
    'overlapping offsets',
    build(`{"a":${entry('F32', [2], [0, 8])},"b":${entry('F32', [2], [4, 12])}}`, 12),
    'OFFSETS_OVERLAP',
    /"b" \[4, 12\) overlaps tensor "a" \[0, 8\)/,
  ],
  [
    'two tensors sharing bytes',
    build(`{"a":${entry('F32', [1], [0, 4])},"b":${entry('F32', [1], [0, 4])}}`, 4),
    'OFFSETS_OVERLAP',
    /overlaps/,
  ],
  [
    'gap between tensors',
    build(`{"a":${entry('F32', [1], [0, 4])},"b":${entry('F32', [1], [8, 12])}}`, 12),
    'OFFSETS_GAP',
    /leaving 4 unclaimed bytes after tensor "a"/,
  ],
  [
    'gap at the start of the buffer',
    build(`{"a":${entry('F32', [1], [4, 8])}}`, 8),
    'OFFSETS_GAP',
    /after the start of the byte buffer/,
  ],
  [
    'size does not match shape x dtype',
    build(`{"a":${entry('F32', [3], [0, 8])}}`, 8),
    'SIZE_MISMATCH',
    /needs 12 bytes but data_offsets \[0, 8\] span 8/,
  ],
  [
    'trailing bytes after the last tensor',
    build(`{"a":${entry('F32', [1], [0, 4])}}`, 6),
    'TRAILING_BYTES',
    /2 trailing bytes/,
  ],
  ['trailing bytes with no tensors', build('{}', 1), 'TRAILING_BYTES', /1 trailing bytes/],
  ['metadata value is a number', build('{"__metadata__":{"step":3}}'), 'INVALID_METADATA', /"step" holds number 3/],
  ['metadata value is an object', build('{"__metadata__":{"cfg":{"d":8}}}'), 'INVALID_METADATA', /holds an object/],
  ['metadata is an array', build('{"__metadata__":["pt"]}'), 'INVALID_METADATA', /an array/],
  [
    'duplicate tensor name',
    build(`{"a":${entry('F32', [1], [0, 4])},"a":${entry('F32', [1], [4, 8])}}`, 8),
    'DUPLICATE_KEY',
    /duplicate key "a"/,
  ],
  ['duplicate metadata key', build('{"__metadata__":{"k":"1","k":"2"}}'), 'DUPLICATE_KEY', /duplicate key "k"/],
  [
    'duplicate field inside an entry',
    build('{"a":{"dtype":"F32","dtype":"I32","shape":[1],"data_offsets":[0,4]}}', 4),
    'DUPLICATE_KEY',
    /"dtype"/,
  ],
  ['duplicate __metadata__', build('{"__metadata__":{},"__metadata__":{}}'), 'DUPLICATE_KEY', /__metadata__/],
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grassflow-st-bad-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function codeOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('corrupted safetensors are rejected with typed errors', () => {
  it('the uncorrupted base file parses', () => {
    expect([...readSafetensors(valid).tensors.keys()]).toEqual(['a', 'b']);
  });

  it.each(cases)('%s (in memory)', (_label, bytes, code, message) => {
    const error = codeOf(() => readSafetensors(bytes));
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as SafetensorsError).code).toBe(code);
    expect((error as Error).message).toMatch(message);
  });

  it.each(cases)('%s (from a file)', async (label, bytes, code, message) => {
    const path = join(dir, `${label.replace(/[^a-z0-9]+/gi, '_')}.safetensors`);
    await writeFile(path, bytes);
    const error = await openSafetensorsFile(path).then(
      async (r) => {
        await r.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as SafetensorsError).code).toBe(code);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(message);
  });

  it('every proper prefix of a valid file is rejected as truncated (or empty)', () => {
    for (let cut = 0; cut < valid.byteLength; cut++) {
      const error = codeOf(() => readSafetensors(valid.subarray(0, cut)));
      expect(error, `cut at ${cut}`).toBeInstanceOf(SafetensorsError);
      expect((error as SafetensorsError).code, `cut at ${cut}`).toBe(cut === 0 ? 'EMPTY_FILE' : 'TRUNCATED');
    }
  });

  it('random byte corruption never escapes as anything but SafetensorsError', () => {
    let seed = 12345;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    let rejected = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const bytes = valid.slice();
      const flips = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < flips; k++) bytes[Math.floor(rand() * bytes.byteLength)] = Math.floor(rand() * 256);
      try {
        readSafetensors(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(SafetensorsError);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(100); // most header flips must be caught, data flips are legal
  });

  it('a corrupt header on a 3 GB (sparse) file is rejected without reading the data', async () => {
    const path = join(dir, 'huge.safetensors');
    const json = `{"w":${entry('F32', [750_000_000], [0, 3_000_000_000])}}`;
    const head = build(json);
    await writeFile(path, head);
    const handle = await open(path, 'r+');
    await handle.truncate(head.byteLength + 3_000_000_000 + 5); // 5 trailing bytes: invalid
    await handle.close();
    await expect(openSafetensorsFile(path)).rejects.toMatchObject({ code: 'TRAILING_BYTES' });
    // Valid size: the header is accepted and nothing is read until asked.
    const ok = await open(path, 'r+');
    await ok.truncate(head.byteLength + 3_000_000_000);
    await ok.close();
    const reader = await openSafetensorsFile(path);
    expect(reader.header.tensors[0]?.shape).toEqual([750_000_000]);
    await reader.close();
  });

  it('a missing file is an IO error naming the path', async () => {
    const path = join(dir, 'absent.safetensors');
    const error = await openSafetensorsFile(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as SafetensorsError).code).toBe('IO');
    expect((error as SafetensorsError).message).toContain(`${path}: no such file`);
  });
});

// Round trips, byte-exact compatibility with the reference (Python/Rust) writer, and dtype decoding.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openSafetensorsFile,
  readSafetensors,
  readSafetensorsFile,
  readSafetensorsHeader,
  safetensorsValues,
  SafetensorsError,
  serializeSafetensors,
  nodeFileSystem,
  writeSafetensorsFile,
  type FileSystemOps,
  type SafetensorsTensorInput,
} from '@grassflow/checkpoints';

const ascii = (s: string): number[] => [...Buffer.from(s, 'utf8')];
const f32le = (...xs: number[]): number[] => [...new Uint8Array(new Float32Array(xs).buffer)];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grassflow-st-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('byte-exact compatibility with the reference safetensors writer', () => {
  it('one F32 tensor: u64 LE header length, compact JSON, no padding needed, LE floats', () => {
    const data = new Float32Array([0, 1, 2, 3, 4, 5]);
    const bytes = serializeSafetensors({ 'attn.0': { dtype: 'F32', shape: [1, 2, 3], data } });
    const json = '{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}';
    expect(json.length).toBe(64); // already a multiple of 8: no padding
    const expected = [64, 0, 0, 0, 0, 0, 0, 0, ...ascii(json), ...f32le(0, 1, 2, 3, 4, 5)];
    expect([...bytes]).toEqual(expected);
    // The same bytes as written out in the Rust crate's `test_serialization`.
    expect(expected.slice(0, 12)).toEqual([64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116]);
    expect(expected.slice(-8)).toEqual([0, 0, 128, 64, 0, 0, 160, 64]);
  });

  it('pads the header with spaces to a multiple of 8', () => {
    const data = new Float32Array([0, 1, 2, 3, 4, 5]);
    const bytes = serializeSafetensors({ attn0: { dtype: 'F32', shape: [1, 1, 2, 3], data } });
    const json = '{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}';
    expect(json.length).toBe(65);
    const expected = [72, 0, 0, 0, 0, 0, 0, 0, ...ascii(json), ...ascii(' '.repeat(7)), ...f32le(0, 1, 2, 3, 4, 5)];
    expect([...bytes]).toEqual(expected);
  });

  it('empty file and metadata-only file', () => {
    expect([...serializeSafetensors({})]).toEqual([8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32]);
    const json = '{"__metadata__":{"framework":"pt"}}';
    expect([...serializeSafetensors({}, { framework: 'pt' })]).toEqual([
      40,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...ascii(json),
      32,
      32,
      32,
      32,
      32,
    ]);
  });

  it('mixed dtypes: larger-aligned dtypes first, then by name; metadata first', () => {
    const tensors: Record<string, SafetensorsTensorInput> = {
      a: { dtype: 'F32', shape: [1], data: new Float32Array([1.5]) },
      c: { dtype: 'U8', shape: [3], data: new Uint8Array([7, 8, 9]) },
      b: { dtype: 'I64', shape: [2], data: new BigInt64Array([-1n, 2n ** 40n]) },
    };
    const json =
      '{"__metadata__":{"format":"pt"},' +
      '"b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},' +
      '"a":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},' +
      '"c":{"dtype":"U8","shape":[3],"data_offsets":[20,23]}}';
    const pad = (8 - (json.length % 8)) % 8;
    const n = json.length + pad;
    const expected = [
      n,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...ascii(json),
      ...ascii(' '.repeat(pad)),
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff, // -1 as i64 LE
      0,
      0,
      0,
      0,
      0,
      1,
      0,
      0, // 2^40 as i64 LE
      ...f32le(1.5),
      7,
      8,
      9,
    ];
    expect(n % 8).toBe(0);
    expect([...serializeSafetensors(tensors, { format: 'pt' })]).toEqual(expected);
    // And the reader takes the hand-built bytes apart again.
    const back = readSafetensors(new Uint8Array(expected));
    expect([...back.tensors.keys()]).toEqual(['b', 'a', 'c']);
    expect(back.metadata).toEqual({ format: 'pt' });
    expect([...(safetensorsValues(back.tensors.get('b')!) as BigInt64Array)]).toEqual([-1n, 2n ** 40n]);
  });

  it('reads a header that lists entries out of offset order and carries unknown fields', () => {
    const json =
      '{"y":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},"x":{"shape":[],"dtype":"I32","data_offsets":[0,4],"note":1}}';
    const bytes = new Uint8Array([json.length, 0, 0, 0, 0, 0, 0, 0, ...ascii(json), 1, 0, 0, 0, 2, 0, 0, 0]);
    const { tensors } = readSafetensors(bytes);
    expect([...tensors.keys()]).toEqual(['x', 'y']);
    expect([...(safetensorsValues(tensors.get('y')!) as Int32Array)]).toEqual([2]);
    expect(tensors.get('x')!.shape).toEqual([]);
  });
});

describe('round trips are bit-exact', () => {
  const special = new Float32Array([0, -0, 1, -1.5, Infinity, -Infinity, 1e-45, 3.4028234663852886e38]);
  const nanBits = new Uint32Array([0x7fc00001, 0xffffffff]); // NaNs with payloads must survive
  const tensors = new Map<string, SafetensorsTensorInput>([
    ['w.special', { dtype: 'F32', shape: [2, 4], data: special }],
    ['w.nan', { dtype: 'F32', shape: [2], data: new Uint8Array(nanBits.buffer) }],
    ['scalar', { dtype: 'F32', shape: [], data: new Float32Array([42]) }],
    ['empty', { dtype: 'F32', shape: [0, 3], data: new Float32Array(0) }],
    ['ids', { dtype: 'I32', shape: [3], data: new Int32Array([-2147483648, 0, 2147483647]) }],
    ['big', { dtype: 'I64', shape: [2], data: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]) }],
    ['f64', { dtype: 'F64', shape: [1], data: new Float64Array([Math.PI]) }],
    ['mask', { dtype: 'BOOL', shape: [3], data: new Uint8Array([1, 0, 1]) }],
    ['i8', { dtype: 'I8', shape: [2], data: new Int8Array([-128, 127]) }],
    ['u16', { dtype: 'U16', shape: [1], data: new Uint16Array([65535]) }],
    ['half', { dtype: 'F16', shape: [5], data: new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00]) }],
    ['brain', { dtype: 'BF16', shape: [2], data: new Uint16Array([0x3f80, 0xc0a0]) }],
    ['ünï ✓', { dtype: 'U8', shape: [1], data: new Uint8Array([5]) }],
  ]);
  const metadata: Record<string, string> = {
    format: 'pt',
    'quote"and\\slash': 'line\nbreak\ttab',
    emoji: '🌱',
    empty: '',
  };
  Object.defineProperty(metadata, '__proto__', { value: 'not a prototype', enumerable: true });

  const checkSame = (back: ReturnType<typeof readSafetensors>): void => {
    expect(back.metadata).toEqual(metadata);
    expect(Object.getPrototypeOf(back.metadata)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back.metadata, '__proto__')?.value).toBe('not a prototype');
    expect(new Set(back.tensors.keys())).toEqual(new Set(tensors.keys()));
    for (const [name, t] of tensors) {
      const got = back.tensors.get(name)!;
      expect(got.dtype, name).toBe(t.dtype);
      expect(got.shape, name).toEqual(t.shape);
      expect([...got.data], name).toEqual([...new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)]);
    }
  };

  it('in memory', () => {
    const bytes = serializeSafetensors(tensors, metadata);
    expect(readSafetensorsHeader(bytes).dataStart % 8).toBe(0);
    checkSame(readSafetensors(bytes));
  });

  it('through a file: the file holds exactly the serialized bytes, and reads back equal', async () => {
    const path = join(dir, 'round.safetensors');
    await writeSafetensorsFile(path, tensors, metadata);
    const onDisk = new Uint8Array(await readFile(path));
    expect(Buffer.compare(onDisk, serializeSafetensors(tensors, metadata))).toBe(0);
    checkSame(await readSafetensorsFile(path));
  });

  it('decodes values of each dtype', () => {
    const back = readSafetensors(serializeSafetensors(tensors, metadata)).tensors;
    const values = (name: string): unknown[] => [...safetensorsValues(back.get(name)!)];
    expect(values('w.special')).toEqual([...special]);
    expect(values('scalar')).toEqual([42]);
    expect(values('empty')).toEqual([]);
    expect(values('ids')).toEqual([-2147483648, 0, 2147483647]);
    expect(values('big')).toEqual([-(2n ** 63n), 2n ** 63n - 1n]);
    expect(values('f64')).toEqual([Math.PI]);
    expect(values('i8')).toEqual([-128, 127]);
    expect(values('half')).toEqual([1, -2, 65504, 2 ** -24, Infinity]);
    expect(values('brain')).toEqual([1, -5]);
  });

  it('decodes values from an unaligned buffer by copying', () => {
    const bytes = serializeSafetensors({ x: { dtype: 'F32', shape: [2], data: new Float32Array([1.25, -3]) } });
    const shifted = new Uint8Array(bytes.byteLength + 1);
    shifted.set(bytes, 1);
    const t = readSafetensors(shifted.subarray(1)).tensors.get('x')!;
    expect(t.data.byteOffset % 4).not.toBe(0);
    expect([...safetensorsValues(t)]).toEqual([1.25, -3]);
  });

  it('opens a file lazily: header first, tensors on demand', async () => {
    const path = join(dir, 'lazy.safetensors');
    await writeSafetensorsFile(path, tensors, metadata);
    const reader = await openSafetensorsFile(path);
    try {
      expect(reader.header.tensors.map((t) => t.name)).toContain('big');
      expect(reader.headerBytes.byteLength).toBe(reader.header.dataStart);
      const ids = await reader.read('ids');
      expect([...safetensorsValues(ids)]).toEqual([-2147483648, 0, 2147483647]);
      await expect(reader.read('nope')).rejects.toMatchObject({ code: 'TENSOR_NOT_FOUND' });
    } finally {
      await reader.close();
    }
  });
});

describe('writer argument checks', () => {
  const cases: [string, () => unknown, RegExp][] = [
    [
      'typed array of the wrong kind',
      () => serializeSafetensors({ x: { dtype: 'F32', shape: [1], data: new Int32Array(1) } }),
      /F32 needs a Float32Array/,
    ],
    [
      'data length does not match the shape',
      () => serializeSafetensors({ x: { dtype: 'F32', shape: [3], data: new Float32Array(2) } }),
      /needs 12 bytes, the data has 8/,
    ],
    [
      'negative dimension',
      () => serializeSafetensors({ x: { dtype: 'F32', shape: [-1], data: new Float32Array(0) } }),
      /non-negative integers/,
    ],
    [
      'reserved name',
      () => serializeSafetensors({ __metadata__: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }),
      /reserved/,
    ],
    [
      'lone surrogate in a name',
      () => serializeSafetensors({ ['a\uD800']: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }),
      /surrogate/,
    ],
    [
      'non-string metadata',
      () => serializeSafetensors({}, { step: 3 as unknown as string }),
      /metadata "step" must be a string/,
    ],
  ];
  it.each(cases)('%s', (_label, run, message) => {
    let error: unknown;
    try {
      run();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as SafetensorsError).code).toBe('INVALID_ARGUMENT');
    expect((error as Error).message).toMatch(message);
  });
});

describe('writeSafetensorsFile is atomic', () => {
  const a = { w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } } as const;
  const b = { w: { dtype: 'F32', shape: [3], data: new Float32Array([3, 4, 5]) } } as const;

  it('a write that fails half-way leaves the previous file intact and no temp file', async () => {
    const sub = await mkdtemp(join(dir, 'atomic-'));
    const path = join(sub, 'w.safetensors');
    await writeSafetensorsFile(path, a);
    let writes = 0;
    const failing: FileSystemOps = {
      ...nodeFileSystem,
      create: async (p) => {
        const file = await nodeFileSystem.create(p);
        return {
          ...file,
          write: async (bytes) => {
            if (++writes === 2) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
            await file.write(bytes);
          },
        };
      },
    };
    await expect(writeSafetensorsFile(path, b, null, { fs: failing })).rejects.toThrow(/ENOSPC/);
    expect(await readdir(sub)).toEqual(['w.safetensors']);
    expect([...safetensorsValues((await readSafetensorsFile(path)).tensors.get('w')!)]).toEqual([1, 2]);
    await writeSafetensorsFile(path, b);
    expect([...safetensorsValues((await readSafetensorsFile(path)).tensors.get('w')!)]).toEqual([3, 4, 5]);
  });
});

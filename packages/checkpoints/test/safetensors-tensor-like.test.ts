// The writer takes tensor objects that read their own values (a tf.Tensor's shape: dtype, shape, dataSync, data),
// without checkpoints depending on tfjs.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadCheckpointFolder,
  readSafetensors,
  readSafetensorsInputs,
  safetensorsValues,
  SafetensorsError,
  saveCheckpointFolder,
  serializeSafetensors,
  writeSafetensorsFile,
  type SafetensorsTensorLike,
} from '@grassflow/checkpoints';

const like = (dtype: string, shape: number[], data: unknown): SafetensorsTensorLike => ({
  dtype,
  shape,
  dataSync: () => data,
});

describe('tensor-like writer input', () => {
  it('writes float32, int32 and bool tensors as F32, I32 and BOOL with their values', () => {
    const bytes = serializeSafetensors({
      w: like('float32', [2, 2], new Float32Array([1.5, -2, 3.25, 0])),
      ids: like('int32', [3], new Int32Array([7, -1, 2 ** 30])),
      mask: like('bool', [2], new Uint8Array([1, 0])),
    });
    const { tensors } = readSafetensors(bytes);
    const w = tensors.get('w');
    const ids = tensors.get('ids');
    const mask = tensors.get('mask');
    expect([w?.dtype, ids?.dtype, mask?.dtype]).toEqual(['F32', 'I32', 'BOOL']);
    expect(w?.shape).toEqual([2, 2]);
    expect([...safetensorsValues(w!)]).toEqual([1.5, -2, 3.25, 0]);
    expect([...safetensorsValues(ids!)]).toEqual([7, -1, 2 ** 30]);
    expect([...safetensorsValues(mask!)]).toEqual([1, 0]);
  });

  it('gives the same bytes as the typed-array input of the same tensor', () => {
    const data = new Float32Array([0.1, 0.2, 0.3]);
    const fromLike = serializeSafetensors(new Map([['x', like('float32', [3], data)]]));
    const fromArray = serializeSafetensors(new Map([['x', { dtype: 'F32' as const, shape: [3], data }]]));
    expect(fromLike).toEqual(fromArray);
  });

  it('refuses dtypes safetensors cannot hold from tfjs, naming the tensor and what it takes', () => {
    const write = (): Uint8Array => serializeSafetensors({ z: like('complex64', [1], new Float32Array(2)) });
    expect(write).toThrow(SafetensorsError);
    expect(write).toThrow(/tensor "z": a tensor of dtype complex64 cannot be written; .*float32, int32, bool/);
  });

  it('refuses a dataSync that does not give the typed array of the dtype', () => {
    expect(() => serializeSafetensors({ q: like('int32', [2], new Float32Array(2)) })).toThrow(
      /tensor "q": dataSync\(\) of a int32 tensor must give a Int32Array/,
    );
  });
});

/** Like a tf.Tensor on webgpu under Node: dataSync throws (as tfjs-backend-webgpu does there), data() resolves. */
const gpuLike = (dtype: string, shape: number[], data: unknown): SafetensorsTensorLike => ({
  dtype,
  shape,
  dataSync: () => {
    throw new ReferenceError('OffscreenCanvas is not defined');
  },
  data: () => Promise.resolve(data),
});

describe('tensor-likes that can only be read asynchronously (tfjs webgpu under Node)', () => {
  it('writeSafetensorsFile and saveCheckpointFolder read them with data(); the bytes equal the typed-array input', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'checkpoints-async-'));
    try {
      const w = new Float32Array([0.5, -1, 2, 4]);
      const ids = new Int32Array([3, 1, 2]);
      await writeSafetensorsFile(join(dir, 'a.safetensors'), { w: gpuLike('float32', [2, 2], w) });
      const want = serializeSafetensors({ w: { dtype: 'F32', shape: [2, 2], data: w } });
      expect(new Uint8Array(await readFile(join(dir, 'a.safetensors')))).toEqual(want);
      await saveCheckpointFolder(join(dir, 'ckpt'), {
        model: { kind: 'test' },
        tensors: { w: gpuLike('float32', [2, 2], w) },
        extraTensors: { ids: gpuLike('int32', [3], ids) },
      });
      const loaded = await loadCheckpointFolder(join(dir, 'ckpt'));
      expect([...(loaded.tensors.get('w')?.data ?? [])]).toEqual([...w]);
      expect([...(loaded.extraTensors.get('ids')?.data ?? [])]).toEqual([...ids]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('readSafetensorsInputs keeps plain inputs and checks what data() gives', async () => {
    const plain = { dtype: 'I32' as const, shape: [1], data: new Int32Array([9]) };
    const read = await readSafetensorsInputs(new Map([['p', plain]]));
    expect(read.get('p')).toBe(plain);
    await expect(readSafetensorsInputs({ q: gpuLike('int32', [2], new Float32Array(2)) })).rejects.toThrow(
      /tensor "q": data\(\) of a int32 tensor must give a Int32Array/,
    );
  });

  it('the synchronous encoder says what to use instead when dataSync fails', () => {
    expect(() => serializeSafetensors({ g: gpuLike('float32', [1], new Float32Array(1)) })).toThrow(
      /tensor "g": dataSync\(\) failed \(OffscreenCanvas is not defined\); .*use writeSafetensorsFile/,
    );
  });
});

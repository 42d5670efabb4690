// The writer takes tensor objects that read their own values (a tf.Tensor's shape: dtype, shape, dataSync),
// without checkpoints depending on tfjs.
import { describe, expect, it } from 'vitest';
import {
  readSafetensors,
  safetensorsValues,
  SafetensorsError,
  serializeSafetensors,
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

// Direct access to float32 tensor storage on the backends that keep it in memory JavaScript can address (cpu,
// wasm). The optimizer's one-pass update uses it: a loop over Float32Arrays reads and writes each element once,
// where the same update written as tf ops makes ≈ 15 passes and as many allocations. Other backends (webgpu,
// tensorflow) keep tensors where JavaScript cannot write them; there the callers use tf ops.
import * as tf from '@tensorflow/tfjs-core';

/** The two backend internals used here; both exist in tfjs 4.x (the engine itself calls `refCount`). */
interface WasmStorage {
  refCount(dataId: tf.DataId): number;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array;
}
interface CpuStorage {
  refCount(dataId: tf.DataId): number;
  data: { get(dataId: tf.DataId): { values?: unknown } | undefined };
}

type Storage = { refCount(dataId: tf.DataId): number; view(t: tf.TensorInfo): Float32Array | null };

function storageOf(): Storage | null {
  const name = tf.getBackend();
  const backend = tf.backend() as unknown;
  if (name === 'wasm') {
    const b = backend as WasmStorage;
    if (typeof b.typedArrayFromHeap !== 'function' || typeof b.refCount !== 'function') return null;
    return { refCount: (id) => b.refCount(id), view: (t) => b.typedArrayFromHeap(t) };
  }
  if (name === 'cpu') {
    const b = backend as CpuStorage;
    if (typeof b.refCount !== 'function' || typeof b.data?.get !== 'function') return null;
    return {
      refCount: (id) => b.refCount(id),
      view: (t) => {
        const values = b.data.get(t.dataId)?.values;
        return values instanceof Float32Array ? values : null;
      },
    };
  }
  return null;
}

/**
 * Float32Array views of the tensors' storage (each view aliases its tensor: writing it writes the tensor), or null
 * when the current backend keeps tensors out of JavaScript's reach or any tensor is not float32. On wasm a view is
 * valid until the next allocation (the heap may grow and move), so take the views right before the loop that uses
 * them and allocate nothing in between.
 */
export function float32Views(tensors: readonly tf.Tensor[]): Float32Array[] | null {
  const s = storageOf();
  if (s === null) return null;
  const out: Float32Array[] = [];
  for (const t of tensors) {
    if (t.dtype !== 'float32' || t.isDisposed) return null;
    const v = s.view(t);
    if (v === null || v.length !== t.size) return null;
    out.push(v);
  }
  return out;
}

/**
 * Make each variable the only owner of its storage, so that writing it in place changes no other tensor: a
 * variable assigned from a tensor (or another variable) shares that tensor's storage until it is given a copy.
 */
export function ownStorage(variables: readonly tf.Variable[]): void {
  const s = storageOf();
  if (s === null) return;
  for (const v of variables) {
    if (s.refCount(v.dataId) > 1) tf.tidy(() => v.assign(tf.mul(v, tf.scalar(1, 'float32')))); // x·1: a bit-exact copy
  }
}

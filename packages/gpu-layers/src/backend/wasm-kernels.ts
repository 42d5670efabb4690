// Kernels that training needs and @tensorflow/tfjs-backend-wasm 4.22 does not ship, registered for 'wasm'.
//
// Checked against the wasm kernel list: a training step of every model here needs only
// UnsortedSegmentSum (the gradient of tf.gather, used by the embedding lookup) beyond what wasm has.
// Erf, Exp, Softmax, Sigmoid, PadV2, Slice, Transpose, BatchMatMul, Sum, Mean, Max, Rsqrt, Select,
// TensorScatterUpdate and GatherV2 all exist in wasm; LayerNorm, GELU, matmul and the LM loss use
// hand-written gradients built from those (see ops.ts, loss.ts). Some stock kernels are replaced by faster ones
// of the same meaning (registerWasmKernelOverrides).
import * as tf from '@tensorflow/tfjs-core';
import { registerWasmFusedKernels } from './wasm-fused.js';

/**
 * out[s, …] = Σ_{n : ids[n] = s} x[n, …] for s < numSegments (ids outside [0, numSegments) are
 * dropped, as in TensorFlow). Written in place on the wasm heap: one zero fill of the output (the embedding's
 * [V, d] gradient: 31 MB at paper-6l) and one pass over x, with no JS-side copy of either.
 */
function unsortedSegmentSum(args: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const x = args.inputs['x'];
  const ids = args.inputs['segmentIds'];
  const numSegments = Number(args.attrs?.['numSegments']);
  if (x === undefined || ids === undefined) throw new Error('UnsortedSegmentSum: inputs x and segmentIds are required');
  if (x.dtype !== 'float32' && x.dtype !== 'int32') throw new Error(`UnsortedSegmentSum: x is ${x.dtype}`);
  const idCount = ids.shape.reduce((p, c) => p * c, 1);
  const inner = x.shape.slice(ids.shape.length).reduce((p, c) => p * c, 1);
  const out = backend.makeOutput([numSegments, ...x.shape.slice(ids.shape.length)], x.dtype);
  // views after makeOutput, whose malloc may have grown the heap
  const os = backend.typedArrayFromHeap(out) as Float32Array | Int32Array;
  const xs = backend.typedArrayFromHeap(x) as Float32Array | Int32Array;
  const is = backend.typedArrayFromHeap(ids) as Int32Array;
  os.fill(0);
  for (let n = 0; n < idCount; n++) {
    const s = is[n] as number;
    if (s < 0 || s >= numSegments) continue;
    const src = n * inner;
    const dst = s * inner;
    for (let k = 0; k < inner; k++) os[dst + k] = (os[dst + k] as number) + (xs[src + k] as number);
  }
  return out;
}

/** What is used here of tfjs-backend-wasm's BackendWasm. */
interface WasmHeapBackend {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  incRef(dataId: object): void;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
}

/** tfjs-backend-wasm's own kernels under the names replaced here (registerWasmKernelOverrides). */
const stock = new Map<string, tf.KernelConfig>();

/** The stock kernel `name` on args: for the inputs a replacement leaves to it (strings, batched gathers …). */
function stockKernel(name: string, args: { inputs: tf.NamedTensorInfoMap; backend: unknown }): tf.TensorInfo {
  return (stock.get(name) as tf.KernelConfig).kernelFunc(args as never) as tf.TensorInfo;
}

/**
 * y = x as a second reference to x's storage, as the cpu backend's Identity and every backend's Reshape do: a tensor's
 * data never changes once written. tfjs-backend-wasm 4.22 copies instead, and the engine calls Identity for every
 * tensor it saves for the backward pass (`clone`): ≈ 300 copies a training step, one thread, ≈ 10% of its wall time.
 */
function identityShared(args: { inputs: tf.NamedTensorInfoMap; backend: unknown }): tf.TensorInfo {
  const x = args.inputs['x'] as tf.TensorInfo;
  if (x.dtype === 'string') return stockKernel('Identity', args);
  (args.backend as WasmHeapBackend).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

/**
 * Cast to x's own dtype shares x's storage ({@link identityShared}: the gradient of every clone); to bool it is
 * x ≠ 0 (the stock kernel stores the number itself, so 2 became a bool of value 2); others convert as stock.
 */
function castShared(args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }): tf.TensorInfo {
  const x = args.inputs['x'] as tf.TensorInfo;
  const dtype = args.attrs?.['dtype'];
  if (x.dtype === dtype && x.dtype !== 'string') return identityShared(args);
  if (dtype === 'bool' && (x.dtype === 'float32' || x.dtype === 'int32')) {
    const backend = args.backend as WasmHeapBackend;
    const out = backend.makeOutput(x.shape, 'bool');
    const src = backend.typedArrayFromHeap(x); // after makeOutput, whose malloc may have grown the heap
    const dst = backend.typedArrayFromHeap(out);
    for (let i = 0; i < src.length; i++) dst[i] = src[i] !== 0 ? 1 : 0;
    return out;
  }
  return stockKernel('Cast', args);
}

/**
 * y = x[begin : begin + size] on views of the wasm heap: one copyWithin per contiguous run (the innermost axes that
 * the slice takes whole, and the part of the next one it takes). tfjs-backend-wasm 4.22's Slice first copies all of x
 * out of the heap (readSync), then copies the slice back: ≈ 8× slower on the mixer's [B, L, C] slices.
 */
function sliceOnHeap(args: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const x = args.inputs['x'] as tf.TensorInfo;
  if (x.dtype === 'string' || x.dtype === 'complex64') return stockKernel('Slice', args);
  const backend = args.backend as WasmHeapBackend;
  const [begin, size] = tf.slice_util.parseSliceParams(
    x,
    args.attrs?.['begin'] as number | number[],
    args.attrs?.['size'] as number | number[] | undefined,
  ) as [number[], number[]];
  const out = backend.makeOutput(size, x.dtype);
  const total = size.reduce((p, c) => p * c, 1);
  if (total === 0) return out;
  const bytes = x.dtype === 'bool' ? 1 : 4;
  const buffer = backend.wasm.HEAPU8.buffer; // after makeOutput, whose malloc may have grown the heap
  const heap = bytes === 1 ? new Uint8Array(buffer) : new Int32Array(buffer); // bit copies: the dtype does not matter
  const src = (backend.dataIdMap.get(x.dataId)?.memoryOffset as number) / bytes;
  const dst = (backend.dataIdMap.get(out.dataId)?.memoryOffset as number) / bytes;
  const rank = x.shape.length;
  const strides = new Array<number>(rank);
  for (let k = rank - 1, s = 1; k >= 0; k--) {
    strides[k] = s;
    s *= x.shape[k] as number;
  }
  // The run: axes from the innermost outward that are taken whole, then the first one that is not.
  let axis = rank - 1;
  let run = 1;
  while (axis >= 0 && size[axis] === x.shape[axis]) run *= size[axis--] as number;
  if (axis >= 0) run *= size[axis--] as number;
  let start = src;
  for (let k = 0; k < rank; k++) start += (begin[k] as number) * (strides[k] as number);
  const outer = axis + 1; // axes 0 … axis are walked one index at a time
  const index = new Array<number>(outer).fill(0);
  for (let o = dst; o < dst + total; o += run) {
    let from = start;
    for (let k = 0; k < outer; k++) from += (index[k] as number) * (strides[k] as number);
    heap.copyWithin(o, from, from + run);
    for (let k = outer - 1; k >= 0; k--) {
      index[k] = (index[k] as number) + 1;
      if ((index[k] as number) < (size[k] as number)) break;
      index[k] = 0;
    }
  }
  return out;
}

/**
 * y[o, k, s] = x[o, indices[k], s] (o over the axes before `axis`, s over those after) on views of the wasm heap: one
 * copyWithin per gathered run of the trailing axes, or one plain loop when the run is a single element. tfjs-backend-wasm
 * 4.22's GatherV2 checks each index through a closure and then runs a generic strided copy: the adaptive head's
 * [1, V] rank → id permutation cost ≈ 1 ms a token in `generate`. Batched gathers (batchDims > 0) keep the stock kernel.
 */
/** Index tensors (by dataId) checked to lie in [0, dim), and that dim: the adaptive head gathers by one every token. */
const checkedBelow = new WeakMap<object, number>();

function gatherOnHeap(args: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const x = args.inputs['x'] as tf.TensorInfo;
  const indices = args.inputs['indices'] as tf.TensorInfo;
  const batchDims = Number(args.attrs?.['batchDims'] ?? 0);
  if (batchDims !== 0 || x.dtype === 'string' || x.dtype === 'complex64') return stockKernel('GatherV2', args);
  const backend = args.backend as WasmHeapBackend;
  const axis = tf.util.parseAxisParam(args.attrs?.['axis'] as number, x.shape)[0] as number;
  const dim = x.shape[axis] as number;
  const outer = x.shape.slice(0, axis).reduce((p, c) => p * c, 1);
  const run = x.shape.slice(axis + 1).reduce((p, c) => p * c, 1);
  const shape = [...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)];
  const out = backend.makeOutput(shape, x.dtype);
  const n = indices.shape.reduce((p, c) => p * c, 1);
  if (n === 0 || outer === 0 || run === 0) return out;
  const bytes = x.dtype === 'bool' ? 1 : 4;
  const buffer = backend.wasm.HEAPU8.buffer; // after makeOutput, whose malloc may have grown the heap
  const heap = bytes === 1 ? new Uint8Array(buffer) : new Int32Array(buffer); // bit copies: the dtype does not matter
  const idx = new Int32Array(buffer, backend.dataIdMap.get(indices.dataId)?.memoryOffset, n);
  const checked = checkedBelow.get(indices.dataId); // every index of this tensor is below `checked`
  if (!(checked !== undefined && checked <= dim)) {
    for (let k = 0; k < n; k++) {
      const i = idx[k] as number;
      if (!(i >= 0 && i < dim)) {
        // the one gather a user's ids reach is the token table's: say what the index most likely is
        throw new RangeError(
          `GatherV2: the index value ${i} is not in [0, ${dim - 1}] (as a token id: outside a vocabulary of ${dim}; ` +
            'check ids where they enter with checkTokenIds)',
        );
      }
    }
    checkedBelow.set(indices.dataId, dim); // a tensor's data never changes: no second pass for a dim this large
  }
  const src = (backend.dataIdMap.get(x.dataId)?.memoryOffset as number) / bytes;
  let o = (backend.dataIdMap.get(out.dataId)?.memoryOffset as number) / bytes;
  for (let a = 0; a < outer; a++) {
    const base = src + a * dim * run;
    if (run === 1) {
      for (let k = 0; k < n; k++) heap[o + k] = heap[base + (idx[k] as number)] as number;
      o += n;
    } else {
      for (let k = 0; k < n; k++, o += run) {
        const from = base + (idx[k] as number) * run;
        heap.copyWithin(o, from, from + run);
      }
    }
  }
  return out;
}

/**
 * Replace tfjs-backend-wasm's Slice, GatherV2, Identity and Cast by {@link sliceOnHeap}, {@link gatherOnHeap},
 * {@link identityShared} and {@link castShared}: after the backend is initialised (its own kernels stay set up for the
 * string tensors they fall back to, and for the wasm kernels that call them directly). Idempotent.
 */
export function registerWasmKernelOverrides(): void {
  const ours: Readonly<Record<string, tf.KernelFunc>> = {
    Identity: identityShared,
    Cast: castShared,
    Slice: sliceOnHeap,
    GatherV2: gatherOnHeap,
  };
  for (const [kernelName, kernelFunc] of Object.entries(ours)) {
    const current = tf.getKernel(kernelName, 'wasm');
    if (current === undefined || current.kernelFunc === kernelFunc) continue;
    stock.set(kernelName, current);
    tf.unregisterKernel(kernelName, 'wasm');
    tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc });
  }
}

/** Register the kernels above for the 'wasm' backend (idempotent; safe before wasm is loaded). */
export function registerWasmTrainingKernels(): void {
  registerWasmFusedKernels();
  if (tf.getKernel('UnsortedSegmentSum', 'wasm') === undefined) {
    tf.registerKernel({ kernelName: 'UnsortedSegmentSum', backendName: 'wasm', kernelFunc: unsortedSegmentSum });
  }
}

registerWasmTrainingKernels();

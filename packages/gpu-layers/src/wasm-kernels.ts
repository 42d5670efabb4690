// Kernels that training needs and @tensorflow/tfjs-backend-wasm 4.22 does not ship, registered for 'wasm'.
//
// Checked against the wasm kernel list: a training step of every model here needs only
// UnsortedSegmentSum (the gradient of tf.gather, used by the embedding lookup) beyond what wasm has.
// Erf, Exp, Softmax, Sigmoid, PadV2, Slice, Transpose, BatchMatMul, Sum, Mean, Max, Rsqrt, Select,
// TensorScatterUpdate and GatherV2 all exist in wasm; LayerNorm, GELU, matmul and the LM loss use
// hand-written gradients built from those (see ops.ts, loss.ts).
import * as tf from '@tensorflow/tfjs-core';

/**
 * out[s, …] = Σ_{n : ids[n] = s} x[n, …] for s < numSegments (ids outside [0, numSegments) are
 * dropped, as in TensorFlow). A plain JS loop over the backend's buffers: O(size of x).
 */
function unsortedSegmentSum(args: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const backend = args.backend as tf.KernelBackend;
  const x = args.inputs['x'];
  const ids = args.inputs['segmentIds'];
  const numSegments = Number(args.attrs?.['numSegments']);
  if (x === undefined || ids === undefined) throw new Error('UnsortedSegmentSum: inputs x and segmentIds are required');
  const idCount = ids.shape.reduce((p, c) => p * c, 1);
  const inner = x.shape.slice(ids.shape.length).reduce((p, c) => p * c, 1);
  const xs = backend.readSync(x.dataId) as Float32Array | Int32Array;
  const is = backend.readSync(ids.dataId) as Int32Array;
  const out = x.dtype === 'int32' ? new Int32Array(numSegments * inner) : new Float32Array(numSegments * inner);
  for (let n = 0; n < idCount; n++) {
    const s = is[n] as number;
    if (s < 0 || s >= numSegments) continue;
    const src = n * inner;
    const dst = s * inner;
    for (let k = 0; k < inner; k++) out[dst + k] = (out[dst + k] as number) + (xs[src + k] as number);
  }
  const shape = [numSegments, ...x.shape.slice(ids.shape.length)];
  return { dataId: backend.write(out, shape, x.dtype), shape, dtype: x.dtype };
}

/** Register the kernels above for the 'wasm' backend (idempotent; safe before wasm is loaded). */
export function registerWasmTrainingKernels(): void {
  if (tf.getKernel('UnsortedSegmentSum', 'wasm') === undefined) {
    tf.registerKernel({ kernelName: 'UnsortedSegmentSum', backendName: 'wasm', kernelFunc: unsortedSegmentSum });
  }
}

registerWasmTrainingKernels();

// @grassflow/gpu-layers: causal Grassmann mixing, DPA/EA attention and language models on TensorFlow.js (Node entry;
// browsers get src/browser.ts, the "browser" export condition).
export * from './common.js';
export { initBackend, BACKEND_NAMES, BackendUnavailableError, wasmThreadsNote } from './backend.js';
export type { BackendName, BackendInfo, InitBackendOptions } from './backend.js';
export { blasInfo, useNativeProducts, BLAS_INSTALL, type BlasInfo } from './wasm-blas.js';
export { describeAdapter, DAWN_LIMIT_WARNING, probeWebgpuAdapter, type WebgpuAdapterInfo } from './webgpu-node.js';
export { webgpuAvailability, webgpuSuiteGate } from './webgpu-availability.js';
export type { WebgpuAvailability, WebgpuSuiteGate } from './webgpu-availability.js';
export * from './safetensors.js';
export * from './checkpoint.js';
export {
  saveWeights,
  loadWeights,
  assignWeights,
  namedWeights,
  safetensorsHandler,
  WeightsIOError,
  TFJS_SAFETENSORS_FORMAT,
  TFJS_SAFETENSORS_FILE,
} from './weights-io.js';
export type { WeightsSource, LoadedWeights } from './weights-io.js';

// @grassflow/gpu-layers: causal Grassmann mixing, DPA/EA attention and language models on TensorFlow.js (Node entry;
// browsers get src/browser.ts, the "browser" export condition).
export * from './portable-api.js';
export { initBackend, BACKEND_NAMES, BackendUnavailableError, wasmThreadsNote } from './backend/backend.js';
export type { BackendName, BackendInfo, InitBackendOptions } from './backend/backend.js';
export { blasInfo, useNativeProducts, BLAS_INSTALL, type BlasInfo } from './backend/wasm-blas.js';
export {
  nativeKernelsInfo,
  nativeVectorKernels,
  useNativeKernels,
  type AdamWConstants,
  type NativeKernelsInfo,
  type NativeVectorKernels,
} from './backend/wasm-native.js';
export {
  describeAdapter,
  DAWN_LIMIT_WARNING,
  probeWebgpuAdapter,
  type WebgpuAdapterInfo,
} from './backend/webgpu-node.js';
export { webgpuAvailability, webgpuSuiteGate } from './backend/webgpu-availability.js';
export type { WebgpuAvailability, WebgpuSuiteGate } from './backend/webgpu-availability.js';
export * from './io/checkpoint.js';
export {
  saveWeights,
  loadWeights,
  assignWeights,
  namedWeights,
  safetensorsHandler,
  WeightsIOError,
  TFJS_SAFETENSORS_FORMAT,
  TFJS_SAFETENSORS_FILE,
} from './io/weights-io.js';
export type { WeightsSource, LoadedWeights } from './io/weights-io.js';
export {
  savePretrained,
  loadPretrained,
  fromPretrained,
  isPretrainedFolder,
  PRETRAINED_FILES,
  PRETRAINED_FORMAT,
  PRETRAINED_FORMAT_VERSION,
} from './io/pretrained.js';
export type {
  PretrainedTokenizerFiles,
  SavePretrainedOptions,
  LoadedPretrained,
  LoadPretrainedOptions,
  FromPretrainedOptions,
} from './io/pretrained.js';
export {
  downloadPretrained,
  isPretrainedUrl,
  pretrainedCacheDir,
  type DownloadPretrainedOptions,
} from './io/pretrained-download.js';

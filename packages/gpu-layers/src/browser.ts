// @grassflow/gpu-layers in browsers (the package's "browser" export condition): everything of the Node entry that
// needs no file system or native module — layers, models, decoding and sampling, checkpoints from bytes — and a
// browser backend selection (webgpu → wasm with threads where cross-origin isolated → cpu). Checkpoint folders on
// disk, weight files, tfjs-node and Dawn are in the Node entry only.
export * from './portable-api.js';
export {
  initBackend,
  BROWSER_BACKEND_NAMES,
  type BrowserBackendInfo,
  type BrowserBackendName,
  type BrowserInitBackendOptions,
} from './backend/backend-browser.js';
export { BACKEND_NAMES, BackendUnavailableError, wasmThreadsNote } from './backend/backend-info.js';
export type { BackendName, BackendInfo } from './backend/backend-info.js';
export type { WebgpuAdapterInfo } from './backend/webgpu-node.js';
export type { CheckpointConfigFile, LoadCheckpointOptions } from './io/checkpoint.js';
export {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  CheckpointError,
  type CheckpointErrorCode,
  type CheckpointFileRecord,
  type CheckpointJson,
} from '@grassflow/checkpoints';
export { fromPretrained, type FetchPretrainedOptions } from './io/pretrained-fetch.js';

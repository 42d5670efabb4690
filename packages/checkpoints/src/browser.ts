// @grassflow/checkpoints in browsers (the package's "browser" export condition): safetensors bytes in and out,
// config.json, and checkpoints loaded from bytes (fetch, a file picker). The file-system parts (atomic writes,
// checkpoint folders on disk) need node:fs and are in the Node entry only.
export { CodedError } from './coded-error.js';
export * from './safetensors.js';
export {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  CheckpointError,
  checkPlainJson,
  formatCheckpointConfig,
  parseCheckpointConfig,
  type CheckpointConfigFile,
  type CheckpointErrorCode,
  type CheckpointFileRecord,
  type CheckpointJson,
  type ParseCheckpointConfigOptions,
} from './checkpoint-config.js';
export type { LoadCheckpointFolderOptions } from './checkpoint-folder.js';
export {
  loadCheckpointBytes,
  type CheckpointDType,
  type CheckpointTensor,
  type CheckpointBytes,
  type LoadCheckpointBytesOptions,
  webSha256Hex,
  type LoadedCheckpointBytes,
} from './checkpoint-bytes.js';
export {
  CHECKPOINT_CONFIG_MAX_BYTES,
  CHECKPOINT_MAX_TOTAL_BYTES,
  CHECKPOINT_SUBFOLDERS,
  checkpointBytesFromFiles,
  fetchCheckpointBytes,
  type CheckpointFileLike,
  type FetchCheckpointOptions,
} from './checkpoint-sources.js';
export {
  DOWNLOAD_DEADLINE_FLOOR_MS,
  DOWNLOAD_MIN_BYTES_PER_SECOND,
  downloadDeadlineMs,
  fetchBytes,
  type FetchLike,
  type FetchResponseLike,
  redactUrl,
  type FetchBytesOptions,
} from './bounded-fetch.js';

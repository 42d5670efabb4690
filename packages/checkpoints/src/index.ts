// @grassflow/checkpoints: crash-safe file writes, safetensors, and checkpoint folders (Node entry; no tfjs). Browsers
// get src/browser.ts (the "browser" export condition): everything here that needs no file system.
export {
  nodeFileSystem,
  temporarySibling,
  writeFileAtomic,
  writeFileAtomicSync,
  writeJsonAtomic,
  writeFileDurable,
  commitFileAtomic,
  type AtomicWriteData,
  type FileSystemOps,
  type WritableFileOps,
} from './atomic-write.js';
export { CodedError } from './coded-error.js';
export {
  DownloadError,
  downloadFile,
  sha256File,
  userCacheDir,
  type DownloadErrorCode,
  type DownloadOptions,
  type DownloadResult,
} from './download.js';
export {
  fileSystemProblem,
  folderPlaceProblem,
  makeFolder,
  makeFolderSync,
  type FolderPlaceProblem,
  type MakeFolderOptions,
} from './make-folder.js';
export * from './safetensors.js';
export {
  openSafetensorsFile,
  readSafetensorsFile,
  writeSafetensorsFile,
  type SafetensorsFileReader,
  type WriteSafetensorsOptions,
} from './safetensors-file.js';
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
export { locateCheckpoint, replaceDirectory } from './checkpoint-swap.js';
export {
  saveCheckpointFolder,
  loadCheckpointFolder,
  type SaveCheckpointFolderInput,
  type SavedCheckpointFolder,
  type LoadCheckpointFolderOptions,
  type LoadedCheckpointFolder,
} from './checkpoint-folder.js';
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
  type FetchLike,
  type FetchResponseLike,
} from './checkpoint-sources.js';
export {
  DOWNLOAD_DEADLINE_FLOOR_MS,
  DOWNLOAD_MIN_BYTES_PER_SECOND,
  downloadDeadlineMs,
  fetchBytes,
  redactUrl,
  type FetchBytesOptions,
} from './bounded-fetch.js';

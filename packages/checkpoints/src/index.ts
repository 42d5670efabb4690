// @grassflow/checkpoints: crash-safe file writes, safetensors, and checkpoint folders (Node entry; no tfjs). Browsers
// get src/browser.ts (the "browser" export condition): everything here that needs no file system.
export * from './browser.js';
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
  type ErrnoError,
  type FolderPlaceProblem,
  type MakeFolderOptions,
} from './make-folder.js';
export {
  openSafetensorsFile,
  readSafetensorsFile,
  writeSafetensorsFile,
  type SafetensorsFileReader,
  type WriteSafetensorsOptions,
} from './safetensors-file.js';
export { locateCheckpoint, replaceDirectory } from './checkpoint-swap.js';
export {
  saveCheckpointFolder,
  loadCheckpointFolder,
  type SaveCheckpointFolderInput,
  type SavedCheckpointFolder,
  type LoadedCheckpointFolder,
} from './checkpoint-folder.js';

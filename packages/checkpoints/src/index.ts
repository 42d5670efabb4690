// @grassflow/checkpoints: crash-safe file writes, safetensors, and checkpoint folders (node only, no tfjs).
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
export { locateCheckpoint, replaceDirectory } from './checkpoint-swap.js';
export {
  saveCheckpointFolder,
  loadCheckpointFolder,
  type CheckpointDType,
  type CheckpointTensor,
  type SaveCheckpointFolderInput,
  type SavedCheckpointFolder,
  type LoadCheckpointFolderOptions,
  type LoadedCheckpointFolder,
} from './checkpoint-folder.js';

// A language model from a checkpoint's bytes (browsers, workers, Node): config.json + model.safetensors
// (+ extra.safetensors) from fetch, a file picker or memory, with the checks of loadCheckpoint.
import { loadCheckpointBytes, type CheckpointBytes } from '@grassflow/checkpoints';
import { loadCheckpointModel } from './checkpoint-model.js';
import type { LoadCheckpointOptions, LoadedCheckpoint } from './checkpoint.js';
import type { ModelConfig } from '../config/model-config.js';

/** A checkpoint loaded from bytes. The caller disposes `model` and every tensor of `extraTensors`. */
export type LoadedCheckpointBytes = Omit<LoadedCheckpoint, 'dir' | 'recovered'> & {
  /** Where the bytes came from (CheckpointBytes.source), e.g. the URL of the folder. */
  readonly source: string;
};

/**
 * Loads a checkpoint from its files' bytes — e.g. `await fetchCheckpointBytes(url)` or
 * `await checkpointBytesFromFiles(input.files)` of @grassflow/checkpoints: validates config.json, builds the model it
 * describes, checks every tensor name, dtype and shape and the recorded sizes and SHA-256s, then assigns the weights.
 * Errors are `CheckpointError`s.
 */
export async function loadCheckpointFromBytes(
  files: CheckpointBytes,
  options: LoadCheckpointOptions = {},
): Promise<LoadedCheckpointBytes> {
  const verify = options.verifyChecksums ?? true;
  const { loaded: _, ...read } = await loadCheckpointModel(verify, (o) => loadCheckpointBytes<ModelConfig>(files, o), {
    trust: options.trust ?? false,
    where: files.source ?? 'checkpoint',
  });
  return { ...read, source: files.source ?? 'checkpoint' };
}

// Save and load a language model as a checkpoint folder: config.json + model.safetensors (+ extra.safetensors).
//
// Layout and guarantees are documented in the README section "Checkpoint format". The folder itself
// (file records, SHA-256s, crash-safe swap, recovery) is @grassflow/checkpoints' `saveCheckpointFolder`
// / `loadCheckpointFolder`; this file adds what is specific to a LanguageModel: tf tensors ↔ typed
// arrays, config.json's `model` validated as a ModelConfig, and the model built from it, whose
// tensor names and shapes the weights must match before any tensor data is read.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CheckpointError,
  loadCheckpointFolder,
  saveCheckpointFolder,
  type CheckpointConfigFile as CheckpointConfigFileOf,
  type CheckpointJson,
  type FileSystemOps,
  type SafetensorsDType,
  type SafetensorsTensorInput,
} from '@grassflow/checkpoints';
import { validateModelConfig, type ModelConfig } from '../config/model-config.js';
import { loadCheckpointModel } from './checkpoint-model.js';
import { localFolderOf, type DownloadPretrainedOptions } from './pretrained-download.js';
import type { LanguageModel } from '../language-model/language-model.js';
import type { GrassmannLM } from '../grassmann/lm.js';
import type { TransformerLM } from '../transformer/lm.js';

export {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  CheckpointError,
  type CheckpointErrorCode,
  type CheckpointFileRecord,
  type CheckpointJson,
} from '@grassflow/checkpoints';

/** The contents of config.json of a language-model checkpoint. */
export type CheckpointConfigFile = CheckpointConfigFileOf<ModelConfig>;

/** Options of `saveCheckpoint`. */
export interface SaveCheckpointOptions {
  /** JSON the caller wants kept in config.json (`step`, best validation loss, optimizer settings, …). */
  readonly extra?: { readonly [key: string]: CheckpointJson };
  /**
   * More tensors to keep (optimizer moments, …): float32, int32 or bool, stored in extra.safetensors
   * under these names. Not disposed; the caller owns them.
   */
  readonly extraTensors?: ReadonlyMap<string, tf.Tensor>;
  /** File-system operations (default: node:fs); tests substitute them to simulate crashes. */
  readonly fs?: FileSystemOps;
}

/** What `saveCheckpoint` wrote. */
export interface SavedCheckpoint {
  /** Absolute path of the checkpoint folder. */
  readonly dir: string;
  /** config.json as written. */
  readonly config: CheckpointConfigFile;
}

/** Options of `loadCheckpoint`. */
export interface LoadCheckpointOptions {
  /** Check the SHA-256 of each tensor file against config.json (default true; sizes are always checked). */
  readonly verifyChecksums?: boolean;
  /**
   * Load a checkpoint whose config.json records no size and SHA-256 for its tensor files (hand-written, or edited):
   * without it such a checkpoint is refused (`UNVERIFIED`), since nothing says its bytes are the ones written.
   */
  readonly trust?: boolean;
}

/** A loaded checkpoint. The caller disposes `model` and every tensor of `extraTensors`. */
export interface LoadedCheckpoint {
  /** The model config.json describes (as createModel builds it), so it can be given to createDecoder. */
  readonly model: GrassmannLM | TransformerLM;
  readonly config: ModelConfig;
  /** The `extra` JSON given to `saveCheckpoint` ({} if none). */
  readonly extra: { readonly [key: string]: CheckpointJson };
  /** The `extraTensors` given to `saveCheckpoint` (empty if none). */
  readonly extraTensors: Map<string, tf.Tensor>;
  /** The folder actually read: `<dir>.old-*` when a crashed save left `dir` missing (then `recovered`). */
  readonly dir: string;
  readonly recovered: boolean;
  readonly formatVersion: number;
  /** Tensor files config.json records no checksum for (hand-written or edited): loaded but not verified. */
  readonly unverified: readonly string[];
}

const TF_TO_SAFETENSORS: Partial<Record<tf.DataType, SafetensorsDType>> = {
  float32: 'F32',
  int32: 'I32',
  bool: 'BOOL',
};

/** Reads tensors to little-endian safetensors inputs (float32 → F32, int32 → I32, bool → BOOL). */
async function toInputs(
  tensors: Iterable<[string, tf.Tensor]>,
  what: string,
  allowed: readonly tf.DataType[],
): Promise<Map<string, SafetensorsTensorInput>> {
  const out = new Map<string, SafetensorsTensorInput>();
  for (const [name, t] of tensors) {
    const dtype = TF_TO_SAFETENSORS[t.dtype];
    if (dtype === undefined || !allowed.includes(t.dtype)) {
      throw new CheckpointError(
        'INVALID_ARGUMENT',
        `${what} '${name}' has dtype ${t.dtype}; checkpoints store ${allowed.join(', ')}`,
      );
    }
    const data = await t.data<'float32' | 'int32' | 'bool'>(); // Float32Array | Int32Array | Uint8Array
    out.set(name, { dtype, shape: t.shape, data });
  }
  return out;
}

/**
 * Saves `model` to the folder `dir` (config.json, model.safetensors and, with `extraTensors`,
 * extra.safetensors), replacing an earlier checkpoint there crash-safely: after a crash at any point,
 * `loadCheckpoint(dir)` returns the previous complete checkpoint or the new one, never a mix.
 * Refuses to replace a folder that is not a checkpoint or holds other files.
 */
export async function saveCheckpoint(
  dir: string,
  model: LanguageModel,
  options: SaveCheckpointOptions = {},
): Promise<SavedCheckpoint> {
  if (typeof (model as { stateDict?: unknown }).stateDict !== 'function') {
    const className = (model as { getClassName?: unknown } | null)?.getClassName;
    const what =
      typeof className === 'function'
        ? `a tfjs ${String(className.call(model))}`
        : typeof model === 'object' && model !== null
          ? 'an object without stateDict()'
          : `${String(model)}`;
    throw new CheckpointError(
      'INVALID_ARGUMENT',
      `saveCheckpoint saves this package's language models (createModel, GrassmannLM, TransformerLM), not ${what}: ` +
        'save any tfjs model with `await model.save(safetensorsHandler(dir))` (topology and weights, load with ' +
        '`tf.loadLayersModel(safetensorsHandler(dir))`) or its weights alone with `saveWeights(path, model)`',
    );
  }
  let modelConfig: ModelConfig;
  try {
    modelConfig = validateModelConfig(model.config);
  } catch (cause) {
    throw new CheckpointError('INVALID_ARGUMENT', `the model's config is invalid: ${(cause as Error).message}`, {
      cause,
    });
  }
  const stateDict = model.stateDict();
  let tensors: Map<string, SafetensorsTensorInput>;
  try {
    tensors = await toInputs(stateDict, 'model tensor', ['float32']);
  } finally {
    for (const t of stateDict.values()) t.dispose();
  }
  const extraTensors =
    options.extraTensors === undefined
      ? undefined
      : await toInputs(options.extraTensors, 'extra tensor', ['float32', 'int32', 'bool']);
  return saveCheckpointFolder<ModelConfig>(dir, {
    model: modelConfig,
    tensors,
    metadata: { 'grassflow.kind': modelConfig.kind },
    ...(extraTensors === undefined ? {} : { extraTensors }),
    ...(options.extra === undefined ? {} : { extra: options.extra }),
    ...(options.fs === undefined ? {} : { fs: options.fs }),
  });
}

/** Run folders keep their checkpoints here, the best first (what `grassflow-lm generate --checkpoint RUN` reads). */
const RUN_CHECKPOINTS = ['checkpoints/best', 'checkpoints/latest'] as const;

/**
 * The checkpoint folder of `dir`: `dir` itself, or, when its config.json is a run's (a JSON `format` other than the
 * checkpoint format) and it has checkpoints/best or checkpoints/latest, that subfolder. A run's checkpoints/ without
 * either is an error of its own; anything else is left to the loader, whose errors name the problem.
 */
function checkpointDirOf(dir: string): string {
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(join(dir, CHECKPOINT_FILES.config), 'utf8')) as { format?: unknown }).format;
  } catch {
    return dir;
  }
  if (typeof format !== 'string' || format === CHECKPOINT_FORMAT) return dir;
  for (const sub of RUN_CHECKPOINTS) if (existsSync(join(dir, sub))) return join(dir, sub);
  if (!existsSync(join(dir, 'checkpoints'))) return dir; // not a run folder: the loader reports the format
  throw new CheckpointError(
    'NOT_FOUND',
    `${dir} is a run folder (format "${format}") without checkpoints yet: train it longer, or pass a checkpoint folder`,
  );
}

/**
 * Loads a checkpoint from what `grassflow-lm generate --checkpoint` accepts: a checkpoint folder, a run folder (its
 * checkpoints/best, else checkpoints/latest), an export folder, or the http(s) URL of a served export folder
 * (downloaded once into the user cache, each file checked: see downloadPretrained; `dir` is then the cache folder).
 * It validates config.json, builds the model it describes, checks every tensor name, dtype and shape of
 * model.safetensors against it (first mismatch reported) and the recorded file sizes and SHA-256s, then assigns the
 * weights. Errors are `CheckpointError`s.
 */
export async function loadCheckpoint(
  dirOrUrl: string,
  options: LoadCheckpointOptions & DownloadPretrainedOptions = {},
): Promise<LoadedCheckpoint> {
  const dir = await localFolderOf(dirOrUrl, options);
  const verify = options.verifyChecksums ?? true;
  const { loaded, ...read } = await loadCheckpointModel(
    verify,
    (o) => loadCheckpointFolder<ModelConfig>(checkpointDirOf(dir), o),
    { trust: options.trust ?? false, where: dir },
  );
  return { ...read, dir: loaded.dir, recovered: loaded.recovered };
}

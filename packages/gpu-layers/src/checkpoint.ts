// Save and load a language model as a checkpoint folder: config.json + model.safetensors (+ extra.safetensors).
//
// Layout and guarantees are documented in the README section "Checkpoint format". In short: tensors
// are float32 little-endian safetensors under PyTorch names and [out, in] linear layouts; a save
// replaces the whole folder crash-safely (checkpoint-swap.ts); a load validates config.json, the
// file sizes and SHA-256s it records, and every tensor name, dtype and shape against the model the
// config builds before reading any tensor data.

import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { nodeFileSystem, writeFileDurable, type FileSystemOps } from './atomic-write.js';
import {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  CheckpointError,
  checkPlainJson,
  formatCheckpointConfig,
  parseCheckpointConfig,
  type CheckpointConfigFile,
  type CheckpointFileRecord,
  type CheckpointJson,
} from './checkpoint-config.js';
import { locateCheckpoint, replaceDirectory } from './checkpoint-swap.js';
import { validateModelConfig, type ModelConfig } from './config.js';
import { createModel } from './models/create-model.js';
import type { LanguageModel } from './models/language-model.js';
import { encodeSafetensors, safetensorsValues, type SafetensorsTensorInput } from './safetensors.js';
import { openSafetensorsFile, type SafetensorsFileReader } from './safetensors-file.js';
import { SafetensorsError, type SafetensorsDType } from './safetensors-header.js';

export {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  CheckpointError,
  type CheckpointConfigFile,
  type CheckpointErrorCode,
  type CheckpointFileRecord,
  type CheckpointJson,
} from './checkpoint-config.js';

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
}

/** A loaded checkpoint. The caller disposes `model` and every tensor of `extraTensors`. */
export interface LoadedCheckpoint {
  readonly model: LanguageModel;
  readonly config: ModelConfig;
  /** The `extra` JSON given to `saveCheckpoint` ({} if none). */
  readonly extra: { readonly [key: string]: CheckpointJson };
  /** The `extraTensors` given to `saveCheckpoint` (empty if none). */
  readonly extraTensors: Map<string, tf.Tensor>;
  /** The folder actually read: `<dir>.old-*` when a crashed save left `dir` missing (then `recovered`). */
  readonly dir: string;
  readonly recovered: boolean;
  readonly formatVersion: number;
}

const TF_TO_SAFETENSORS: Partial<Record<tf.DataType, SafetensorsDType>> = { float32: 'F32', int32: 'I32', bool: 'BOOL' };
const SAFETENSORS_TO_TF: Partial<Record<SafetensorsDType, tf.DataType>> = { F32: 'float32', I32: 'int32', BOOL: 'bool' };

/** Reads tensors to little-endian safetensors inputs (float32 → F32, int32 → I32, bool → BOOL). */
async function toInputs(tensors: Iterable<[string, tf.Tensor]>, what: string, allowed: readonly tf.DataType[]): Promise<Map<string, SafetensorsTensorInput>> {
  const out = new Map<string, SafetensorsTensorInput>();
  for (const [name, t] of tensors) {
    const dtype = TF_TO_SAFETENSORS[t.dtype];
    if (dtype === undefined || !allowed.includes(t.dtype)) {
      throw new CheckpointError('INVALID_ARGUMENT', `${what} '${name}' has dtype ${t.dtype}; checkpoints store ${allowed.join(', ')}`);
    }
    const data = (await t.data()) as Float32Array | Int32Array | Uint8Array;
    out.set(name, { dtype, shape: t.shape, data });
  }
  return out;
}

function record(chunks: readonly Uint8Array[], bytes: number): CheckpointFileRecord {
  const hash = createHash('sha256');
  for (const c of chunks) hash.update(c);
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Saves `model` to the folder `dir` (config.json, model.safetensors and, with `extraTensors`,
 * extra.safetensors), replacing an earlier checkpoint there crash-safely: after a crash at any point,
 * `loadCheckpoint(dir)` returns the previous complete checkpoint or the new one, never a mix.
 * Refuses to replace a folder that is not a checkpoint or holds other files.
 */
export async function saveCheckpoint(dir: string, model: LanguageModel, options: SaveCheckpointOptions = {}): Promise<SavedCheckpoint> {
  const target = resolve(dir);
  const fs = options.fs ?? nodeFileSystem;
  let modelConfig: ModelConfig;
  try {
    modelConfig = validateModelConfig(model.config);
  } catch (cause) {
    throw new CheckpointError('INVALID_ARGUMENT', `the model's config is invalid: ${(cause as Error).message}`, { cause });
  }
  if (options.extra !== undefined) {
    if (typeof options.extra !== 'object' || options.extra === null || Array.isArray(options.extra)) {
      throw new CheckpointError('INVALID_ARGUMENT', 'extra must be a plain JSON object, e.g. { step: 1000 }');
    }
    checkPlainJson(options.extra);
  }

  const stateDict = model.stateDict();
  let weights: Map<string, SafetensorsTensorInput>;
  try {
    weights = await toInputs(stateDict, 'model tensor', ['float32']);
  } finally {
    for (const t of stateDict.values()) t.dispose();
  }
  const metadata = {
    format: 'pt', // PyTorch layout: nn.Linear weights are [out, in]
    'grassflow.format': CHECKPOINT_FORMAT,
    'grassflow.formatVersion': String(CHECKPOINT_FORMAT_VERSION),
    'grassflow.kind': modelConfig.kind,
  };
  const modelFile = encodeSafetensors(weights, metadata);
  const files: Record<string, CheckpointFileRecord> = { [CHECKPOINT_FILES.model]: record(modelFile.chunks, modelFile.byteLength) };

  let extraFile: ReturnType<typeof encodeSafetensors> | undefined;
  if (options.extraTensors !== undefined && options.extraTensors.size > 0) {
    const inputs = await toInputs(options.extraTensors, 'extra tensor', ['float32', 'int32', 'bool']);
    extraFile = encodeSafetensors(inputs, { 'grassflow.format': CHECKPOINT_FORMAT });
    files[CHECKPOINT_FILES.extra] = record(extraFile.chunks, extraFile.byteLength);
  }

  const config: CheckpointConfigFile = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    model: modelConfig,
    files,
    ...(options.extra === undefined ? {} : { extra: options.extra }),
  };
  const configBytes = new TextEncoder().encode(formatCheckpointConfig(config));

  try {
    await replaceDirectory(target, fs, async (tmp) => {
      await writeFileDurable(join(tmp, CHECKPOINT_FILES.model), modelFile.chunks, fs);
      if (extraFile !== undefined) await writeFileDurable(join(tmp, CHECKPOINT_FILES.extra), extraFile.chunks, fs);
      await writeFileDurable(join(tmp, CHECKPOINT_FILES.config), [configBytes], fs);
    });
  } catch (cause) {
    if (cause instanceof CheckpointError) throw cause;
    throw new CheckpointError(
      'WRITE_FAILED',
      `saving the checkpoint to ${target} failed (${(cause as Error).message}); the previous checkpoint there, if any, is unchanged`,
      { cause },
    );
  }
  return { dir: target, config };
}

/** Opens one tensor file of the checkpoint, checking its size against config.json first. */
async function openTensorFile(dir: string, name: string, rec: CheckpointFileRecord | undefined): Promise<SafetensorsFileReader> {
  const path = join(dir, name);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (cause) {
    throw new CheckpointError(
      'MISSING_FILE',
      `${path} is missing: the checkpoint is incomplete (copied partially?); copy the whole folder again or re-save it`,
      { cause },
    );
  }
  if (rec !== undefined && size !== rec.bytes) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${path} has ${size} bytes but ${CHECKPOINT_FILES.config} records ${rec.bytes}: the file is truncated or was replaced; restore the folder from a backup or re-save it`,
    );
  }
  try {
    return await openSafetensorsFile(path);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new CheckpointError('CORRUPT_FILE', `${why}; restore the checkpoint from a backup or re-save it`, { cause });
  }
}

/** A tensor read back from a checkpoint file: values of F32, I32 or BOOL. */
interface StoredTensor {
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  readonly values: Float32Array | Int32Array | Uint8Array;
}

/** Reads every tensor of `reader` in file order, checking the SHA-256 of the whole file when asked. */
async function readAll(reader: SafetensorsFileReader, rec: CheckpointFileRecord | undefined, verify: boolean): Promise<Map<string, StoredTensor>> {
  const hash = verify && rec !== undefined ? createHash('sha256').update(reader.headerBytes) : undefined;
  const out = new Map<string, StoredTensor>();
  for (const info of reader.header.tensors) {
    const t = await reader.read(info.name);
    hash?.update(t.data);
    out.set(info.name, { dtype: t.dtype, shape: t.shape, values: safetensorsValues(t) as Float32Array | Int32Array | Uint8Array });
  }
  if (hash !== undefined && rec !== undefined && hash.digest('hex') !== rec.sha256) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${reader.path} does not match the SHA-256 recorded in ${CHECKPOINT_FILES.config}: its bytes changed after saving (disk error or a mixed copy); restore the folder from a backup or re-save it`,
    );
  }
  return out;
}

const shapeText = (s: readonly number[]): string => `[${s.join(', ')}]`;

/** Compares the header of model.safetensors with the model's own tensors; throws at the first mismatch. */
function checkTensors(reader: SafetensorsFileReader, model: LanguageModel, config: ModelConfig): void {
  const summary = `kind=${config.kind} vocabSize=${config.vocabSize} dModel=${config.dModel} nLayers=${config.nLayers} dFF=${config.dFF} maxLen=${config.maxLen} r=${config.r} nHeads=${config.nHeads} norm=${config.norm}`;
  const fix = `the weights do not belong to this config.json (${summary}); re-save the checkpoint or fix config.json`;
  const found = new Map(reader.header.tensors.map((t) => [t.name, t]));
  const expected = model.stateDict();
  try {
    for (const [name, t] of expected) {
      const got = found.get(name);
      if (got === undefined) {
        throw new CheckpointError('TENSOR_MISSING', `${reader.path} has no tensor '${name}' (expected float32 ${shapeText(t.shape)}): ${fix}`);
      }
      if (got.dtype !== 'F32') {
        throw new CheckpointError('TENSOR_DTYPE', `${reader.path}: tensor '${name}' is stored as ${got.dtype}, expected F32 (float32): re-save the weights as float32`);
      }
      if (got.shape.length !== t.shape.length || got.shape.some((s, k) => s !== t.shape[k])) {
        throw new CheckpointError(
          'TENSOR_SHAPE',
          `${reader.path}: tensor '${name}' has shape ${shapeText(got.shape)} but the model expects ${shapeText(t.shape)}: ${fix}`,
        );
      }
    }
    for (const t of reader.header.tensors) {
      if (!expected.has(t.name)) {
        throw new CheckpointError('TENSOR_UNEXPECTED', `${reader.path} holds tensor '${t.name}' ${t.dtype} ${shapeText(t.shape)} that the model does not have: ${fix}`);
      }
    }
  } finally {
    for (const t of expected.values()) t.dispose();
  }
}

/**
 * Loads the checkpoint folder `dir`: validates config.json, builds the model it describes, checks
 * every tensor name, dtype and shape of model.safetensors against it (first mismatch reported) and
 * the recorded file sizes and SHA-256s, then assigns the weights. Errors are `CheckpointError`s.
 */
export async function loadCheckpoint(dir: string, options: LoadCheckpointOptions = {}): Promise<LoadedCheckpoint> {
  const verify = options.verifyChecksums ?? true;
  const located = await locateCheckpoint(resolve(dir));
  const configPath = join(located.dir, CHECKPOINT_FILES.config);
  let text: string;
  try {
    if ((await stat(configPath)).size > 64 * 1024 * 1024) {
      throw new CheckpointError('INVALID_CONFIG', `${configPath} is larger than 64 MiB: it is not a checkpoint config; keep large data in extraTensors`);
    }
    text = await readFile(configPath, 'utf8');
  } catch (cause) {
    if (cause instanceof CheckpointError) throw cause;
    throw new CheckpointError(
      'MISSING_FILE',
      `${configPath} is missing: ${located.dir} is not a complete grassflow checkpoint; pass the folder saveCheckpoint() wrote`,
      { cause },
    );
  }
  const file = parseCheckpointConfig(text, configPath);
  const config = file.model;

  const modelRec = file.files?.[CHECKPOINT_FILES.model];
  const reader = await openTensorFile(located.dir, CHECKPOINT_FILES.model, modelRec);
  const model = createModel(config);
  const extraTensors = new Map<string, tf.Tensor>();
  try {
    checkTensors(reader, model, config);
    const weights = await readAll(reader, modelRec, verify);
    const dict = new Map<string, tf.Tensor>();
    try {
      for (const [name, w] of weights) dict.set(name, tf.tensor(w.values, [...w.shape], 'float32'));
      model.loadStateDict(dict);
    } finally {
      for (const t of dict.values()) t.dispose();
    }

    const extraRec = file.files?.[CHECKPOINT_FILES.extra];
    const extraPresent = extraRec !== undefined || (await stat(join(located.dir, CHECKPOINT_FILES.extra)).then(() => true, () => false));
    if (extraPresent) {
      const extraReader = await openTensorFile(located.dir, CHECKPOINT_FILES.extra, extraRec);
      try {
        for (const t of extraReader.header.tensors) {
          if (SAFETENSORS_TO_TF[t.dtype] === undefined) {
            throw new CheckpointError('TENSOR_DTYPE', `${extraReader.path}: tensor '${t.name}' is ${t.dtype}; extra tensors are F32, I32 or BOOL`);
          }
        }
        for (const [name, t] of await readAll(extraReader, extraRec, verify)) {
          extraTensors.set(name, tf.tensor(t.values, [...t.shape], SAFETENSORS_TO_TF[t.dtype]));
        }
      } finally {
        await extraReader.close();
      }
    }
  } catch (error) {
    model.dispose();
    for (const t of extraTensors.values()) t.dispose();
    if (error instanceof SafetensorsError) {
      throw new CheckpointError('CORRUPT_FILE', `${error.message}; restore the checkpoint from a backup or re-save it`, { cause: error });
    }
    throw error;
  } finally {
    await reader.close();
  }
  return {
    model,
    config,
    extra: file.extra ?? {},
    extraTensors,
    dir: located.dir,
    recovered: located.recovered,
    formatVersion: file.formatVersion,
  };
}

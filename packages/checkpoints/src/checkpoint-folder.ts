// Checkpoint folders, for any model: config.json + model.safetensors (+ extra.safetensors).
//
// config.json holds the format marker and version, the model's own config (opaque here: the model's
// package validates it), the byte size and SHA-256 of each tensor file, and the caller's `extra` JSON.
// A save replaces the whole folder crash-safely (checkpoint-swap.ts); a load validates config.json,
// the recorded sizes and SHA-256s and, when the caller says which tensors the model has, every
// tensor name, dtype and shape of model.safetensors before reading any tensor data.

import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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
  type CheckpointErrorCode,
  type CheckpointFileRecord,
  type CheckpointJson,
} from './checkpoint-config.js';
import { locateCheckpoint, replaceDirectory } from './checkpoint-swap.js';
import {
  checkExtraDtypes,
  EXTRA_DTYPES,
  loadedCheckpoint,
  type CheckpointDType,
  type CheckpointTensor,
  type LoadCheckpointBytesOptions,
  type LoadedCheckpointBytes,
} from './checkpoint-bytes.js';
import { checkFinite, checkModelTensors, checkParameterCount } from './checkpoint-tensors.js';
import {
  encodeSafetensors,
  readSafetensorsInputs,
  safetensorsInputEntries,
  safetensorsValues,
  type SafetensorsTensorInput,
  type SafetensorsTensorInputs,
} from './safetensors.js';
import { openSafetensorsFile, type SafetensorsFileReader } from './safetensors-file.js';
import { SafetensorsError, type SafetensorsDType } from './safetensors-header.js';

/** What `saveCheckpointFolder` writes. */
export interface SaveCheckpointFolderInput<M = CheckpointJson> {
  /** The model's config, kept as config.json's `model` (plain JSON; validated by the model's package). */
  readonly model: M;
  /** The model's parameters, all F32 (Float32Array data), stored in model.safetensors. */
  readonly tensors: SafetensorsTensorInputs;
  /** More `__metadata__` entries of model.safetensors (e.g. `{ 'grassflow.kind': 'grassmann' }`). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** More tensors to keep (optimizer moments, …): F32, I32 or BOOL, stored in extra.safetensors. */
  readonly extraTensors?: SafetensorsTensorInputs;
  /** JSON the caller wants kept in config.json (`step`, best validation loss, optimizer settings, …). */
  readonly extra?: { readonly [key: string]: CheckpointJson };
  /** File-system operations (default: node:fs); tests substitute them to simulate crashes. */
  readonly fs?: FileSystemOps;
}

/** What `saveCheckpointFolder` wrote. */
export interface SavedCheckpointFolder<M = CheckpointJson> {
  /** Absolute path of the checkpoint folder. */
  readonly dir: string;
  /** config.json as written. */
  readonly config: CheckpointConfigFile<M>;
}

/** Options of `loadCheckpointFolder`: those of `loadCheckpointBytes`. */
export type LoadCheckpointFolderOptions<M = CheckpointJson> = LoadCheckpointBytesOptions<M>;

/** A loaded checkpoint folder: what {@link loadCheckpointBytes} gives, and where it was read. */
export interface LoadedCheckpointFolder<M = CheckpointJson> extends LoadedCheckpointBytes<M> {
  /** The folder actually read: `<dir>.old-*` when a crashed save left `dir` missing (then `recovered`). */
  readonly dir: string;
  readonly recovered: boolean;
}

const MODEL_DTYPES: readonly SafetensorsDType[] = ['F32'];

function checkDTypes(tensors: SafetensorsTensorInputs, what: string, allowed: readonly SafetensorsDType[]): void {
  for (const [name, t] of safetensorsInputEntries(tensors)) {
    if (!allowed.includes(t.dtype)) {
      throw new CheckpointError(
        'INVALID_ARGUMENT',
        `${what} '${name}' has dtype ${t.dtype}; checkpoints store ${allowed.join(', ')}`,
      );
    }
  }
}

/** Size and SHA-256 of the bytes `chunks` (one file) will have. */
function record(chunks: readonly Uint8Array[], bytes: number): CheckpointFileRecord {
  const hash = createHash('sha256');
  for (const c of chunks) hash.update(c);
  return { bytes, sha256: hash.digest('hex') };
}

/** {@link readSafetensorsInputs}, its errors as CheckpointErrors. */
async function readInputs(tensors: SafetensorsTensorInputs): Promise<Map<string, SafetensorsTensorInput>> {
  try {
    return await readSafetensorsInputs(tensors);
  } catch (cause) {
    if (cause instanceof SafetensorsError) throw new CheckpointError('INVALID_ARGUMENT', cause.message, { cause });
    throw cause;
  }
}

function encode(
  tensors: SafetensorsTensorInputs,
  metadata: Readonly<Record<string, string>>,
): ReturnType<typeof encodeSafetensors> {
  try {
    return encodeSafetensors(tensors, metadata);
  } catch (cause) {
    if (cause instanceof SafetensorsError) throw new CheckpointError('INVALID_ARGUMENT', cause.message, { cause });
    throw cause;
  }
}

/**
 * Saves a checkpoint to the folder `dir` (config.json, model.safetensors and, with `extraTensors`,
 * extra.safetensors), replacing an earlier checkpoint there crash-safely: after a crash at any point,
 * `loadCheckpointFolder(dir)` returns the previous complete checkpoint or the new one, never a mix.
 * Refuses to replace a folder that is not a checkpoint or holds other files.
 */
export async function saveCheckpointFolder<M>(
  dir: string,
  input: SaveCheckpointFolderInput<M>,
): Promise<SavedCheckpointFolder<M>> {
  const target = resolve(dir);
  const fs = input.fs ?? nodeFileSystem;
  checkPlainJson(input.model, 'model');
  if (input.extra !== undefined) {
    if (typeof input.extra !== 'object' || input.extra === null || Array.isArray(input.extra)) {
      throw new CheckpointError('INVALID_ARGUMENT', 'extra must be a plain JSON object, e.g. { step: 1000 }');
    }
    checkPlainJson(input.extra);
  }
  // Tensor-likes (tf.Tensor) read once with await data(): tfjs webgpu under Node cannot read synchronously.
  const tensors = await readInputs(input.tensors);
  const extraTensors = input.extraTensors === undefined ? undefined : await readInputs(input.extraTensors);
  checkDTypes(tensors, 'model tensor', MODEL_DTYPES);
  const modelFile = encode(tensors, {
    ...input.metadata,
    format: 'pt', // PyTorch layout: nn.Linear weights are [out, in]
    'grassflow.format': CHECKPOINT_FORMAT,
    'grassflow.formatVersion': String(CHECKPOINT_FORMAT_VERSION),
  });
  const files: Record<string, CheckpointFileRecord> = {
    [CHECKPOINT_FILES.model]: record(modelFile.chunks, modelFile.byteLength),
  };

  let extraFile: ReturnType<typeof encodeSafetensors> | undefined;
  if (extraTensors !== undefined && extraTensors.size > 0) {
    checkDTypes(extraTensors, 'extra tensor', EXTRA_DTYPES);
    extraFile = encode(extraTensors, { 'grassflow.format': CHECKPOINT_FORMAT });
    files[CHECKPOINT_FILES.extra] = record(extraFile.chunks, extraFile.byteLength);
  }

  const config: CheckpointConfigFile<M> = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    model: input.model,
    files,
    ...(input.extra === undefined ? {} : { extra: input.extra }),
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
async function openTensorFile(
  dir: string,
  name: string,
  rec: CheckpointFileRecord | undefined,
): Promise<SafetensorsFileReader> {
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

/** Reads every tensor of `reader` in file order, checking the SHA-256 of the whole file when asked. */
async function readAll(
  reader: SafetensorsFileReader,
  rec: CheckpointFileRecord | undefined,
  verify: boolean,
): Promise<Map<string, CheckpointTensor>> {
  const hash = verify && rec !== undefined ? createHash('sha256').update(reader.headerBytes) : undefined;
  const out = new Map<string, CheckpointTensor>();
  for (const info of reader.header.tensors) {
    const t = await reader.read(info.name);
    hash?.update(t.data);
    const data = safetensorsValues(t) as Float32Array | Int32Array | Uint8Array;
    out.set(info.name, { dtype: t.dtype as CheckpointDType, shape: t.shape, data });
  }
  if (hash !== undefined && rec !== undefined && hash.digest('hex') !== rec.sha256) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${reader.path} does not match the SHA-256 recorded in ${CHECKPOINT_FILES.config}: its bytes changed after saving (disk error or a mixed copy); restore the folder from a backup or re-save it`,
    );
  }
  for (const [name, t] of out) checkFinite(reader.path, name, t.data); // after the checksum: a corrupt file says so
  return out;
}

/** Reads config.json of the folder `dir` (at most 64 MiB). */
async function readConfigText(dir: string): Promise<{ path: string; text: string }> {
  const path = join(dir, CHECKPOINT_FILES.config);
  try {
    if ((await stat(path)).size > 64 * 1024 * 1024) {
      throw new CheckpointError(
        'INVALID_CONFIG',
        `${path} is larger than 64 MiB: it is not a checkpoint config; keep large data in extraTensors`,
      );
    }
    return { path, text: await readFile(path, 'utf8') };
  } catch (cause) {
    if (cause instanceof CheckpointError) throw cause;
    throw new CheckpointError(
      'MISSING_FILE',
      `${path} is missing: ${dir} is not a complete grassflow checkpoint; pass a checkpoint folder (a run's checkpoints/best or checkpoints/latest, or the folder saveCheckpoint() wrote)`,
      { cause },
    );
  }
}

/** Errors a reader meets when a writer swaps the folder between its reads of config.json and the tensor files. */
const SWAP_SYMPTOMS: ReadonlySet<CheckpointErrorCode> = new Set(['CORRUPT_FILE', 'MISSING_FILE', 'NOT_FOUND']);
/** Reads after the first when a swap is detected: saves take far longer than a read, so a few always suffice. */
const SWAP_RETRIES = 10;

/** What changes when a save swaps `dir`: the folder's inode (the swap renames a new folder into place) and its config. */
async function folderIdentity(dir: string): Promise<string> {
  const st = await stat(dir).catch(() => null);
  const config = await stat(join(dir, CHECKPOINT_FILES.config)).catch(() => null);
  return `${st?.ino ?? 'none'}:${config?.ino ?? 'none'}:${config?.mtimeMs ?? 'none'}`;
}

/**
 * Loads the checkpoint folder `dir` (or, after a save that crashed mid-swap, the complete previous
 * checkpoint it left at `<dir>.old-*`): validates config.json (`parseModel` checks its `model`), the
 * recorded file sizes and SHA-256s, and, with `expectedTensors`, every tensor name, dtype and shape
 * of model.safetensors before reading tensor data. Every failure is a `CheckpointError`.
 * A reader never needs a lock: when a save swapped the folder while it read (its files then disagree with the
 * config.json it read first), it reads again, so it always returns one whole save; an error whose folder did not
 * change meanwhile is real damage and is thrown at once.
 */
export async function loadCheckpointFolder<M = CheckpointJson>(
  dir: string,
  options: LoadCheckpointFolderOptions<M> = {},
): Promise<LoadedCheckpointFolder<M>> {
  const target = resolve(dir);
  for (let attempt = 0; ; attempt++) {
    const before = await folderIdentity(target);
    try {
      return await loadCheckpointFolderOnce(dir, options);
    } catch (error) {
      const retry =
        attempt < SWAP_RETRIES &&
        error instanceof CheckpointError &&
        SWAP_SYMPTOMS.has(error.code) &&
        (await folderIdentity(target)) !== before;
      if (!retry) throw error;
      await new Promise((done) => setTimeout(done, 10 * (attempt + 1)));
    }
  }
}

async function loadCheckpointFolderOnce<M>(
  dir: string,
  options: LoadCheckpointFolderOptions<M>,
): Promise<LoadedCheckpointFolder<M>> {
  const verify = options.verifyChecksums ?? true;
  const located = await locateCheckpoint(resolve(dir));
  const { path: configPath, text } = await readConfigText(located.dir);
  const file = parseCheckpointConfig<M>(text, configPath, {
    ...(options.parseModel === undefined ? {} : { parseModel: options.parseModel }),
    ...(options.reader === undefined ? {} : { reader: options.reader }),
  });

  const modelRec = file.files?.[CHECKPOINT_FILES.model];
  const reader = await openTensorFile(located.dir, CHECKPOINT_FILES.model, modelRec);
  try {
    const summary = options.describeModel?.(file.model) ?? JSON.stringify(file.model);
    if (options.parameterCount !== undefined) {
      checkParameterCount(reader.path, reader.header.tensors, options.parameterCount(file.model), summary);
    }
    if (options.expectedTensors !== undefined) {
      checkModelTensors(reader.path, reader.header.tensors, options.expectedTensors(file.model), summary);
    }
    const tensors = await readAll(reader, modelRec, verify);

    let extraTensors = new Map<string, CheckpointTensor>();
    const extraRec = file.files?.[CHECKPOINT_FILES.extra];
    const extraPresent =
      extraRec !== undefined ||
      (await stat(join(located.dir, CHECKPOINT_FILES.extra)).then(
        () => true,
        () => false,
      ));
    if (extraPresent) {
      const extraReader = await openTensorFile(located.dir, CHECKPOINT_FILES.extra, extraRec);
      try {
        checkExtraDtypes(extraReader.header.tensors, extraReader.path);
        extraTensors = await readAll(extraReader, extraRec, verify);
      } finally {
        await extraReader.close();
      }
    }
    const loaded = loadedCheckpoint(file, tensors, extraTensors, extraPresent);
    return { ...loaded, dir: located.dir, recovered: located.recovered };
  } catch (error) {
    if (error instanceof SafetensorsError) {
      throw new CheckpointError(
        'CORRUPT_FILE',
        `${error.message}; restore the checkpoint from a backup or re-save it`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await reader.close();
  }
}

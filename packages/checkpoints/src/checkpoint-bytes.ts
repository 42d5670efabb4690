// Checkpoints from bytes, in any JavaScript runtime (browsers, workers, Node): config.json and the tensor files as
// bytes — from fetch, a file picker or anything else — with the checks of loadCheckpointFolder (config.json, the
// recorded sizes and SHA-256s by Web Crypto, every tensor name, dtype and shape before tensor data is read).

import {
  CHECKPOINT_FILES,
  CheckpointError,
  parseCheckpointConfig,
  type CheckpointConfigFile,
  type CheckpointFileRecord,
  type CheckpointJson,
} from './checkpoint-config.js';
import { checkFinite, checkModelTensors, checkParameterCount } from './checkpoint-tensors.js';
import { readSafetensors, readSafetensorsHeader, safetensorsValues } from './safetensors.js';
import { SafetensorsError, type SafetensorsDType } from './safetensors-header.js';

/** A checkpoint's files as bytes. */
export interface CheckpointBytes {
  /** config.json, as text or UTF-8 bytes. */
  readonly config: string | Uint8Array;
  /** model.safetensors. */
  readonly model: Uint8Array;
  /** extra.safetensors, when the checkpoint has one. */
  readonly extra?: Uint8Array;
  /** Where the files came from (a URL or a folder name), named in error messages; default 'checkpoint'. */
  readonly source?: string;
}

/** The dtypes a checkpoint stores: model tensors are F32; extra tensors F32, I32 or BOOL. */
export type CheckpointDType = 'F32' | 'I32' | 'BOOL';

/** A tensor read back from a checkpoint: its values as a typed array of its dtype (BOOL as 0/1 bytes). */
export interface CheckpointTensor {
  readonly dtype: CheckpointDType;
  readonly shape: readonly number[];
  readonly data: Float32Array | Int32Array | Uint8Array;
}

/** Options of `loadCheckpointBytes` and `loadCheckpointFolder`. */
export interface LoadCheckpointBytesOptions<M = CheckpointJson> {
  /** Check the SHA-256 of each tensor file against config.json (default true; sizes are always checked). */
  readonly verifyChecksums?: boolean;
  /** Validates config.json's `model` and returns it typed; its error is reported as `INVALID_CONFIG`. */
  readonly parseModel?: (value: unknown) => M;
  /**
   * The tensors the model described by config.json has (name → shape, all F32). When given, the
   * header of model.safetensors must match exactly (first mismatch reported: `TENSOR_MISSING`,
   * `TENSOR_DTYPE`, `TENSOR_SHAPE`, `TENSOR_UNEXPECTED`) before any tensor byte is read.
   */
  readonly expectedTensors?: (model: M) => ReadonlyMap<string, readonly number[]>;
  /**
   * The parameter count the model described by config.json has, computed without building it: model.safetensors'
   * header must hold at least that many values, checked before `expectedTensors` (which may build the model), so
   * that no config.json makes the loader allocate more than the weights it came with.
   */
  readonly parameterCount?: (model: M) => number;
  /** The model config as named in mismatch messages (default: its JSON). */
  readonly describeModel?: (model: M) => string;
  /** The package named in the `UNSUPPORTED_VERSION` message (default '@grassflow/checkpoints'). */
  readonly reader?: string;
}

/** A checkpoint read from bytes. */
export interface LoadedCheckpointBytes<M = CheckpointJson> {
  /** config.json's `model`, as `parseModel` returned it. */
  readonly model: M;
  /** The tensors of model.safetensors, in file order. */
  readonly tensors: Map<string, CheckpointTensor>;
  /** The tensors of extra.safetensors (empty if none). */
  readonly extraTensors: Map<string, CheckpointTensor>;
  /** The `extra` JSON given at save time ({} if none). */
  readonly extra: { readonly [key: string]: CheckpointJson };
  readonly formatVersion: number;
  /** config.json as read. */
  readonly config: CheckpointConfigFile<M>;
  /**
   * Tensor files that config.json records no size and SHA-256 for (a hand-written checkpoint, e.g. exported from
   * PyTorch, or an edited config.json): loaded, but not verified. Empty for every checkpoint grassflow saves; a
   * caller that shows the user anything should say so when it is not.
   */
  readonly unverified: readonly string[];
}

/** The dtypes extra.safetensors may hold (model.safetensors: F32 only). */
export const EXTRA_DTYPES: readonly SafetensorsDType[] = ['F32', 'I32', 'BOOL'];

/** Refuse an extra.safetensors (at `where`) with a tensor of a dtype outside EXTRA_DTYPES. */
export function checkExtraDtypes(tensors: Iterable<{ name: string; dtype: SafetensorsDType }>, where: string): void {
  for (const t of tensors) {
    if (!EXTRA_DTYPES.includes(t.dtype)) {
      throw new CheckpointError(
        'TENSOR_DTYPE',
        `${where}: tensor '${t.name}' is ${t.dtype}; extra tensors are F32, I32 or BOOL`,
      );
    }
  }
}

/**
 * What a load returns, wherever the files were read: config.json's parts, the tensors, and the tensor files it
 * records no size and SHA-256 for (`extraRead`: an extra.safetensors was read).
 */
export function loadedCheckpoint<M>(
  file: CheckpointConfigFile<M>,
  tensors: Map<string, CheckpointTensor>,
  extraTensors: Map<string, CheckpointTensor>,
  extraRead: boolean,
): LoadedCheckpointBytes<M> {
  const unverifiedModel = file.files?.[CHECKPOINT_FILES.model] === undefined;
  const unverifiedExtra = extraRead && file.files?.[CHECKPOINT_FILES.extra] === undefined;
  return {
    model: file.model,
    tensors,
    extraTensors,
    extra: file.extra ?? {},
    formatVersion: file.formatVersion,
    config: file,
    unverified: [
      ...(unverifiedModel ? [CHECKPOINT_FILES.model] : []),
      ...(unverifiedExtra ? [CHECKPOINT_FILES.extra] : []),
    ],
  };
}

/** What this file needs of Web Crypto's SubtleCrypto (lib ES2022 has no DOM types). */
interface WebCryptoDigest {
  digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>;
}

/**
 * SHA-256 of `bytes` as lower-case hex, by Web Crypto (browsers in a secure context, workers, Node ≥ 19); where it is
 * missing, a CheckpointError naming `where` and ending with `advice`.
 */
export async function webSha256Hex(
  bytes: Uint8Array,
  where: string,
  advice = 'serve the page from one, or pass verifyChecksums: false',
): Promise<string> {
  const subtle = (globalThis as { crypto?: { subtle?: WebCryptoDigest } }).crypto?.subtle;
  if (subtle === undefined) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${where}: Web Crypto (crypto.subtle) is not available to check its SHA-256 — browsers offer it only in a ` +
        `secure context (https:// or http://localhost / 127.0.0.1); ${advice}`,
    );
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Checks one tensor file's size and (when asked) SHA-256 against its record in config.json. */
async function checkRecord(
  bytes: Uint8Array,
  rec: CheckpointFileRecord | undefined,
  where: string,
  verify: boolean,
): Promise<void> {
  if (rec === undefined) return;
  if (bytes.byteLength !== rec.bytes) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${where} has ${bytes.byteLength} bytes but ${CHECKPOINT_FILES.config} records ${rec.bytes}: the file is truncated or was replaced (a partial download or copy?); fetch or copy the whole folder again`,
    );
  }
  if (verify && (await webSha256Hex(bytes, where)) !== rec.sha256) {
    throw new CheckpointError(
      'CORRUPT_FILE',
      `${where} does not match the SHA-256 recorded in ${CHECKPOINT_FILES.config}: its bytes changed after saving (a mixed copy of two saves?); fetch or copy the whole folder again`,
    );
  }
}

/** The tensors of a safetensors buffer as checkpoint tensors, in file order. */
function tensorsOf(bytes: Uint8Array, where: string): Map<string, CheckpointTensor> {
  const out = new Map<string, CheckpointTensor>();
  for (const [name, t] of readSafetensors(bytes).tensors) {
    const data = safetensorsValues(t) as Float32Array | Int32Array | Uint8Array;
    checkFinite(where, name, data);
    out.set(name, { dtype: t.dtype as CheckpointDType, shape: t.shape, data });
  }
  return out;
}

/**
 * Reads a checkpoint from its files' bytes (as `saveCheckpointFolder` wrote them): validates config.json
 * (`parseModel` checks its `model`), the recorded sizes and SHA-256s, and, with `expectedTensors`, every tensor
 * name, dtype and shape of model.safetensors before reading tensor data. Every failure is a `CheckpointError`.
 * Tensor data of F32 tensors may share memory with `files.model` (no copy where it is aligned).
 */
export async function loadCheckpointBytes<M = CheckpointJson>(
  files: CheckpointBytes,
  options: LoadCheckpointBytesOptions<M> = {},
): Promise<LoadedCheckpointBytes<M>> {
  const verify = options.verifyChecksums ?? true;
  const source = files.source ?? 'checkpoint';
  const text = typeof files.config === 'string' ? files.config : new TextDecoder().decode(files.config);
  const file = parseCheckpointConfig<M>(text, `${source}/${CHECKPOINT_FILES.config}`, {
    ...(options.parseModel === undefined ? {} : { parseModel: options.parseModel }),
    ...(options.reader === undefined ? {} : { reader: options.reader }),
  });
  const modelWhere = `${source}/${CHECKPOINT_FILES.model}`;
  const extraWhere = `${source}/${CHECKPOINT_FILES.extra}`;
  try {
    const modelRec = file.files?.[CHECKPOINT_FILES.model];
    await checkRecord(files.model, modelRec, modelWhere, verify);
    const header = readSafetensorsHeader(files.model);
    const summary = options.describeModel?.(file.model) ?? JSON.stringify(file.model);
    if (options.parameterCount !== undefined) {
      checkParameterCount(modelWhere, header.tensors, options.parameterCount(file.model), summary);
    }
    if (options.expectedTensors !== undefined) {
      checkModelTensors(modelWhere, header.tensors, options.expectedTensors(file.model), summary);
    }
    const tensors = tensorsOf(files.model, modelWhere);

    const extraRec = file.files?.[CHECKPOINT_FILES.extra];
    let extraTensors = new Map<string, CheckpointTensor>();
    if (extraRec !== undefined && files.extra === undefined) {
      throw new CheckpointError(
        'MISSING_FILE',
        `${extraWhere} is missing: ${CHECKPOINT_FILES.config} records it; give all files of the checkpoint folder`,
      );
    }
    if (files.extra !== undefined) {
      await checkRecord(files.extra, extraRec, extraWhere, verify);
      checkExtraDtypes(readSafetensorsHeader(files.extra).tensors, extraWhere);
      extraTensors = tensorsOf(files.extra, extraWhere);
    }
    return loadedCheckpoint(file, tensors, extraTensors, files.extra !== undefined);
  } catch (error) {
    if (error instanceof SafetensorsError) {
      throw new CheckpointError('CORRUPT_FILE', `${source}: ${error.message}; fetch or copy the folder again`, {
        cause: error,
      });
    }
    throw error;
  }
}

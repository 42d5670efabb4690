// config.json of a checkpoint folder: format marker, model config, file records, caller's extra JSON.
//
// The model config is opaque here: the package that builds the model validates it (`parseModel`).

import { parseStrictJson, StrictJsonError } from './safetensors-json.js';
import { CodedError } from './coded-error.js';

/** Value of config.json's `format` field. */
export const CHECKPOINT_FORMAT = 'grassflow-checkpoint';
/** The checkpoint layout version written and read. */
export const CHECKPOINT_FORMAT_VERSION = 1;
/** File names inside a checkpoint folder. */
export const CHECKPOINT_FILES = {
  config: 'config.json',
  model: 'model.safetensors',
  extra: 'extra.safetensors',
} as const;

/** A JSON value as the caller hands it to `saveCheckpoint` in `extra`. */
export type CheckpointJson = null | boolean | number | string | CheckpointJson[] | { [key: string]: CheckpointJson };

/** Size and SHA-256 of one file of the checkpoint, recorded at save time. */
export interface CheckpointFileRecord {
  readonly bytes: number;
  readonly sha256: string;
}

/** The contents of config.json; `M` is the model's config (a gpu-layers `ModelConfig`, a head's settings, …). */
export interface CheckpointConfigFile<M = CheckpointJson> {
  readonly format: typeof CHECKPOINT_FORMAT;
  readonly formatVersion: number;
  readonly model: M;
  /** Byte size and SHA-256 of each tensor file; absent in hand-written checkpoints. */
  readonly files?: Readonly<Record<string, CheckpointFileRecord>>;
  /** Caller's JSON (step, best validation loss, …), kept verbatim. */
  readonly extra?: { readonly [key: string]: CheckpointJson };
}

/** Why a checkpoint could not be saved or loaded. */
export type CheckpointErrorCode =
  | 'NOT_FOUND'
  | 'NOT_A_DIRECTORY'
  | 'MISSING_FILE'
  | 'INVALID_CONFIG'
  | 'UNSUPPORTED_VERSION'
  | 'CORRUPT_FILE'
  | 'TENSOR_MISSING'
  | 'TENSOR_UNEXPECTED'
  | 'TENSOR_DTYPE'
  | 'TENSOR_SHAPE'
  | 'INVALID_ARGUMENT'
  | 'TARGET_NOT_CHECKPOINT'
  | 'WRITE_FAILED'
  | 'NON_FINITE'
  | 'UNVERIFIED'; // config.json records no size and SHA-256 of a tensor file, and the caller did not trust it

/** Every failure of saving or loading a checkpoint folder: `code` says what, the message what to do. */
export class CheckpointError extends CodedError<CheckpointErrorCode> {
  override readonly name = 'CheckpointError';
}

/**
 * Checks that `value` is plain JSON (objects, arrays, strings, finite numbers, booleans, null; no
 * cycles, no class instances, no undefined) so that it survives JSON.stringify → JSON.parse unchanged.
 */
export function checkPlainJson(value: unknown, path = 'extra', seen = new Set<object>()): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new CheckpointError(
        'INVALID_ARGUMENT',
        `${path} is ${value}; JSON has no NaN or Infinity, store it as a string or null`,
      );
    return;
  }
  if (typeof value !== 'object') {
    throw new CheckpointError(
      'INVALID_ARGUMENT',
      `${path} is a ${typeof value}; extra must be plain JSON (store tensors in extraTensors)`,
    );
  }
  if (seen.has(value))
    throw new CheckpointError('INVALID_ARGUMENT', `${path} refers back to itself; extra must be a tree of plain JSON`);
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkPlainJson(v, `${path}[${i}]`, seen));
  } else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new CheckpointError(
        'INVALID_ARGUMENT',
        `${path} is a ${kind}; extra must be plain JSON (store tensors in extraTensors)`,
      );
    }
    for (const [k, v] of Object.entries(value)) checkPlainJson(v, `${path}.${k}`, seen);
  }
  seen.delete(value);
}

/** config.json text: fields in the order given (model config fields in their canonical order), two-space indented. */
export function formatCheckpointConfig<M>(config: CheckpointConfigFile<M>): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** How `parseCheckpointConfig` checks the parts that belong to the model's package. */
export interface ParseCheckpointConfigOptions<M> {
  /**
   * Validates config.json's `model` value and returns it typed (e.g. `validateModelConfig`); its error
   * message is quoted in the `INVALID_CONFIG` error. Default: any JSON value is accepted.
   */
  readonly parseModel?: (value: unknown) => M;
  /** The package named in the `UNSUPPORTED_VERSION` message ("upgrade <reader> to load it"). */
  readonly reader?: string;
}

/**
 * Parses and validates config.json text (`where` names the file in messages): JSON without duplicate
 * keys, `format` = "grassflow-checkpoint", `formatVersion` ≤ `CHECKPOINT_FORMAT_VERSION`, a valid `model`.
 */
export function parseCheckpointConfig<M = CheckpointJson>(
  text: string,
  where: string,
  options: ParseCheckpointConfigOptions<M> = {},
): CheckpointConfigFile<M> {
  const reader = options.reader ?? '@grassflow/checkpoints';
  const fix = 'restore it from a backup, or use another checkpoint of the run (checkpoints/best or checkpoints/latest)';
  try {
    parseStrictJson(text, 64);
  } catch (cause) {
    const why = cause instanceof StrictJsonError ? cause.message : String(cause);
    throw new CheckpointError('INVALID_CONFIG', `${where} is not valid JSON (${why}): ${fix}`, { cause });
  }
  const raw = JSON.parse(text) as unknown;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} must hold a JSON object, found ${Array.isArray(raw) ? 'an array' : JSON.stringify(raw)}: ${fix}`,
    );
  }
  const o = raw as Record<string, unknown>;
  if (o['format'] !== CHECKPOINT_FORMAT) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} has format ${JSON.stringify(o['format'])}, expected "${CHECKPOINT_FORMAT}": this folder is not a grassflow checkpoint (pass a checkpoint folder (a run's checkpoints/best or checkpoints/latest, or the folder saveCheckpoint() wrote))`,
    );
  }
  const version = o['formatVersion'];
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} has formatVersion ${JSON.stringify(version)}; it must be a positive integer: ${fix}`,
    );
  }
  if (version > CHECKPOINT_FORMAT_VERSION) {
    throw new CheckpointError(
      'UNSUPPORTED_VERSION',
      `${where} has formatVersion ${version}, but this ${reader} reads version ${CHECKPOINT_FORMAT_VERSION}: upgrade ${reader} to load it`,
    );
  }
  let model: M;
  try {
    model = options.parseModel === undefined ? parseAnyJson<M>(o['model']) : options.parseModel(o['model']);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} "model" is not a valid model config (${why}): fix that field or re-save the checkpoint`,
      { cause },
    );
  }
  const files = parseFileRecords(o['files'], where);
  const extra = o['extra'];
  if (extra !== undefined && (typeof extra !== 'object' || extra === null || Array.isArray(extra))) {
    throw new CheckpointError('INVALID_CONFIG', `${where} "extra" must be a JSON object when present: ${fix}`);
  }
  return {
    format: CHECKPOINT_FORMAT,
    formatVersion: version,
    model,
    ...(files === undefined ? {} : { files }),
    ...(extra === undefined ? {} : { extra: extra as { [key: string]: CheckpointJson } }),
  };
}

/** The default `parseModel`: config.json's `model` must be present (any JSON value). */
function parseAnyJson<M>(value: unknown): M {
  if (value === undefined) throw new Error('it is missing');
  return value as M;
}

function parseFileRecords(value: unknown, where: string): Record<string, CheckpointFileRecord> | undefined {
  if (value === undefined) return undefined;
  const bad = (why: string): CheckpointError =>
    new CheckpointError('INVALID_CONFIG', `${where} "files" ${why}; remove the field or re-save the checkpoint`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('must be an object');
  const out: Record<string, CheckpointFileRecord> = {};
  for (const [name, rec] of Object.entries(value)) {
    if (name !== CHECKPOINT_FILES.model && name !== CHECKPOINT_FILES.extra)
      throw bad(`names an unknown file ${JSON.stringify(name)}`);
    const r = rec as Record<string, unknown> | null;
    const bytes = r?.['bytes'];
    const sha256 = r?.['sha256'];
    if (
      typeof bytes !== 'number' ||
      !Number.isSafeInteger(bytes) ||
      bytes < 0 ||
      typeof sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(sha256)
    ) {
      throw bad(`entry ${JSON.stringify(name)} must be {"bytes": integer, "sha256": 64 hex digits}`);
    }
    out[name] = { bytes, sha256 };
  }
  return out;
}

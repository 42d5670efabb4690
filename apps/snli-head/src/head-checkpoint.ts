// Checkpoint folder of an SNLI model: config.json (+ trainer state) + model.safetensors (+ optimizer.safetensors).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { writeFileAtomic } from '@grassflow/datasets';
import { readSafetensors, safetensorsValues, serializeSafetensors, type SafetensorsTensorInput } from '@grassflow/gpu-layers';
import type { TrainerState } from '@grassflow/training';
import type { SnliModelConfig } from './snli-model.js';

export const CHECKPOINT_FORMAT = 'grassflow-snli-checkpoint';
const MODEL_FILE = 'model.safetensors';
const OPTIMIZER_FILE = 'optimizer.safetensors';

/** A checkpoint that cannot be read; the message says what is wrong and what to do. */
export class HeadCheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeadCheckpointError';
  }
}

/** JSON stored in config.json besides the tensors. */
export interface CheckpointMeta {
  model: SnliModelConfig;
  /** How the features were made: 'none' (trained embedding encoder) or the DistilBERT folder/id. */
  backbone: string;
  /** Tokens kept per sentence. */
  maxLen: number;
  /** Training state for --resume (absent in a model-only checkpoint). */
  trainer?: TrainerState;
}

interface ConfigFile extends CheckpointMeta {
  format: typeof CHECKPOINT_FORMAT;
  formatVersion: 1;
  files: Record<string, { bytes: number; sha256: string }>;
}

async function toInputs(tensors: Iterable<[string, tf.Tensor]>): Promise<Map<string, SafetensorsTensorInput>> {
  const out = new Map<string, SafetensorsTensorInput>();
  for (const [name, t] of tensors) out.set(name, { dtype: 'F32', shape: t.shape, data: (await t.data()) as Float32Array });
  return out;
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * Write a checkpoint to `dir` crash-safely: the complete folder is written as a sibling `dir.tmp-*`, then swapped in
 * with renames (`dir` → `dir.old-*`, `dir.tmp-*` → `dir`), so a crash leaves the previous checkpoint or the new one.
 */
export async function saveHeadCheckpoint(dir: string, meta: CheckpointMeta, weights: Iterable<[string, tf.Tensor]>, optimizer?: ReadonlyMap<string, tf.Tensor>): Promise<void> {
  const target = resolve(dir);
  await mkdir(dirname(target), { recursive: true });
  const id = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmp = `${target}.tmp-${id}`;
  await mkdir(tmp, { recursive: true });
  const files: ConfigFile['files'] = {};
  const put = async (name: string, bytes: Uint8Array): Promise<void> => {
    await writeFileAtomic(join(tmp, name), bytes);
    files[name] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
  };
  await put(MODEL_FILE, serializeSafetensors(await toInputs(weights), { format: 'grassflow', 'grassflow.format': CHECKPOINT_FORMAT }));
  if (optimizer !== undefined && optimizer.size > 0) await put(OPTIMIZER_FILE, serializeSafetensors(await toInputs(optimizer)));
  const config: ConfigFile = { format: CHECKPOINT_FORMAT, formatVersion: 1, ...JSON.parse(JSON.stringify(meta)) as CheckpointMeta, files };
  await writeFileAtomic(join(tmp, 'config.json'), new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`));
  const old = `${target}.old-${id}`;
  if (existsSync(target)) await rename(target, old);
  await rename(tmp, target);
  await rm(old, { recursive: true, force: true });
  // stale siblings of crashed saves
  for (const e of readdirSync(dirname(target))) {
    if (e.startsWith(`${basename(target)}.tmp-`) || e.startsWith(`${basename(target)}.old-`)) await rm(join(dirname(target), e), { recursive: true, force: true });
  }
}

/** A loaded checkpoint; the caller disposes the tensors. */
export interface LoadedHeadCheckpoint extends CheckpointMeta {
  dir: string;
  weights: Map<string, tf.Tensor>;
  optimizer: Map<string, tf.Tensor>;
}

function readTensors(bytes: Uint8Array, file: string): Map<string, tf.Tensor> {
  let parsed: ReturnType<typeof readSafetensors>;
  try {
    parsed = readSafetensors(bytes);
  } catch (err) {
    throw new HeadCheckpointError(`${file} is not a valid safetensors file (${(err as Error).message}): the checkpoint is corrupt; use another one (checkpoints/best or latest) or retrain`);
  }
  const out = new Map<string, tf.Tensor>();
  for (const [name, t] of parsed.tensors) out.set(name, tf.tensor(safetensorsValues(t) as Float32Array, [...t.shape], 'float32'));
  return out;
}

/** Read a checkpoint written by {@link saveHeadCheckpoint}, checking format, file sizes and SHA-256 before use. */
export async function loadHeadCheckpoint(dir: string): Promise<LoadedHeadCheckpoint> {
  let target = resolve(dir);
  if (!existsSync(target)) {
    // a crash between the two renames of a save leaves only dir.old-*
    const old = existsSync(dirname(target)) ? readdirSync(dirname(target)).find((e) => e.startsWith(`${basename(target)}.old-`)) : undefined;
    if (old === undefined) throw new HeadCheckpointError(`checkpoint ${target} does not exist`);
    target = join(dirname(target), old);
  }
  const cfgPath = join(target, 'config.json');
  let cfg: ConfigFile;
  try {
    cfg = JSON.parse(await readFile(cfgPath, 'utf8')) as ConfigFile;
  } catch (err) {
    throw new HeadCheckpointError(`${cfgPath} is missing or not JSON (${(err as Error).message}): ${target} is not a grassflow-snli checkpoint`);
  }
  if (cfg.format !== CHECKPOINT_FORMAT) throw new HeadCheckpointError(`${cfgPath}: format is '${String(cfg.format)}', expected '${CHECKPOINT_FORMAT}' (a checkpoint written by grassflow-snli train)`);
  if (cfg.formatVersion !== 1) throw new HeadCheckpointError(`${cfgPath}: formatVersion ${String(cfg.formatVersion)} is not supported by this version; upgrade @grassflow/snli-head`);
  const read = async (name: string): Promise<Map<string, tf.Tensor>> => {
    const rec = cfg.files?.[name];
    if (rec === undefined) return new Map();
    const path = join(target, name);
    if (!existsSync(path)) throw new HeadCheckpointError(`${path} is missing: the checkpoint is incomplete`);
    const size = (await stat(path)).size;
    if (size !== rec.bytes) throw new HeadCheckpointError(`${path} has ${size} bytes but config.json records ${rec.bytes}: the file is truncated or corrupt`);
    const bytes = new Uint8Array(await readFile(path));
    if (sha256(bytes) !== rec.sha256) throw new HeadCheckpointError(`${path} does not match the SHA-256 in config.json: the file is corrupt`);
    return readTensors(bytes, path);
  };
  if (cfg.files?.[MODEL_FILE] === undefined) throw new HeadCheckpointError(`${cfgPath} lists no ${MODEL_FILE}: the checkpoint is incomplete`);
  const weights = await read(MODEL_FILE);
  const optimizer = await read(OPTIMIZER_FILE);
  const { model, backbone, maxLen, trainer } = cfg;
  return { dir: target, model, backbone, maxLen, ...(trainer === undefined ? {} : { trainer }), weights, optimizer };
}

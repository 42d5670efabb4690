// Any tfjs model's weights as safetensors: named tensors in and out, and a tfjs IOHandler for model.save /
// tf.loadLayersModel. Node only (files), no tfjs-node needed: the bytes go through @grassflow/checkpoints'
// validating reader and its atomic writer (temp file, fsync, rename, fsync of the folder).
//
// Names: a model's tensors are named as tfjs names them when it saves a model (LayerVariable.originalName,
// "<layer name>/<weight name>", e.g. "dense_Dense1/kernel"); a layer of this package names its weights by their
// PyTorch names under the layer, e.g. "causal_grassmann_mixing_CausalGrassmannMixing1/w_red.weight".

import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import type { LayerVariable } from '@tensorflow/tfjs-layers';
import {
  readSafetensorsFile,
  safetensorsValues,
  writeSafetensorsFile,
  type SafetensorsDType,
  type SafetensorsTensor,
  type SafetensorsTensorInput,
} from '@grassflow/checkpoints';

/** What holds weights: a tfjs model or layer (anything with `weights`), or named tensors. */
export type WeightsSource =
  { readonly weights: readonly LayerVariable[] } | ReadonlyMap<string, tf.Tensor> | tf.NamedTensorMap;

/** A weights file that is not what a loader needs, or weights that do not fit a model. */
export class WeightsIOError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WeightsIOError';
  }
}

/** The tfjs dtype a safetensors dtype loads as; F16/BF16 widen to float32 exactly. Others are refused. */
const TF_DTYPE_OF: Partial<Record<SafetensorsDType, 'float32' | 'int32' | 'bool'>> = {
  F32: 'float32',
  F16: 'float32',
  BF16: 'float32',
  I32: 'int32',
  BOOL: 'bool',
};

function hasWeights(source: WeightsSource): source is { readonly weights: readonly LayerVariable[] } {
  return !(source instanceof Map) && Array.isArray((source as { weights?: unknown }).weights);
}

/**
 * The weights of a tfjs model or layer by name (LayerVariable.originalName, the names tfjs's own model.save
 * writes), in the model's order. The tensors are the variables' current values, not copies: do not dispose them.
 */
export function namedWeights(model: { readonly weights: readonly LayerVariable[] }): Map<string, tf.Tensor> {
  const out = new Map<string, tf.Tensor>();
  for (const w of model.weights) {
    if (out.has(w.originalName)) {
      throw new WeightsIOError(
        `two weights of the model are named '${w.originalName}': give its layers distinct names`,
      );
    }
    out.set(w.originalName, w.read());
  }
  return out;
}

/**
 * Saves weights as one safetensors file at `path`, atomically (a crash leaves the old file or the new one):
 * a tfjs model or layer (tf.sequential, tf.model, a layer: named by {@link namedWeights}), a Map of named
 * tensors, or a tf.NamedTensorMap. dtypes float32, int32 and bool (F32, I32, BOOL); `metadata` goes into the
 * file's `__metadata__`. The tensors are read, not disposed.
 */
export async function saveWeights(
  path: string,
  source: WeightsSource,
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  const tensors = hasWeights(source) ? namedWeights(source) : source;
  await writeSafetensorsFile(path, await readValues(tensors), metadata ?? null);
}

const STORED_DTYPES: Partial<Record<tf.DataType, SafetensorsDType>> = { float32: 'F32', int32: 'I32', bool: 'BOOL' };

/**
 * The tensors' values, read with `await data()` (the writer's own read, dataSync, throws on webgpu under Node),
 * in the same order; a tensor of a dtype safetensors does not store here stays as it is, for the writer's message.
 */
async function readValues(
  tensors: ReadonlyMap<string, tf.Tensor> | tf.NamedTensorMap,
): Promise<Map<string, tf.Tensor | SafetensorsTensorInput>> {
  const out = new Map<string, tf.Tensor | SafetensorsTensorInput>();
  const entries: Array<[string, tf.Tensor]> =
    tensors instanceof Map
      ? [...(tensors as ReadonlyMap<string, tf.Tensor>)]
      : Object.entries(tensors as tf.NamedTensorMap);
  for (const [name, t] of entries) {
    const dtype = STORED_DTYPES[t.dtype];
    out.set(
      name,
      dtype === undefined ? t : { dtype, shape: t.shape, data: await t.data<'float32' | 'int32' | 'bool'>() },
    );
  }
  return out;
}

function toTensor(name: string, t: SafetensorsTensor, path: string): tf.Tensor {
  const dtype = TF_DTYPE_OF[t.dtype];
  if (dtype === undefined) {
    throw new WeightsIOError(
      `${path}: tensor '${name}' has dtype ${t.dtype}; tfjs loads F32, F16, BF16 (as float32), I32 and BOOL`,
    );
  }
  return tf.tensor(safetensorsValues(t) as Float32Array | Int32Array | Uint8Array, [...t.shape], dtype);
}

/** Named tensors and the `__metadata__` of a safetensors file. */
export interface LoadedWeights {
  /** The tensors in file order; the caller disposes them. */
  readonly tensors: Map<string, tf.Tensor>;
  readonly metadata: Record<string, string>;
}

/**
 * Loads every tensor of the safetensors file `path` as a tf tensor under its name (F32/F16/BF16 → float32,
 * I32 → int32, BOOL → bool); the file is validated in full first. The caller disposes the tensors. Put them
 * into a model with {@link assignWeights}.
 */
export async function loadWeights(path: string): Promise<LoadedWeights> {
  const contents = await readSafetensorsFile(path);
  const tensors = new Map<string, tf.Tensor>();
  try {
    for (const [name, t] of contents.tensors) tensors.set(name, toTensor(name, t, path));
  } catch (error) {
    for (const t of tensors.values()) t.dispose();
    throw error;
  }
  return { tensors, metadata: { ...(contents.metadata ?? {}) } };
}

/**
 * Sets every weight of a tfjs model or layer from `weights` by name ({@link namedWeights}'s names), after
 * checking all of them first: a missing name, a shape or dtype that differs, or a tensor the model has no
 * weight for is an error and nothing is assigned. The tensors are copied into the variables, not disposed.
 * tfjs numbers unnamed layers per process (dense_Dense1, dense_Dense2, …): give layers a `name` when weights
 * go into a model built again, or save and load the whole model with {@link safetensorsHandler}.
 */
export function assignWeights(
  model: { readonly weights: readonly LayerVariable[] },
  weights: ReadonlyMap<string, tf.Tensor> | tf.NamedTensorMap,
): void {
  const given: ReadonlyMap<string, tf.Tensor> = weights instanceof Map ? weights : new Map(Object.entries(weights));
  const names = model.weights.map((w) => w.originalName);
  for (const w of model.weights) {
    const t = given.get(w.originalName);
    if (t === undefined) {
      const have = [...given.keys()].slice(0, 5).join(', ');
      throw new WeightsIOError(
        `no tensor named '${w.originalName}' for the model's weight of that name (the tensors: ${have}` +
          `${given.size > 5 ? ', …' : ''}); tfjs numbers unnamed layers per process, so name the layers`,
      );
    }
    if (t.dtype !== w.dtype || t.shape.join(',') !== w.shape.join(',')) {
      throw new WeightsIOError(
        `weight '${w.originalName}' is ${w.dtype} [${w.shape.join(', ')}], ` +
          `the tensor is ${t.dtype} [${t.shape.join(', ')}]`,
      );
    }
  }
  const extra = [...given.keys()].filter((name) => !names.includes(name));
  if (extra.length > 0) throw new WeightsIOError(`the model has no weight named '${extra.join("', '")}'`);
  model.weights.forEach((w) => w.write(given.get(w.originalName) as tf.Tensor));
}

/** `__metadata__` keys of a model saved by {@link safetensorsHandler}. */
const META = {
  format: 'format',
  topology: 'tfjs.modelTopology',
  trainingConfig: 'tfjs.trainingConfig',
  userDefinedMetadata: 'tfjs.userDefinedMetadata',
  weightOrder: 'tfjs.weightOrder',
  generatedBy: 'tfjs.generatedBy',
  convertedBy: 'tfjs.convertedBy',
  modelFormat: 'tfjs.format',
} as const;

/** The `format` metadata value of a model saved by {@link safetensorsHandler}. */
export const TFJS_SAFETENSORS_FORMAT = 'grassflow.tfjs-model';

/** The file name {@link safetensorsHandler} uses inside a folder. */
export const TFJS_SAFETENSORS_FILE = 'model.safetensors';

async function resolveModelFile(path: string, forSave: boolean): Promise<string> {
  if (path.endsWith('.safetensors')) return path;
  if (forSave) {
    await mkdir(path, { recursive: true });
  } else {
    const info = await stat(path).catch(() => null);
    if (info === null) throw new WeightsIOError(`${path}: no such folder or .safetensors file to load a model from`);
    if (!info.isDirectory()) return path;
  }
  return join(path, TFJS_SAFETENSORS_FILE);
}

function parseJsonMeta(file: string, meta: Record<string, string>, key: string): unknown {
  const text = meta[key];
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new WeightsIOError(`${file}: metadata '${key}' is not valid JSON`, { cause });
  }
}

/**
 * A tfjs IOHandler that saves a whole model (topology and weights) as ONE safetensors file and loads it again:
 * `await model.save(safetensorsHandler(dir))` and `await tf.loadLayersModel(safetensorsHandler(dir))`, with this
 * package's layers (CausalGrassmannMixing, …) inside, no tfjs-node needed. `path` is a folder (the file is
 * `<folder>/model.safetensors`, the folder is created) or a path ending in `.safetensors`.
 *
 * The weights are tensors under tfjs's weight names (as {@link namedWeights}); the model topology JSON (the
 * model.json `modelTopology` of tfjs), the training config and the user-defined metadata are JSON strings in the
 * file's `__metadata__` (keys `tfjs.modelTopology`, `tfjs.trainingConfig`, `tfjs.userDefinedMetadata`, with
 * `format: grassflow.tfjs-model`). One file written atomically: the topology and the weights always match, and a
 * crash during a save leaves the previous file. Any safetensors reader reads the weights.
 */
export function safetensorsHandler(path: string): tf.io.IOHandler {
  return {
    async save(artifacts: tf.io.ModelArtifacts): Promise<tf.io.SaveResult> {
      const topology = artifacts.modelTopology;
      if (topology === undefined || topology instanceof ArrayBuffer) {
        throw new WeightsIOError(
          'safetensorsHandler saves layers models (tf.sequential, tf.model), whose topology is JSON; ' +
            'this model has none (a graph model?)',
        );
      }
      const specs = artifacts.weightSpecs ?? [];
      const named = artifacts.weightData === undefined ? {} : tf.io.decodeWeights(artifacts.weightData, specs);
      try {
        const metadata: Record<string, string> = {
          [META.format]: TFJS_SAFETENSORS_FORMAT,
          [META.topology]: JSON.stringify(topology),
          [META.weightOrder]: JSON.stringify(specs.map((s) => s.name)),
        };
        if (artifacts.trainingConfig !== undefined)
          metadata[META.trainingConfig] = JSON.stringify(artifacts.trainingConfig);
        if (artifacts.userDefinedMetadata !== undefined)
          metadata[META.userDefinedMetadata] = JSON.stringify(artifacts.userDefinedMetadata);
        if (artifacts.generatedBy !== undefined) metadata[META.generatedBy] = artifacts.generatedBy;
        if (artifacts.convertedBy != null) metadata[META.convertedBy] = artifacts.convertedBy;
        if (artifacts.format !== undefined) metadata[META.modelFormat] = artifacts.format;
        await writeSafetensorsFile(await resolveModelFile(path, true), named, metadata);
      } finally {
        tf.dispose(Object.values(named));
      }
      return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON(artifacts) };
    },

    async load(): Promise<tf.io.ModelArtifacts> {
      const file = await resolveModelFile(path, false);
      const { tensors, metadata } = await loadWeights(file);
      try {
        if (metadata[META.format] !== TFJS_SAFETENSORS_FORMAT || metadata[META.topology] === undefined) {
          throw new WeightsIOError(
            `${file}: not a model saved by safetensorsHandler (no '${META.topology}' metadata); ` +
              'load its tensors with loadWeights',
          );
        }
        const order = parseJsonMeta(file, metadata, META.weightOrder);
        const names = Array.isArray(order) ? order.map(String).filter((n) => tensors.has(n)) : [];
        for (const n of tensors.keys()) if (!names.includes(n)) names.push(n);
        const named = names.flatMap((name) => {
          const tensor = tensors.get(name);
          return tensor === undefined ? [] : [{ name, tensor }];
        });
        const { data, specs } = await tf.io.encodeWeights(named);
        const artifacts: tf.io.ModelArtifacts = {
          modelTopology: parseJsonMeta(file, metadata, META.topology) as object,
          weightSpecs: specs,
          weightData: data,
        };
        const trainingConfig = parseJsonMeta(file, metadata, META.trainingConfig);
        if (trainingConfig !== undefined) artifacts.trainingConfig = trainingConfig as tf.io.TrainingConfig;
        const userDefined = parseJsonMeta(file, metadata, META.userDefinedMetadata);
        if (userDefined !== undefined)
          artifacts.userDefinedMetadata = userDefined as NonNullable<tf.io.ModelArtifacts['userDefinedMetadata']>;
        if (metadata[META.generatedBy] !== undefined) artifacts.generatedBy = metadata[META.generatedBy];
        if (metadata[META.convertedBy] !== undefined) artifacts.convertedBy = metadata[META.convertedBy];
        if (metadata[META.modelFormat] !== undefined) artifacts.format = metadata[META.modelFormat];
        return artifacts;
      } finally {
        for (const t of tensors.values()) t.dispose();
      }
    },
  };
}

// A language model from a checkpoint's tensors, wherever they were read (a folder on disk, or bytes in a browser):
// config.json's `model` validated as a ModelConfig, the model built from it, whose tensor names and shapes the
// weights must match before any tensor data is read, then the weights assigned.
import * as tf from '@tensorflow/tfjs-core';
import {
  CheckpointError,
  type CheckpointJson,
  type CheckpointTensor,
  type LoadCheckpointFolderOptions,
  type SafetensorsDType,
} from '@grassflow/checkpoints';
import { countParams, validateModelConfig, type ModelConfig } from '../config/model-config.js';
import { createModel } from '../models/create-model.js';
import type { GrassmannLM } from '../grassmann/lm.js';
import type { TransformerLM } from '../transformer/lm.js';

const SAFETENSORS_TO_TF: Partial<Record<SafetensorsDType, tf.DataType>> = {
  F32: 'float32',
  I32: 'int32',
  BOOL: 'bool',
};

/** The config fields named when the weights do not match config.json. */
function describeConfig(config: ModelConfig): string {
  return (
    `kind=${config.kind} vocabSize=${config.vocabSize} dModel=${config.dModel} nLayers=${config.nLayers} ` +
    `dFF=${config.dFF} maxLen=${config.maxLen} ${config.kind === 'grassmann' ? `r=${config.r}` : `nHeads=${config.nHeads}`} ` +
    `norm=${config.norm}`
  );
}

/** A checkpoint tensor as a tf tensor of its dtype (F32 → float32, I32 → int32, BOOL → bool). */
function toTensor(t: CheckpointTensor): tf.Tensor {
  return tf.tensor(t.data, [...t.shape], SAFETENSORS_TO_TF[t.dtype]);
}

/** What a checkpoint read gave (from a folder or from bytes): the config, the model's tensors and the extra ones. */
interface ReadCheckpoint {
  readonly model: ModelConfig;
  readonly extra: { readonly [key: string]: CheckpointJson };
  readonly tensors: ReadonlyMap<string, CheckpointTensor>;
  readonly extraTensors: ReadonlyMap<string, CheckpointTensor>;
  readonly formatVersion: number;
  readonly unverified: readonly string[];
}

/**
 * The refusal of a checkpoint whose config.json records no size and SHA-256 for `names` (its weights): loaded only
 * with `trust`, since nothing says those bytes are the ones written.
 */
export function unverifiedError(where: string, names: readonly string[]): CheckpointError {
  return new CheckpointError(
    'UNVERIFIED',
    `${where}: config.json records no size and SHA-256 for ${names.join(' and ')} (its ` +
      '`files` record is missing: a hand-written or edited checkpoint), so nothing says its bytes are the ones ' +
      'written: use a checkpoint grassflow wrote, or load this one only if you trust where it came from ' +
      '(--trust; the option trust: true)',
  );
}

/**
 * A model from one checkpoint read: `read` (loadCheckpointFolder or loadCheckpointBytes with the options it is given)
 * validates config.json and checks the tensors against the model built from it; the weights are then assigned. What
 * was built is disposed when the read fails. Returns the fields every loaded checkpoint has, and the read itself.
 */
export async function loadCheckpointModel<R extends ReadCheckpoint>(
  verifyChecksums: boolean,
  read: (options: LoadCheckpointFolderOptions<ModelConfig>) => Promise<R>,
  unrecorded: { trust: boolean; where: string },
) {
  const loader = checkpointModelLoader(verifyChecksums);
  try {
    const loaded = await read(loader.options);
    if (loaded.unverified.length > 0 && !unrecorded.trust) {
      throw unverifiedError(unrecorded.where, loaded.unverified);
    }
    const { model, extraTensors } = loader.finish(loaded);
    const { model: config, extra, formatVersion, unverified } = loaded;
    return { loaded, model, config, extra, extraTensors, formatVersion, unverified };
  } catch (error) {
    loader.discard();
    throw error;
  }
}

/**
 * One model load: `options` (for loadCheckpointFolder or loadCheckpointBytes) validates the config and builds the
 * model it describes when asked for the expected tensors; `finish` assigns the read weights and returns the model
 * and the extra tensors as tf tensors; `discard` disposes what was built when the read failed.
 */
function checkpointModelLoader(verifyChecksums: boolean): {
  options: LoadCheckpointFolderOptions<ModelConfig>;
  finish(read: ReadCheckpoint): { model: GrassmannLM | TransformerLM; extraTensors: Map<string, tf.Tensor> };
  discard(): void;
} {
  let built: GrassmannLM | TransformerLM | undefined;
  const extraTensors = new Map<string, tf.Tensor>();
  return {
    options: {
      verifyChecksums,
      parseModel: validateModelConfig,
      reader: '@grassflow/gpu-layers',
      describeModel: describeConfig,
      // the sizes config.json claims are checked against the weights' header before createModel allocates them
      parameterCount: countParams,
      expectedTensors: (config) => {
        built = createModel(config);
        const expected = built.stateDict();
        const shapes = new Map([...expected].map(([name, t]) => [name, t.shape] as const));
        for (const t of expected.values()) t.dispose();
        return shapes;
      },
    },
    finish(read) {
      const model = built;
      if (model === undefined) throw new Error('the checkpoint reader did not ask for the expected tensors');
      const dict = new Map<string, tf.Tensor>();
      try {
        for (const [name, w] of read.tensors) dict.set(name, tf.tensor(w.data, [...w.shape], 'float32'));
        model.loadStateDict(dict);
      } finally {
        for (const t of dict.values()) t.dispose();
      }
      for (const [name, t] of read.extraTensors) extraTensors.set(name, toTensor(t));
      return { model, extraTensors };
    },
    discard() {
      built?.dispose();
      for (const t of extraTensors.values()) t.dispose();
    },
  };
}

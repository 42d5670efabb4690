// A language model from a checkpoint's tensors, wherever they were read (a folder on disk, or bytes in a browser):
// config.json's `model` validated as a ModelConfig, the model built from it, whose tensor names and shapes the
// weights must match before any tensor data is read, then the weights assigned.
import * as tf from '@tensorflow/tfjs-core';
import type { CheckpointTensor, LoadCheckpointFolderOptions, SafetensorsDType } from '@grassflow/checkpoints';
import { validateModelConfig, type ModelConfig } from '../config/model-config.js';
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

/** What a checkpoint read gave: the model's tensors and the extra ones. */
interface ReadTensors {
  readonly tensors: ReadonlyMap<string, CheckpointTensor>;
  readonly extraTensors: ReadonlyMap<string, CheckpointTensor>;
}

/**
 * One model load: `options` (for loadCheckpointFolder or loadCheckpointBytes) validates the config and builds the
 * model it describes when asked for the expected tensors; `finish` assigns the read weights and returns the model
 * and the extra tensors as tf tensors; `discard` disposes what was built when the read failed.
 */
export function checkpointModelLoader(verifyChecksums: boolean): {
  options: LoadCheckpointFolderOptions<ModelConfig>;
  finish(read: ReadTensors): { model: GrassmannLM | TransformerLM; extraTensors: Map<string, tf.Tensor> };
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

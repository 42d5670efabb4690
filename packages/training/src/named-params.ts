// Stable names for a language model's trainable variables (its PyTorch state-dict names).
import * as tf from '@tensorflow/tfjs-core';
import type { LanguageModel } from '@grassflow/gpu-layers';
import type { NamedVariable } from './adamw.js';

/**
 * The model's trainable variables paired with their state-dict names (`tok_emb.weight`, `blocks.0.ln1.bias`, …).
 * LanguageModel lists both in the same order; the pairing is checked by size.
 */
export function namedParameters(model: LanguageModel): NamedVariable[] {
  const vars = model.trainableVariables();
  const dict = model.stateDict();
  try {
    const names = [...dict.keys()];
    // entries past the variables are buffers (an adaptive head's vocabulary order): saved, not trained
    if (names.length < vars.length)
      throw new Error(`model has ${vars.length} variables but only ${names.length} state-dict entries`);
    return vars.map((variable, i) => {
      const name = names[i] as string;
      const t = dict.get(name) as tf.Tensor;
      if (t.size !== variable.size)
        throw new Error(
          `state-dict entry '${name}' (${t.size} values) does not match variable ${i} (${variable.size} values)`,
        );
      return { name, variable };
    });
  } finally {
    tf.dispose([...dict.values()]);
  }
}

// Shared by the playground's browser tests: the data folder and a tiny checkpoint written by gpu-layers'
// saveCheckpoint. Chromium itself (launching, console errors, a page's result) is ../../../tooling/chromium.mjs,
// which the browser example's test uses too.
import { createModel, preset, saveCheckpoint, type ModelConfig } from '@grassflow/gpu-layers';

const fromEnv = process.env['GRASSFLOW_DATA_DIR'];
export const dataDir = fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;

/** A tiny language model (the 'tiny' preset) of the BERT vocabulary, saved as a checkpoint folder grassflow-lm reads. */
export async function writeTinyCheckpoint(dir: string, overrides: Partial<ModelConfig> = {}): Promise<void> {
  const model = createModel(preset('tiny', { vocabSize: 30522, maxLen: 32, ...overrides }), { seed: 7 });
  try {
    await saveCheckpoint(dir, model, { extra: { step: 0, run: { tokenizer: 'wordpiece' } } });
  } finally {
    model.dispose();
  }
}

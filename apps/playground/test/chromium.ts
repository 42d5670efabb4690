// Shared by the playground's browser tests: the data folder and a tiny checkpoint written by gpu-layers'
// saveCheckpoint. Chromium itself (launching, console errors, a page's result) is ../../../tooling/chromium.mjs,
// which the browser example's test uses too.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createModel,
  preset,
  saveCheckpoint,
  savePretrained,
  WIKITEXT_WORDPIECE_PREPARATION,
  type ModelConfig,
} from '@grassflow/gpu-layers';

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

/**
 * A tiny model as a pretrained folder, as `grassflow-lm export` writes one (its tokenizer: the data folder's BERT
 * vocab.txt with grassflow-lm's preparation, through `editVocab` when given), for fromPretrained.
 */
export async function writeTinyPretrained(
  dir: string,
  data: string,
  editVocab: (vocab: string) => string = (v) => v,
): Promise<void> {
  const model = createModel(preset('tiny', { vocabSize: 30522, maxLen: 32 }), { seed: 7 });
  try {
    await savePretrained(dir, model, {
      tokenizer: {
        config: {
          kind: 'wordpiece',
          files: { vocab: 'vocab.txt' },
          preparation: WIKITEXT_WORDPIECE_PREPARATION,
          lowercase: true,
        },
        files: new Map([['vocab.txt', editVocab(await readFile(join(data, 'bert-vocab', 'vocab.txt'), 'utf8'))]]),
      },
      card: '# tiny\n',
    });
  } finally {
    model.dispose();
  }
}

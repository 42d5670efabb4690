// Shared helpers of the checkpoint tests: tiny models, their logits, and rewriting a saved checkpoint.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import {
  createModel,
  initBackend,
  preset,
  WIKITEXT_WORDPIECE_PREPARATION,
  type LanguageModel,
  type ModelConfig,
  type PretrainedTokenizerFiles,
} from '@grassflow/gpu-layers';
import { readSafetensorsFile, writeSafetensorsFile, type SafetensorsTensorInput } from '@grassflow/checkpoints';

// A WordPiece vocabulary of the tiny preset's 64 tokens: BERT's special tokens, a few words, fillers.
const WORDS = ['the', 'history', 'of', 'a', 'city', 'war', 'and', '.', ','];
const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...WORDS];
while (VOCAB.length < 64) VOCAB.push(`w${VOCAB.length}`);

/** A tokenizer savePretrained and fromPretrained accept for the tiny preset (64 tokens). */
export const TINY_TOKENIZER: PretrainedTokenizerFiles = {
  config: {
    kind: 'wordpiece',
    files: { vocab: 'vocab.txt' },
    preparation: WIKITEXT_WORDPIECE_PREPARATION,
    lowercase: true,
  },
  files: new Map([['vocab.txt', `${VOCAB.join('\n')}\n`]]),
};

export async function useCpu(): Promise<void> {
  await initBackend({ backend: 'cpu' });
}

/** The tiny preset with overrides, dropout on (so a training-mode bug would show). */
export function tinyConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return preset('tiny', overrides);
}

export function tinyModel(overrides: Partial<ModelConfig> = {}, seed = 1): LanguageModel {
  return createModel(tinyConfig(overrides), { seed });
}

/** Logits of a fixed batch [2, 5] in inference mode, as a plain array. */
export function logitsOf(model: LanguageModel): number[] {
  const ids = tf.tensor2d(
    [
      [1, 2, 3, 4, 5],
      [60, 7, 0, 63, 9],
    ],
    [2, 5],
    'int32',
  );
  const out = model.forward(ids);
  const values = Array.from(out.dataSync());
  ids.dispose();
  out.dispose();
  return values;
}

/**
 * Rewrites model.safetensors of a saved checkpoint through `mutate`, and config.json's record of it
 * (size and SHA-256), so that only the tensor change itself can make a load fail.
 */
export async function rewriteWeights(
  dir: string,
  mutate: (tensors: Map<string, SafetensorsTensorInput>) => void,
): Promise<void> {
  const path = join(dir, 'model.safetensors');
  const { tensors, metadata } = await readSafetensorsFile(path);
  const inputs = new Map<string, SafetensorsTensorInput>(
    [...tensors].map(([k, t]) => [k, { dtype: t.dtype, shape: t.shape, data: t.data }]),
  );
  mutate(inputs);
  await writeSafetensorsFile(path, inputs, metadata);
  const bytes = await readFile(path);
  await editConfig(dir, (c) => {
    (c['files'] as Record<string, unknown>)['model.safetensors'] = {
      bytes: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
  });
}

/** Applies `edit` to the parsed config.json of a checkpoint and writes it back. */
export async function editConfig(dir: string, edit: (config: Record<string, unknown>) => void): Promise<void> {
  const path = join(dir, 'config.json');
  const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  edit(config);
  await writeFile(path, JSON.stringify(config, null, 2));
}

// A loaded checkpoint's model goes straight into createDecoder (loadCheckpoint returns GrassmannLM | TransformerLM,
// both LanguageModelBase classes): this file type-checks only if that holds, and the decoder gives the forward pass's logits.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDecoder, loadCheckpoint, saveCheckpoint, type LanguageModelBase } from '@grassflow/gpu-layers';
import { tinyModel, useCpu } from './checkpoint-helpers.js';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-decoder-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('createDecoder(loadCheckpoint(dir).model)', () => {
  for (const kind of ['grassmann', 'transformer'] as const) {
    it(`decodes a loaded ${kind} checkpoint with the full forward pass's last logits`, async () => {
      const model = tinyModel({ kind });
      const dir = join(root, kind);
      await saveCheckpoint(dir, model);
      model.dispose();
      const { model: loaded } = await loadCheckpoint(dir);
      const asTied: LanguageModelBase = loaded; // the type the decoder takes
      const decoder = createDecoder(loaded);
      const ids = tf.tensor2d([[3, 1, 4, 1, 5]], [1, 5], 'int32');
      const last = decoder.prime(ids);
      const full = asTied.forward(ids);
      const want = tf.tidy(() => tf.reshape(tf.slice(full, [0, 4, 0], [1, 1, -1]), [1, -1]));
      const diff = tf.tidy(() => tf.max(tf.abs(tf.sub(last, want))).dataSync()[0] ?? NaN);
      expect(diff).toBeLessThan(1e-5);
      tf.dispose([ids, last, full, want]);
      decoder.dispose();
      loaded.dispose();
    });
  }
});

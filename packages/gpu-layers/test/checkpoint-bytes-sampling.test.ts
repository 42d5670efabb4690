// Checkpoints from bytes (the browser path) and the sampler: the same model as loadCheckpoint, the same tokens as the
// full-forward reference, streamed one at a time, nothing leaked when the caller stops early.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createModel,
  loadCheckpoint,
  loadCheckpointFromBytes,
  sampleIds,
  sampleIdsFullForward,
  saveCheckpoint,
  type UniformStream,
} from '@grassflow/gpu-layers';
import { logitsOf, tinyConfig, tinyModel, useCpu } from './checkpoint-helpers.js';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-bytes-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fixed stream of uniforms (what a seeded Prng gives), restarted for each sampler. */
function stream(seed: number): UniformStream {
  let s = seed;
  return { nextFloat: () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646 };
}

describe('loadCheckpointFromBytes', () => {
  it.each(['grassmann', 'transformer'] as const)(
    '%s: the model loadCheckpoint loads, from the files’ bytes',
    async (kind) => {
      const dir = join(root, kind);
      const model = tinyModel({ kind }, 3);
      await saveCheckpoint(dir, model, { extra: { run: { tokenizer: 'wordpiece' } } });
      const files = {
        config: new Uint8Array(await readFile(join(dir, 'config.json'))),
        model: new Uint8Array(await readFile(join(dir, 'model.safetensors'))),
        source: kind,
      };
      const fromDisk = await loadCheckpoint(dir);
      // A bare createModel + dispose leaves a few tensors behind (the model's own business, not the loader's).
      let before = tf.memory().numTensors;
      createModel(tinyConfig({ kind })).dispose();
      const modelLeak = tf.memory().numTensors - before;
      before = tf.memory().numTensors;
      const fromBytes = await loadCheckpointFromBytes(files);
      expect(fromBytes.config).toEqual(fromDisk.config);
      expect(fromBytes.extra).toEqual({ run: { tokenizer: 'wordpiece' } });
      expect(logitsOf(fromBytes.model)).toEqual(logitsOf(fromDisk.model));
      fromBytes.model.dispose();
      expect(tf.memory().numTensors - before).toBe(modelLeak);
      before = tf.memory().numTensors;
      // A config.json whose model is larger than its weights (dFF doubled, no file records): refused by the parameter
      // count before any model is built, so nothing is allocated.
      const config = JSON.parse(new TextDecoder().decode(files.config)) as { model: { dFF: number }; files?: unknown };
      config.model.dFF *= 2;
      delete config.files;
      const wrong = { ...files, config: JSON.stringify(config) };
      await expect(loadCheckpointFromBytes(wrong)).rejects.toMatchObject({ code: 'TENSOR_SHAPE' });
      expect(tf.memory().numTensors - before).toBe(0);
      fromDisk.model.dispose();
      model.dispose();
    },
  );
});

describe('sampleIds', () => {
  it.each(['grassmann', 'transformer'] as const)(
    '%s: the full-forward tokens, one at a time; stopping early frees the decoder',
    async (kind) => {
      const model = tinyModel({ kind }, 5);
      const prompt = Int32Array.from([3, 9, 27]);
      const opts = { maxTokens: 12, temperature: 0.9, topK: 5 };
      const reference = await sampleIdsFullForward(model, prompt, opts, stream(11));
      const streamed: number[] = [];
      for await (const id of sampleIds(model, prompt, opts, stream(11))) streamed.push(id);
      expect(streamed).toEqual(Array.from(reference));
      const before = tf.memory().numTensors;
      for await (const id of sampleIds(model, prompt, opts, stream(11))) {
        expect(id).toBe(reference[0]);
        break;
      }
      expect(tf.memory().numTensors).toBe(before);
      await expect(sampleIds(model, new Int32Array(0), opts, stream(1)).next()).rejects.toThrow(/no tokens/);
      model.dispose();
    },
  );
});

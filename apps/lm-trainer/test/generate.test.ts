// generateIds (incremental decoding) against the full-forward reference sampler.
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset, type ModelConfig } from '@grassflow/gpu-layers';
import { TrainingRng } from '@grassflow/training';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateIds, generateIdsFullForward, sampleToken, type SampleOptions } from '../src/generate/generate.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** A tiny model with every parameter perturbed by N(0, 0.5), so that sampling is far from uniform. */
function tinyModel(overrides: Partial<ModelConfig>): ReturnType<typeof createModel> {
  const model = createModel(preset('tiny', { vocabSize: 40, maxLen: 10, offsets: [[1, 3], [2]], ...overrides }), {
    seed: 5,
  });
  tf.tidy(() =>
    model
      .namedParams()
      .forEach((p, k) =>
        p.variable.assign(tf.add(p.variable, tf.randomNormal(p.variable.shape, 0, 0.5, 'float32', 77 + k))),
      ),
  );
  return model;
}

const KINDS: Array<[string, Partial<ModelConfig>]> = [
  ['grassmann post-LN', {}],
  ['grassmann pre-LN', { norm: 'pre' }],
  ['transformer DPA', { kind: 'transformer', attention: 'dpa' }],
  ['transformer EA', { kind: 'transformer', attention: 'ea', norm: 'pre' }],
];

describe('generateIds with incremental decoding', () => {
  it.each(KINDS)(
    '%s: the same tokens as the full-forward sampler, within and past maxLen',
    async (_name, overrides) => {
      const model = tinyModel(overrides);
      const prompt = Int32Array.from([3, 17, 8]);
      for (const opts of [
        { maxTokens: 6, temperature: 1, topK: 0, seed: 4 }, // prompt + output < maxLen
        { maxTokens: 25, temperature: 0.9, topK: 10, seed: 9 }, // slides past maxLen = 10 (default slideKeep = maxLen)
        { maxTokens: 15, temperature: 0, topK: 0, seed: 1 }, // greedy
      ] satisfies SampleOptions[]) {
        const fast = await generateIds(model, prompt, opts);
        expect(fast).toHaveLength(opts.maxTokens);
        expect(Array.from(fast)).toEqual(Array.from(await generateIdsFullForward(model, prompt, opts)));
      }
      // a prompt longer than maxLen: both read its last maxLen tokens
      const long = Int32Array.from({ length: 14 }, (_, i) => (i * 7) % 40);
      const opts = { maxTokens: 5, temperature: 1, topK: 0, seed: 2 };
      expect(Array.from(await generateIds(model, long, opts))).toEqual(
        Array.from(await generateIdsFullForward(model, long, opts)),
      );
      const seeds = new Set<string>();
      for (const seed of [1, 2, 3, 4])
        seeds.add((await generateIds(model, prompt, { ...opts, maxTokens: 8, seed })).join(','));
      expect(seeds.size).toBeGreaterThan(1); // the seed matters: the test above compares non-trivial samples
      model.dispose();
    },
  );

  it('slideKeep < maxLen: restarts from the last slideKeep tokens when the table is full (independent emulation)', async () => {
    const model = tinyModel({});
    const maxLen = model.config.maxLen;
    const prompt = Int32Array.from([1, 2, 3, 4]);
    const opts = { maxTokens: 30, temperature: 1, topK: 0, seed: 6, slideKeep: 4 };
    // Emulation with full forward passes: the context starts at `start` and, once it would exceed maxLen,
    // restarts at the last slideKeep tokens.
    const rng = new TrainingRng(opts.seed);
    const ids = Array.from(prompt);
    let start = 0;
    for (let n = 0; n < opts.maxTokens; n++) {
      if (ids.length - start > maxLen) start = ids.length - (n === 0 ? maxLen : opts.slideKeep);
      const ctx = ids.slice(start);
      const row = tf.tidy(
        () =>
          tf
            .slice(model.apply(tf.tensor2d(ctx, [1, ctx.length], 'int32')), [0, ctx.length - 1, 0], [1, 1, -1])
            .dataSync() as Float32Array,
      );
      ids.push(sampleToken(row, opts, rng));
    }
    const got = Array.from(await generateIds(model, prompt, opts));
    expect(got).toEqual(ids.slice(prompt.length));
    // and it differs from the full-window sampler (the context really is shorter after each restart)
    expect(got).not.toEqual(Array.from(await generateIdsFullForward(model, prompt, opts)));
    model.dispose();
  });

  it('checks its inputs and leaks no tensors', async () => {
    const model = tinyModel({});
    const before = tf.memory().numTensors;
    await generateIds(model, Int32Array.from([5]), { maxTokens: 12, temperature: 1, topK: 5, seed: 1 });
    expect(tf.memory().numTensors).toBe(before);
    expect(
      await generateIds(model, Int32Array.from([5]), { maxTokens: 0, temperature: 1, topK: 5, seed: 1 }),
    ).toHaveLength(0);
    await expect(
      generateIds(model, new Int32Array(0), { maxTokens: 3, temperature: 1, topK: 0, seed: 1 }),
    ).rejects.toThrow(/non-empty --prompt/);
    await expect(
      generateIds(model, Int32Array.from([5]), { maxTokens: 3, temperature: 1, topK: 0, seed: 1, slideKeep: 11 }),
    ).rejects.toThrow(/slide-keep.*maxLen = 10/);
    model.dispose();
  });
});

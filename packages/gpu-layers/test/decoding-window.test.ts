// Decoding past the positional table, as the sampler does it: every step's logits equal the full forward pass over the
// decoder's window to 1e-5, and sampleIds gives sampleIdsFullForward's tokens over 3·maxLen tokens, for Grassmann,
// Transformer-DPA and Transformer-EA, with the adaptive head, on cpu and on wasm (native one-row products there).
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  appSlideKeep,
  createDecoder,
  createModel,
  preset,
  sampleIds,
  sampleIdsFullForward,
  type ModelConfig,
  type UniformStream,
} from '@grassflow/gpu-layers';
import { useBackend, type TestBackend } from './helpers.js';

const base = { vocabSize: 60, dModel: 16, dFF: 32, r: 5, nHeads: 2, nLayers: 2, maxLen: 12, dropout: 0.1 };
const adaptive = { head: 'adaptive' as const, cutoffs: [10, 30] };
const CASES: Array<[string, ModelConfig]> = [
  ['grassmann, offsets [1,2,4] and [3]', preset('tiny', { ...base, ...adaptive, offsets: [[1, 2, 4], [3]] })],
  ['transformer-dpa', preset('tiny', { ...base, ...adaptive, kind: 'transformer', attention: 'dpa' })],
  ['transformer-ea', preset('tiny', { ...base, ...adaptive, kind: 'transformer', attention: 'ea' })],
];

/** A model whose every parameter is perturbed by N(0, 0.3): logits far from uniform. */
function randomisedModel(config: ModelConfig): ReturnType<typeof createModel> {
  const model = createModel(config, { seed: 4 });
  tf.tidy(() => {
    model.namedParams().forEach((p, k) => {
      p.variable.assign(tf.add(p.variable, tf.randomNormal(p.variable.shape, 0, 0.3, 'float32', 5000 + k)));
    });
  });
  return model;
}

/** A fixed stream of uniforms (a seeded Prng's kind), restarted for each sampler. */
function stream(seed: number): UniformStream {
  let s = seed;
  return { nextFloat: () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646 };
}

/** Last-position logits [V] of the full forward pass over ctx. */
function fullLast(model: ReturnType<typeof createModel>, ctx: number[]): Float32Array {
  return tf.tidy(() => {
    const logits = model.apply(tf.tensor2d(ctx, [1, ctx.length], 'int32')); // [1, T, V]
    return tf.slice(logits, [0, ctx.length - 1, 0], [1, 1, -1]).dataSync() as Float32Array;
  });
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] as number))), 0);
}

describe.each<TestBackend>(['cpu', 'wasm'])('decoding past maxLen (%s)', (backend) => {
  it.each(CASES)(
    '%s: each step equals the full forward over its window; the sampler equals the reference',
    async (_name, config) => {
      await useBackend(backend);
      const model = randomisedModel(config);
      const L = config.maxLen;
      const ids = Array.from({ length: 3 * L + 5 }, (_, k) => (k * 37 + 11) % config.vocabSize);
      for (const keep of [L, appSlideKeep(L), 1]) {
        // the sampler's window: prime the first token, step while the table has room, else re-prime the last `keep`
        const decoder = createDecoder(model);
        let ctx = [ids[0] as number];
        let logits = decoder.prime(tf.tensor2d(ctx, [1, 1], 'int32'));
        let worst = 0;
        for (let k = 1; k < ids.length; k++) {
          const got = logits.dataSync() as Float32Array;
          logits.dispose();
          worst = Math.max(worst, maxDiff(got, fullLast(model, ctx)));
          const next = ids[k] as number;
          if (decoder.position < L) {
            ctx = [...ctx, next];
            logits = decoder.step([next]);
          } else {
            ctx = [...ctx, next].slice(-keep);
            decoder.reset();
            logits = decoder.prime(tf.tensor2d(ctx, [1, ctx.length], 'int32'));
          }
        }
        logits.dispose();
        decoder.dispose();
        expect(worst).toBeLessThanOrEqual(1e-5);
      }
      // the default slideKeep (maxLen) reproduces the full-forward sampler, here over 3·maxLen tokens
      const prompt = Int32Array.from([3, 9, 27]);
      const opts = { maxTokens: 3 * L, temperature: 0.8, topK: 7 };
      const reference = Array.from(await sampleIdsFullForward(model, prompt, opts, stream(11)));
      const streamed: number[] = [];
      for await (const id of sampleIds(model, prompt, opts, stream(11))) streamed.push(id);
      expect(streamed).toEqual(reference);
      expect(new Set(reference).size).toBeGreaterThan(3); // a real draw, not one token repeated
      model.dispose();
    },
  );
});

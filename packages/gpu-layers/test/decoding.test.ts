// Incremental decoding: step-by-step and primed logits equal the full forward pass; state memory; errors.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createDecoder, createModel, DecoderError, preset, type ModelConfig } from '@grassflow/gpu-layers';
import { decodeInChunks, maxAbsDiff, tokenIds, useBackend, type TestBackend } from './helpers.js';

/** A tiny model whose every parameter (biases and LayerNorm γ, β included) is perturbed by N(0, 0.3). */
function randomisedModel(config: ModelConfig, seed = 3): ReturnType<typeof createModel> {
  const model = createModel(config, { seed });
  tf.tidy(() => {
    model.namedParams().forEach((p, k) => {
      p.variable.assign(tf.add(p.variable, tf.randomNormal(p.variable.shape, 0, 0.3, 'float32', seed * 1000 + k)));
    });
  });
  return model;
}

const base = { vocabSize: 50, dModel: 16, dFF: 32, r: 5, nHeads: 2, nLayers: 2, maxLen: 24, dropout: 0.1 };
const CASES: Array<[string, ModelConfig]> = [
  [
    'grassmann post-LN, offsets [1,2,3] and [2,5]',
    preset('tiny', {
      ...base,
      offsets: [
        [1, 2, 3],
        [2, 5],
      ],
    }),
  ],
  [
    'grassmann pre-LN, offsets [1,4] and [3,3,7]',
    preset('tiny', {
      ...base,
      norm: 'pre',
      offsets: [
        [1, 4],
        [3, 3, 7],
      ],
    }),
  ],
  ['grassmann, one offset a layer, 3 layers', preset('tiny', { ...base, nLayers: 3, offsets: [[1], [8], [2]] })],
  ['transformer DPA post-LN', preset('tiny', { ...base, kind: 'transformer', attention: 'dpa' })],
  ['transformer DPA pre-LN', preset('tiny', { ...base, kind: 'transformer', attention: 'dpa', norm: 'pre' })],
  ['transformer EA post-LN', preset('tiny', { ...base, kind: 'transformer', attention: 'ea' })],
  ['transformer EA pre-LN', preset('tiny', { ...base, kind: 'transformer', attention: 'ea', norm: 'pre' })],
  ['grassmann, adaptive head', preset('tiny', { ...base, head: 'adaptive', cutoffs: [8, 20] })],
  [
    'transformer DPA pre-LN, adaptive head',
    preset('tiny', { ...base, kind: 'transformer', norm: 'pre', head: 'adaptive', cutoffs: [8, 20] }),
  ],
];

describe.each<TestBackend>(['cpu', 'wasm'])('decoding equals the full forward pass (%s)', (backend) => {
  it.each(CASES)(
    '%s: step by step, primed in one call, and in mixed chunks (max abs diff ≤ 1e-5)',
    async (_name, config) => {
      await useBackend(backend);
      const model = randomisedModel(config);
      const L = config.maxLen;
      const ids = tokenIds(2, L, config.vocabSize);
      const full = model.apply(ids); // [B, L, V], dropout off
      // logits far from 0: a real test
      expect(tf.tidy(() => tf.max(tf.abs(full)).dataSync()[0] as number)).toBeGreaterThan(0.5);

      const stepped = decodeInChunks(model, ids, new Array<number>(L).fill(1));
      expect(maxAbsDiff(stepped, full)).toBeLessThanOrEqual(1e-5);
      const primed = decodeInChunks(model, ids, [L]);
      expect(maxAbsDiff(primed, full)).toBeLessThanOrEqual(1e-5);
      const mixed = decodeInChunks(model, ids, [5, 1, 1, 7, 2, 1, 4, 3]); // chunks straddle every ring boundary
      expect(maxAbsDiff(mixed, full)).toBeLessThanOrEqual(1e-5);

      // prime() without options returns the last position's logits [B, V]
      const d = createDecoder(model, { batch: 2 });
      const last = d.prime(tf.slice(ids, [0, 0], [2, 9]));
      expect(last.shape).toEqual([2, config.vocabSize]);
      const want = tf.reshape(tf.slice(full, [0, 8, 0], [2, 1, config.vocabSize]), [2, config.vocabSize]);
      expect(maxAbsDiff(last, want)).toBeLessThanOrEqual(1e-5);
      tf.dispose([stepped, primed, mixed, last, want, full, ids]);
      d.dispose();
      model.dispose();
    },
  );
});

describe('decoding state', () => {
  it('Grassmann: the ring buffer holds B·max(Δ)·r floats per layer whatever the position; no tensor grows', async () => {
    await useBackend('cpu');
    const config = preset('tiny', {
      ...base,
      maxLen: 64,
      offsets: [
        [1, 2, 3],
        [2, 5],
      ],
    });
    const model = randomisedModel(config);
    const decoder = createDecoder(model, { batch: 3 });
    const ids = tokenIds(3, 64, config.vocabSize);
    const bytesAt: number[] = [];
    const tensorsAt: number[] = [];
    for (let t = 0; t < 61; t++) {
      const col = tf.slice(ids, [0, t], [3, 1]);
      decoder.step(col).dispose();
      col.dispose();
      bytesAt[decoder.position] = decoder.stateBytes();
      tensorsAt[decoder.position] = tf.memory().numTensors;
    }
    expect(bytesAt[2]).toBe((2 + 2) * 3 * 5 * 4); // before the ring fills: min(t, maxΔ) slots per layer
    expect(bytesAt[20]).toBe((3 + 5) * 3 * 5 * 4); // 3 + 5 slots of [B = 3, r = 5] float32
    expect(bytesAt[60]).toBe(bytesAt[20]);
    expect(tensorsAt[60]).toBe(tensorsAt[20]);
    decoder.reset();
    expect(decoder.stateBytes()).toBe(0);
    expect(decoder.position).toBe(0);
    decoder.dispose();
    ids.dispose();
    model.dispose();
  });

  it('Transformer: the key/value cache holds 2·B·t·d floats per layer, linear in t', async () => {
    await useBackend('cpu');
    const config = preset('tiny', { ...base, kind: 'transformer', maxLen: 64 });
    const model = randomisedModel(config);
    const decoder = createDecoder(model, { batch: 2 });
    expect(decoder.stateKind).toBe('kv-cache');
    const ids = tokenIds(2, 64, config.vocabSize);
    decoder.prime(tf.slice(ids, [0, 0], [2, 20])).dispose();
    expect(decoder.stateBytes()).toBe(2 * 2 * 2 * 20 * 16 * 4); // layers · (K, V) · B · t · d · 4 bytes
    for (let t = 20; t < 60; t++) decoder.step([t % config.vocabSize, (3 * t) % config.vocabSize]).dispose();
    expect(decoder.stateBytes()).toBe(2 * 2 * 2 * 60 * 16 * 4);
    decoder.dispose();
    ids.dispose();
    model.dispose();
  });

  it('no tensor leaks: after dispose only the model and the inputs remain', async () => {
    await useBackend('cpu');
    for (const kind of ['grassmann', 'transformer'] as const) {
      const model = randomisedModel(preset('tiny', { ...base, kind }));
      const before = tf.memory().numTensors;
      const decoder = createDecoder(model);
      decoder.prime(tokenIds(1, 6, base.vocabSize)).dispose();
      for (let t = 0; t < 5; t++) decoder.step([t]).dispose();
      decoder.dispose();
      expect(tf.memory().numTensors - before).toBe(1); // the tokenIds tensor above
      model.dispose();
    }
  });
});

describe('decoding errors', () => {
  it('past maxLen: a DecoderError that says what to do; reset() starts over at position 0', async () => {
    await useBackend('cpu');
    const config = preset('tiny', { ...base, maxLen: 8, offsets: [[1, 2], [3]] });
    const model = randomisedModel(config);
    const decoder = createDecoder(model);
    const ids = tokenIds(1, 8, config.vocabSize);
    const first = decoder.prime(ids);
    const err = (() => {
      try {
        decoder.step([1]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(DecoderError);
    expect((err as DecoderError).code).toBe('POSITION_LIMIT');
    expect((err as DecoderError).message).toMatch(/maxLen = 8.*reset\(\)/);
    expect(decoder.position).toBe(8); // the failed call changed nothing
    expect(() => decoder.prime(tokenIds(1, 2, config.vocabSize))).toThrow(/positional table/);
    decoder.reset();
    const again = decoder.prime(ids);
    expect(maxAbsDiff(again, first)).toBe(0);
    tf.dispose([first, again, ids]);
    decoder.dispose();
    model.dispose();
  });

  it('bad ids, wrong batch, disposed decoder', async () => {
    await useBackend('cpu');
    const model = randomisedModel(preset('tiny', { ...base }));
    const decoder = createDecoder(model, { batch: 2 });
    expect(() => decoder.step([1])).toThrow(/2 integer token id/);
    expect(() => decoder.step(tf.tensor1d([1, 2], 'float32'))).toThrow(/int32/);
    expect(() => decoder.step(tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32'))).toThrow(/prime\(\)/);
    expect(() => decoder.prime(tf.tensor2d([1, 2, 3], [3, 1], 'int32'))).toThrow(/\[2, T\]/);
    expect(() => decoder.step([1, 999])).toThrow(/outside \[0, vocabSize = 50\)/);
    expect(decoder.position).toBe(0);
    expect(() => createDecoder(model, { batch: 0 })).toThrow(DecoderError);
    decoder.dispose();
    expect(() => decoder.step([1, 2])).toThrow(/disposed/);
    model.dispose();
  });
});

import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { TrainingRng } from '@grassflow/training';
import { beforeAll, describe, expect, it } from 'vitest';
import { wikitextForWordPiece } from '../src/shared/corpus.js';
import { sampleToken } from '../src/generate/generate.js';
import { evaluatePerplexity } from '@grassflow/training';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('evaluatePerplexity', () => {
  it.each([
    ['tied head', preset('tiny', { vocabSize: 50, maxLen: 8 })],
    ['adaptive head', preset('tiny', { vocabSize: 50, maxLen: 8, head: 'adaptive', cutoffs: [5, 20] })],
  ])(
    '%s: equals exp of the mean token NLL computed independently from the logits (every target once)',
    async (_, config) => {
      const model = createModel(config, { seed: 11 });
      // a vocabulary order far from the identity (ranks = ids reversed): the head's clusters are ranks, not ids
      model.adaptiveHead?.setVocabOrder(Int32Array.from({ length: 50 }, (_, i) => 49 - i));
      const rng = new TrainingRng(2);
      const ids = Int32Array.from({ length: 61 }, () => rng.nextUint32() % 50); // 60 targets: 7 windows of 8 + one of 4
      const seen: Array<[number, number]> = [];
      const r = await evaluatePerplexity(model, ids, {
        seqLen: 8,
        batch: 3,
        onProgress: (done, total) => seen.push([done, total]),
      });
      expect(seen).toEqual([
        [24, 60],
        [48, 60],
        [60, 60],
      ]); // after each batch of 3 windows
      // independent: one forward pass per non-overlapping window, log-softmax in float64 by hand
      let sum = 0;
      let n = 0;
      for (let start = 0; start + 1 < ids.length; start += 8) {
        const x = ids.subarray(start, Math.min(start + 8, ids.length - 1));
        const logits = tf
          .tidy(() => model.apply(tf.tensor2d(Array.from(x), [1, x.length], 'int32')))
          .arraySync()[0] as number[][];
        x.forEach((_, t) => {
          const row = logits[t] as number[];
          const max = Math.max(...row);
          const lse = max + Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0));
          sum += lse - (row[ids[start + t + 1] as number] as number);
          n += 1;
        });
      }
      expect(r.tokens).toBe(60);
      expect(n).toBe(60);
      expect(r.nll).toBeCloseTo(sum / n, 5);
      expect(r.ppl).toBeCloseTo(Math.exp(sum / n), 3);
      model.dispose();
    },
  );
});

describe('sampleToken', () => {
  it('is greedy at temperature 0, stays inside the top k, and follows the seed', () => {
    const logits = Float32Array.from([0.1, 3, 2.9, -1, 0]);
    expect(sampleToken(logits, { temperature: 0, topK: 0 }, new TrainingRng(1))).toBe(1);
    const rng = new TrainingRng(5);
    const seen = new Set(Array.from({ length: 200 }, () => sampleToken(logits, { temperature: 1, topK: 2 }, rng)));
    expect([...seen].sort()).toEqual([1, 2]);
    const draw = (seed: number) =>
      Array.from(
        { length: 20 },
        (
          (r) => () =>
            sampleToken(logits, { temperature: 2, topK: 0 }, r)
        )(new TrainingRng(seed)),
      );
    expect(draw(9)).toEqual(draw(9));
  });
});

describe('wikitextForWordPiece', () => {
  it('maps <unk> to [UNK] and joins the @-@ / @,@ / @.@ markers', () => {
    expect(wikitextForWordPiece(' the <unk> of 1 @,@ 000 @-@ year @.@ 5 \n')).toBe(' the [UNK] of 1,000-year.5 \n');
  });
});

// Token ids enter training and evaluation checked: an id outside the vocabulary is named, not left to the gather.
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluatePerplexity, LmTrainTask } from '@grassflow/training';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('ids outside the vocabulary', () => {
  const model = createModel(preset('tiny', { vocabSize: 50 }), { seed: 1 });
  const ids = Int32Array.from({ length: 200 }, (_, i) => i % 50);
  const bad = Int32Array.from(ids);
  bad[123] = 77;

  it('evaluatePerplexity names the id and its position', async () => {
    await expect(evaluatePerplexity(model, bad, { seqLen: 16, batch: 4 })).rejects.toThrow(
      'token id 77 at flat position 123 is outside [0, vocabSize = 50)',
    );
    expect((await evaluatePerplexity(model, ids, { seqLen: 16, batch: 4 })).tokens).toBe(199);
  });

  it('LmTrainTask refuses them in the training and the validation ids', () => {
    const opts = { seqLen: 16, batch: 4, seed: 1 };
    expect(() => new LmTrainTask(model, bad, ids, opts)).toThrow('token id 77 at flat position 123');
    expect(() => new LmTrainTask(model, ids, Int32Array.from([1, -2]), opts)).toThrow('token id -2 at flat position 1');
  });
});

it("a forward pass of a bad id on wasm: the gather's error says what the index is and what to do", async () => {
  const tf = await import('@tensorflow/tfjs-core');
  const model = createModel(preset('tiny', { vocabSize: 50 }), { seed: 1 });
  expect(() => tf.tidy(() => model.apply(tf.tensor2d([[3, 77]], [1, 2], 'int32')))).toThrow(
    'GatherV2: the index value 77 is not in [0, 49] (as a token id: outside a vocabulary of 50; check ids where ' +
      'they enter with checkTokenIds)',
  );
  model.dispose();
});

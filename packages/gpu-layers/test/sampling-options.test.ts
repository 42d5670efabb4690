// The samplers refuse options that would otherwise run silently and do something else (from plain JavaScript).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createModel,
  DecoderError,
  initBackend,
  preset,
  sampleIds,
  sampleIdsFullForward,
  type SamplingOptions,
} from '@grassflow/gpu-layers';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

const stream = () => ({ nextFloat: () => 0.5 });
const OK: SamplingOptions = { maxTokens: 3, temperature: 1, topK: 0 };

/** Every id sampleIds yields for `opts` (the options as plain JavaScript would pass them). */
async function drain(opts: object): Promise<number[]> {
  const model = createModel(preset('tiny', { vocabSize: 20 }), { seed: 1 });
  try {
    const ids: number[] = [];
    for await (const id of sampleIds(model, Int32Array.from([1, 2]), opts as unknown as SamplingOptions, stream()))
      ids.push(id);
    return ids;
  } finally {
    model.dispose();
  }
}

describe('sampling options', () => {
  it.each([
    [{ maxTokens: -1 }, 'maxTokens must be an integer >= 0 (the tokens to generate), got -1'],
    [{ maxTokens: 2.5 }, 'maxTokens must be an integer >= 0 (the tokens to generate), got 2.5'],
    [{ temperature: 'hot' }, 'temperature must be a number >= 0 (0: greedy), got "hot"'],
    [{ temperature: Number.NaN }, 'temperature must be a number >= 0 (0: greedy), got NaN'],
    [{ topK: -5 }, 'topK must be an integer >= 0 (0: all tokens), got -5'],
  ])('%o is refused with one line that names the option', async (bad, message) => {
    const err = await drain({ ...OK, ...bad }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DecoderError);
    expect((err as Error).message).toBe(message);
  });

  it('the full-forward sampler checks them too; maxTokens 0 yields nothing', async () => {
    const model = createModel(preset('tiny', { vocabSize: 20 }), { seed: 1 });
    const bad = { ...OK, temperature: 'hot' } as unknown as SamplingOptions;
    await expect(sampleIdsFullForward(model, Int32Array.from([1]), bad, stream())).rejects.toThrow(DecoderError);
    model.dispose();
    expect(await drain({ ...OK, maxTokens: 0 })).toEqual([]);
    expect(await drain(OK)).toHaveLength(3);
  });
});

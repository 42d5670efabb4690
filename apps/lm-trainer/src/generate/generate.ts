// Sampling from a language model for `grassflow-lm generate`: @grassflow/gpu-layers' sampler (temperature, top-k,
// incremental decoding) on the seeded stream of a TrainingRng, with the command's flag names in its errors.
import {
  sampleIds,
  sampleIdsFullForward,
  sampleToken as sampleFrom,
  type LanguageModel,
  type SamplingOptions,
} from '@grassflow/gpu-layers';
import { TrainingRng, UsageError } from '@grassflow/training';

export interface SampleOptions extends SamplingOptions {
  maxTokens: number;
  temperature: number;
  topK: number;
  seed: number;
  slideKeep?: number;
}

/** Pick one token from logits [V] (gpu-layers' sampleToken). */
export function sampleToken(
  logits: Float32Array,
  opts: Pick<SampleOptions, 'temperature' | 'topK'>,
  rng: TrainingRng,
): number {
  return sampleFrom(logits, opts, rng);
}

function checkFlags(model: LanguageModel, prompt: Int32Array, opts: SampleOptions): void {
  if (prompt.length === 0) throw new UsageError('the prompt encodes to no tokens: give a non-empty --prompt', 'prompt');
  const maxLen = model.config.maxLen;
  const keep = opts.slideKeep ?? maxLen;
  if (!Number.isInteger(keep) || keep < 1 || keep > maxLen) {
    throw new UsageError(`--slide-keep must be an integer in [1, maxLen = ${maxLen}], got ${keep}`, 'slide-keep');
  }
}

/** The reference sampler (one full forward pass per token): gpu-layers' sampleIdsFullForward with the seed's stream. */
export async function generateIdsFullForward(
  model: LanguageModel,
  prompt: Int32Array,
  opts: SampleOptions,
): Promise<Int32Array> {
  checkFlags(model, prompt, opts);
  return sampleIdsFullForward(model, prompt, opts, new TrainingRng(opts.seed));
}

/**
 * Continue `prompt` by `maxTokens` tokens with incremental decoding (gpu-layers' sampleIds, the stream of
 * `new TrainingRng(seed)`): same seed → the same tokens as {@link generateIdsFullForward}, and as the playground page.
 */
export async function generateIds(model: LanguageModel, prompt: Int32Array, opts: SampleOptions): Promise<Int32Array> {
  const out: number[] = [];
  for await (const id of streamIds(model, prompt, opts)) out.push(id);
  return Int32Array.from(out);
}

/** {@link generateIds} one id at a time, as each is sampled. */
export function streamIds(
  model: LanguageModel,
  prompt: Int32Array,
  opts: SampleOptions,
): AsyncGenerator<number, void, undefined> {
  checkFlags(model, prompt, opts);
  return sampleIds(model, prompt, opts, new TrainingRng(opts.seed));
}

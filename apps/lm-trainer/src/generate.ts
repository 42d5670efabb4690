// Sampling from a language model: temperature and top-k, deterministic for a seed.
import * as tf from '@tensorflow/tfjs-core';
import type { LanguageModel } from '@grassflow/gpu-layers';
import { TrainingRng } from '@grassflow/training';

export interface SampleOptions {
  maxTokens: number;
  /** 0: greedy (argmax); otherwise logits / temperature. */
  temperature: number;
  /** Keep the k most likely tokens (0: all). */
  topK: number;
  seed: number;
}

/** Pick one token from logits [V] (float64 softmax over the top k of logits/T; ties broken by lower id). */
export function sampleToken(logits: Float32Array, opts: Pick<SampleOptions, 'temperature' | 'topK'>, rng: TrainingRng): number {
  const V = logits.length;
  if (opts.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if ((logits[i] as number) > (logits[best] as number)) best = i;
    return best;
  }
  let ids = Array.from({ length: V }, (_, i) => i);
  if (opts.topK > 0 && opts.topK < V) {
    ids.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
    ids = ids.slice(0, opts.topK);
  }
  const max = Math.max(...ids.map((i) => logits[i] as number));
  const w = ids.map((i) => Math.exp(((logits[i] as number) - max) / opts.temperature));
  const total = w.reduce((a, b) => a + b, 0);
  let u = rng.nextFloat() * total;
  for (let k = 0; k < ids.length; k++) {
    u -= w[k] as number;
    if (u < 0) return ids[k] as number;
  }
  return ids[ids.length - 1] as number;
}

/**
 * Continue `prompt` by `maxTokens` tokens: each step runs the full forward pass over the last ≤ maxLen
 * tokens and samples from the last position's logits (incremental decoding comes with issue 7).
 */
export function generateIds(model: LanguageModel, prompt: Int32Array, opts: SampleOptions): Int32Array {
  if (prompt.length === 0) throw new RangeError('the prompt encodes to no tokens: give a non-empty --prompt');
  const rng = new TrainingRng(opts.seed);
  const ids = Array.from(prompt);
  const maxLen = model.config.maxLen;
  for (let n = 0; n < opts.maxTokens; n++) {
    const ctx = ids.slice(-maxLen);
    const last = tf.tidy(() => {
      const logits = model.apply(tf.tensor2d(ctx, [1, ctx.length], 'int32'), { training: false }); // [1, L, V]
      return tf.slice(logits, [0, ctx.length - 1, 0], [1, 1, -1]); // [1, 1, V]
    });
    const values = last.dataSync() as Float32Array;
    last.dispose();
    ids.push(sampleToken(values, opts, rng));
  }
  return Int32Array.from(ids.slice(prompt.length));
}

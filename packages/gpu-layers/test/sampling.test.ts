// sampleToken: top-k by a heap equals top-k by a full sort (ties by lower id), the same draw picks the same token,
// and top-k 0 works at any vocabulary size.
import { describe, expect, it } from 'vitest';
import { sampleToken, topKIds } from '@grassflow/gpu-layers';

/** The definition: every id sorted by (logit desc, id asc), the first k. */
function topKBySort(logits: Float32Array, k: number): number[] {
  const ids = Array.from({ length: logits.length }, (_, i) => i);
  ids.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
  return ids.slice(0, k);
}

/** A stream of fixed draws. */
const draws = (us: number[]) => {
  let i = 0;
  return { nextFloat: () => us[i++ % us.length] as number };
};

function randomLogits(V: number, seed: number, levels?: number): Float32Array {
  let s = seed;
  return Float32Array.from({ length: V }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    const u = s / 2147483648;
    return levels === undefined ? 8 * u - 4 : Math.floor(u * levels); // few levels: many ties
  });
}

describe('sampleToken', () => {
  it('topKIds equals the first k of a full sort, ties broken by the lower id', () => {
    for (const [V, levels] of [
      [1000, undefined],
      [1000, 7],
      [33, 2],
    ] as const)
      for (const k of [1, 2, 5, 40, V - 1, V]) {
        const logits = randomLogits(V, 11 + k, levels);
        expect(Array.from(topKIds(logits, k)), `V ${V} k ${k}`).toEqual(topKBySort(logits, k));
      }
  });

  it('a draw u picks the id where the cumulative weight of the best-first top k passes u·total', () => {
    const logits = Float32Array.from([0, 3, 1, 3, 2]); // ranks: 1, 3 (tie, lower id first), 4, 2, 0
    const w = [3, 3, 2, 1].map((x) => Math.exp(x - 3)); // top 4 at T = 1
    const total = w.reduce((a, b) => a + b, 0);
    const at = (u: number) => sampleToken(logits, { temperature: 1, topK: 4 }, draws([u]));
    expect(at(0)).toBe(1);
    expect(at((w[0] as number) / total + 1e-9)).toBe(3);
    expect(at(((w[0] as number) + (w[1] as number) + (w[2] as number)) / total + 1e-9)).toBe(2);
    expect(at(0.999999)).toBe(2);
    expect(sampleToken(logits, { temperature: 0, topK: 4 }, draws([0.5]))).toBe(1); // greedy: the first maximum
  });

  it('top-k 0 samples over every id, also past the call-stack limit of a spread (V = 300,000)', () => {
    const logits = new Float32Array(300_000).fill(-50);
    logits[123_456] = 50;
    expect(sampleToken(logits, { temperature: 1, topK: 0 }, draws([0.5]))).toBe(123_456);
  });
});

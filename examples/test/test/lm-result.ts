import { expect } from 'vitest';

/** What node-esm, commonjs and browser print: 20 Adam steps on one random batch, then 8 sampled ids of 64. */
export function expectTrainedAndSampled(result: Record<string, unknown>): void {
  expect(typeof result['backend']).toBe('string');
  const first = result['firstLoss'] as number;
  const last = result['lastLoss'] as number;
  expect(first).toBeGreaterThan(3.5); // ≈ ln 64 ≈ 4.16 at init
  expect(last).toBeLessThan(first - 0.5); // it memorizes the batch
  const generated = result['generated'] as number[];
  expect(generated).toHaveLength(8);
  for (const id of generated) expect(Number.isInteger(id) && id >= 0 && id < 64, String(id)).toBe(true);
}

import { describe, expect, it } from 'vitest';
import { DatasetError, LAGGED_SUM_LAGS, SyntheticTask } from '@grassflow/datasets';

/** Independent check of the lagged-sum rule: x_t = (1 + Σ x_{t−a}) mod V for t ≥ max lag, free before. */
function checkLaggedSum(tokens: Int32Array, determined: Uint8Array, lags: readonly number[], V: number): void {
  const A = Math.max(...lags);
  for (let t = 0; t < tokens.length; t++) {
    expect(tokens[t]).toBeGreaterThanOrEqual(0);
    expect(tokens[t]).toBeLessThan(V);
    if (t < A) {
      expect(determined[t]).toBe(0);
      continue;
    }
    if (determined[t] === 1) {
      const want = lags.reduce((s, a) => s + (tokens[t - a] as number), 1) % V;
      expect(tokens[t]).toBe(want);
    }
  }
}

/** Independent check of recall: a determined position holds the value bound to the key just before it. */
function checkRecall(tokens: Int32Array, determined: Uint8Array, pairs: number, V: number): void {
  const K = Math.floor(V / 2);
  const bound = new Map<number, number>();
  for (let i = 0; i < pairs; i++) {
    const k = tokens[2 * i] as number;
    const v = tokens[2 * i + 1] as number;
    expect(k).toBeLessThan(K);
    expect(v).toBeGreaterThanOrEqual(K);
    expect(bound.has(k)).toBe(false); // keys distinct
    bound.set(k, v);
    expect(determined[2 * i]).toBe(0);
    expect(determined[2 * i + 1]).toBe(0);
  }
  let answers = 0;
  for (let t = 2 * pairs; t < tokens.length; t++) {
    const isValuePos = (t - 2 * pairs) % 2 === 1;
    expect(determined[t]).toBe(isValuePos ? 1 : 0);
    if (isValuePos) {
      expect(tokens[t]).toBe(bound.get(tokens[t - 1] as number));
      answers++;
    } else {
      expect(bound.has(tokens[t] as number)).toBe(true);
    }
  }
  expect(answers).toBe(Math.floor((tokens.length - 2 * pairs) / 2));
}

describe('synthetic ladder', () => {
  it.each([1, 2, 3, 4, 5])('lagged-sum level %i follows the rule (independent check)', (level) => {
    const task = new SyntheticTask({ family: 'lagged-sum', level, seqLen: 64, seed: 5, vocabSize: 11 });
    expect(task.lags).toEqual(LAGGED_SUM_LAGS.slice(0, level));
    for (let i = 0; i < 20; i++) {
      const s = task.sequence(i);
      checkLaggedSum(s.tokens, s.determined, task.lags, 11);
      expect(s.determined.reduce((a, v) => a + v, 0)).toBe(65 - Math.max(...task.lags));
    }
  });

  it('lagged-sum level 4 reaches 17 positions back (beyond a 16-token window)', () => {
    expect(Math.max(...new SyntheticTask({ family: 'lagged-sum', level: 4, seqLen: 32, seed: 0 }).lags)).toBe(17);
  });

  it('lagged-sum noise replaces some rule positions, which are then not marked determined', () => {
    const task = new SyntheticTask({ family: 'lagged-sum', level: 3, seqLen: 256, seed: 2, noise: 0.3 });
    let free = 0;
    for (let i = 0; i < 10; i++) {
      const s = task.sequence(i);
      checkLaggedSum(s.tokens, s.determined, task.lags, 16);
      for (let t = 7; t < 257; t++) free += 1 - (s.determined[t] as number);
    }
    expect(free / 2500).toBeGreaterThan(0.2);
    expect(free / 2500).toBeLessThan(0.4);
  });

  it.each([1, 2, 3, 4, 5])(
    'recall level %i binds 2^level keys and answers every query (independent check)',
    (level) => {
      const task = new SyntheticTask({ family: 'recall', level, seqLen: 96, seed: 9 });
      expect(task.numPairs).toBe(2 ** level);
      for (let i = 0; i < 20; i++) {
        const s = task.sequence(i);
        checkRecall(s.tokens, s.determined, task.numPairs, 64);
      }
    },
  );

  it('is deterministic for a seed, random-access, and differs across seeds and levels', () => {
    const a = new SyntheticTask({ family: 'recall', level: 3, seqLen: 40, seed: 1 });
    const b = new SyntheticTask({ family: 'recall', level: 3, seqLen: 40, seed: 1 });
    const c = new SyntheticTask({ family: 'recall', level: 3, seqLen: 40, seed: 2 });
    expect([...a.sequence(7).tokens]).toEqual([...b.sequence(7).tokens]);
    expect([...a.sequence(7).tokens]).not.toEqual([...c.sequence(7).tokens]);
    expect([...a.sequence(7).tokens]).not.toEqual([...a.sequence(8).tokens]);
    const batch = a.batch(5, 4);
    expect(batch.shape).toEqual([4, 40]);
    const s7 = a.sequence(7);
    expect([...batch.x.subarray(80, 120)]).toEqual([...s7.tokens.subarray(0, 40)]);
    expect([...batch.y.subarray(80, 120)]).toEqual([...s7.tokens.subarray(1, 41)]);
    expect([...batch.mask.subarray(80, 120)]).toEqual([...s7.determined.subarray(1, 41)]);
    expect(batch.targetCount).toBe(batch.mask.reduce((s, v) => s + v, 0));
  });

  it('rejects impossible settings with a typed error', () => {
    expect(() => new SyntheticTask({ family: 'recall', level: 6, seqLen: 200, seed: 0 })).toThrow(/raise vocabSize/);
    expect(() => new SyntheticTask({ family: 'lagged-sum', level: 5, seqLen: 20, seed: 0 })).toThrow(DatasetError);
    expect(() => new SyntheticTask({ family: 'recall', level: 4, seqLen: 20, seed: 0 })).toThrow(/seqLen/);
  });
});

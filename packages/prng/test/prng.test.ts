import { describe, expect, it } from 'vitest';
import { epochPermutation, mixSeed, permutation, Prng } from '@grassflow/prng';

describe('Prng (xoshiro128**)', () => {
  it('matches the reference stream for state [1, 2, 3, 4]', () => {
    // worked by hand from the reference C code: rotl(s1·5, 7)·9, then the state update
    const p = new Prng([1, 2, 3, 4]);
    expect([p.nextUint32(), p.nextUint32(), p.nextUint32()]).toEqual([11520, 0, 5927040]);
  });

  it('is deterministic per seed, differs across seeds, and resumes from its state', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const sa = Array.from({ length: 8 }, () => a.nextUint32());
    expect(Array.from({ length: 8 }, () => b.nextUint32())).toEqual(sa);
    expect(Array.from({ length: 8 }, () => c.nextUint32())).not.toEqual(sa);
    const saved = a.state;
    const next = Array.from({ length: 5 }, () => a.nextUint32());
    const resumed = new Prng(saved);
    expect(Array.from({ length: 5 }, () => resumed.nextUint32())).toEqual(next);
  });

  it('nextInt stays in range and is roughly uniform', () => {
    const p = new Prng(7);
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 60_000; i++) {
      const v = p.nextInt(6);
      counts[v] = (counts[v] as number) + 1;
    }
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500); // > 5 standard deviations
    expect(() => p.nextInt(0)).toThrow(RangeError);
  });

  it('permutation is a permutation; epoch permutations are deterministic and differ by epoch and seed', () => {
    const p = permutation(1000, new Prng(1));
    expect([...p].sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect([...epochPermutation(100, 5, 0)]).toEqual([...epochPermutation(100, 5, 0)]);
    expect([...epochPermutation(100, 5, 1)]).not.toEqual([...epochPermutation(100, 5, 0)]);
    expect([...epochPermutation(100, 6, 0)]).not.toEqual([...epochPermutation(100, 5, 0)]);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
  });
});

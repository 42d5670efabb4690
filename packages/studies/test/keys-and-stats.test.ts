// Run keys and the small-sample statistics of a study, against hand-computed values (moved with the code from
// apps/lm-trainer's study-logic tests; the config, tooling/fixtures/resolved-run-config.json, is a grassflow-lm run's,
// as the keys of its ledgers are taken of).
import { describe, expect, it } from 'vitest';
import { canonicalJson, pairedDifferences, runKey, spread, tQuantile975 } from '@grassflow/studies';
import RUN_CONFIG from '../../../tooling/fixtures/resolved-run-config.json';

/** A resolved config as grassflow-lm writes it (the shape its ledgers' keys are taken of). */
interface Config {
  modelKind: string;
  tokenizer: string;
  model: Record<string, unknown>;
  training: Record<string, unknown> & { seed: number };
}

const config = (over: Partial<Config['training']> = {}, kind = 'grassmann'): Config => ({
  modelKind: kind,
  tokenizer: RUN_CONFIG.tokenizer,
  model: RUN_CONFIG.models[kind === 'grassmann' ? 'grassmann' : 'transformer'],
  training: { ...RUN_CONFIG.training, ...over },
});

describe('run key', () => {
  it('same config → same key; field order does not matter; a changed field → a new key', () => {
    const a = config();
    const reordered = JSON.parse(canonicalJson(a)) as Config; // keys sorted: another order
    expect(Object.keys(reordered)).not.toEqual(Object.keys(a));
    expect(runKey(reordered)).toBe(runKey(a));
    expect(runKey({ ...a, training: { ...a.training } })).toBe(runKey(a));
    expect(runKey(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(runKey(config({ seed: 2 }))).not.toBe(runKey(a));
    expect(runKey(config({ length: { steps: 7 } }))).not.toBe(runKey(a));
    expect(runKey({ ...a, model: { ...a.model, norm: 'pre' } })).not.toBe(runKey(a));
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }] })).toBe('{"a":[{"d":2}],"b":1}');
  });
});

describe('statistics', () => {
  it('mean, sd (n − 1) and the 95% t-interval of [10, 12, 14]', () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(2)).toBe(4.303);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(1000)).toBeGreaterThan(1.96);
    expect(tQuantile975(1000)).toBeLessThan(1.98);
    const s = spread([10, 12, 14]);
    expect(s.n).toBe(3);
    expect(s.mean).toBe(12);
    expect(s.sd).toBeCloseTo(2, 12); // √((4 + 0 + 4) / 2)
    expect(s.lo).toBeCloseTo(7.031323583, 8); // 12 − 4.303·2/√3
    expect(s.hi).toBeCloseTo(16.968676417, 8);
    expect(spread([5])).toEqual({ n: 1, mean: 5, sd: null, lo: null, hi: null });
  });

  it('paired differences over the seeds both sides have', () => {
    const a = new Map([
      [1, 100],
      [2, 110],
      [3, 90],
    ]);
    const b = new Map([
      [3, 92],
      [1, 95],
      [2, 100],
      [4, 80],
    ]);
    const p = pairedDifferences(a, b);
    expect(p.seeds).toEqual([1, 2, 3]);
    expect(p.diffs).toEqual([5, 10, -2]);
    expect(p.spread?.mean).toBeCloseTo(4.333333333, 8);
    expect(p.spread?.sd).toBeCloseTo(6.027713773, 8);
    expect(p.spread?.lo).toBeCloseTo(-10.641546303, 8);
    expect(p.spread?.hi).toBeCloseTo(19.308212969, 8);
  });
});

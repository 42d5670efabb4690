// A study run with --early-stop end to end (tiny, WikiText-2): it stops by the rule, its record says so, and the
// held-out scores are of checkpoints/best, in non-overlapping and sliding windows, with test's per-window sums.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, metrics, tmp } from './helpers';
import type { LedgerRecord } from '../src/study/ledger';
import { decodeWindowNll } from '../src/study/windows';

describe.skipIf(DATA_DIR === undefined)('study run with --early-stop (tiny; needs GRASSFLOW_DATA_DIR)', () => {
  it('stops at the evaluation the rule fires on and scores checkpoints/best', () => {
    const root = tmp();
    const study = join(root, 'early.json');
    // lr 1e-6: validation hardly moves, so the rule fires at its first chance (the 5th evaluation, step 10)
    const base = { preset: 'tiny', batch: 8, 'eval-tokens': 256, warmup: 2, lr: 1e-6, 'eval-every': 2 };
    writeFileSync(study, JSON.stringify({ name: 'early', base, runs: [{ steps: 60, 'early-stop': true }] }));
    const r = cli(['study', 'run', study, '--out', root, '--runs', join(root, 'runs'), '--quiet'], 540_000);
    expect(r.code, r.stderr).toBe(0);
    const rec = JSON.parse(readFileSync(join(root, 'ledger.jsonl'), 'utf8').trim()) as LedgerRecord;
    expect(rec.config.training.earlyStop).toEqual({ minImprovement: 0.005, window: 0.2, minEvals: 5 });
    expect(rec.stop).toMatchObject({ reason: 'early-stop', step: 10, decision: { step: 10 } });
    expect(rec.curve.map(([t]) => t / 128)).toEqual([2, 4, 6, 8, 10]);
    expect(rec.scored).toEqual({
      checkpoint: 'best',
      step: rec.bestStep,
      why: 'the run stopped early: the checkpoint best on valid',
    });
    const m = metrics(join(root, 'runs', rec.key));
    expect(m.filter((x) => x['type'] === 'early_stop').map((x) => x['step'])).toEqual([10]);
    const test = rec.heldOut?.test;
    expect(test?.sliding?.stride).toBe(16); // the tiny preset's windows are shorter than 64: stride = L
    expect(test?.windows?.bandEdges).toEqual([1, 8, 16]);
    const sums = decodeWindowNll(test!.windows!);
    expect(test!.windows!.windows).toBe(Math.ceil(test!.tokens / 16));
    expect(sums.reduce((s, x) => s + x, 0) / test!.tokens).toBeCloseTo(test!.nll, 3);
  }, 560_000);
});

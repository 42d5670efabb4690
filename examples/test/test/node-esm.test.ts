// examples/node-esm: compiled by tsc under strict with module nodenext (its build both checks and emits), then run.
import { describe, expect, it } from 'vitest';
import { expectTrainedAndSampled } from './lm-result.js';
import { lastJson, pnpmRun, tscErrors } from './run.js';

describe('examples/node-esm', () => {
  it('compiles (strict, nodenext), trains, saves and loads a checkpoint, and samples', async () => {
    await pnpmRun('node-esm', 'build');
    const result = lastJson(await pnpmRun('node-esm', 'start'));
    expectTrainedAndSampled(result);
    expect(result['step']).toBe(20); // the checkpoint's extra came back
    expect(result['maxDiff']).toBe(0); // the loaded model computes the same logits
  });

  it("needs skipLibCheck only for tfjs's own .d.ts: without it, every error is inside @tensorflow/*", async () => {
    const errors = await tscErrors('node-esm', ['--noEmit', '-p', 'tsconfig.json', '--skipLibCheck', 'false']);
    // if tfjs ever passes strict, this fails: then drop skipLibCheck from the examples and docs/gpu-layers.md
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.filter((l) => !/node_modules\/(\.pnpm\/)?@tensorflow[+/]/.test(l))).toEqual([]);
  });
});

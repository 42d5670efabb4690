// examples/commonjs: plain CommonJS checked by tsc (checkJs, strict), then run with node.
import { describe, expect, it } from 'vitest';
import { expectTrainedAndSampled } from './lm-result.js';
import { lastJson, pnpmRun } from './run.js';

describe('examples/commonjs', () => {
  it('type-checks (checkJs, strict), trains, saves and loads a checkpoint, and samples', async () => {
    await pnpmRun('commonjs', 'typecheck');
    const result = lastJson(await pnpmRun('commonjs', 'start'));
    expectTrainedAndSampled(result);
    expect(result['step']).toBe(20);
    expect(result['maxDiff']).toBe(0);
  });
});

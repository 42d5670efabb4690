import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '@grassflow/training';
import { COMMON_TRAIN_FLAGS, modelConfigFrom } from '../src/shared/model-options.js';
import {
  microBatchOf,
  readTrainingConfig,
  seqLenFlag,
  seqLenOf,
  storedTrainingConfig,
  trainingConfigFrom,
} from '../src/train/config.js';

const flags = (argv: string[]) => parseFlags(argv, COMMON_TRAIN_FLAGS);

describe('sequence length: --seq-len, alias --block', () => {
  it('is bounded: a row longer than 16,384 tokens is refused by name before anything runs', () => {
    expect(() => flags(['--seq-len', '100000'])).toThrow(/--seq-len must be <= 16384, got 100000/);
    expect(() => flags(['--block', '16385'])).toThrow(/--block must be <= 16384/);
    expect(seqLenFlag(flags(['--seq-len', '16384']))).toBe(16384);
  });

  it('both names set seqLen and the model maxLen; together they must agree', () => {
    for (const argv of [
      ['--seq-len', '24'],
      ['--block', '24'],
      ['--seq-len=24', '--block=24'],
    ]) {
      const f = flags(['--preset', 'tiny', ...argv]);
      expect(seqLenFlag(f)).toBe(24);
      const model = modelConfigFrom('grassmann', f, 100, seqLenOf(f));
      expect(model.maxLen).toBe(24);
      expect(trainingConfigFrom(f, seqLenOf(f)).seqLen).toBe(24);
    }
    expect(seqLenFlag(flags([]))).toBeUndefined();
    // neither: the command's default, else the preset's positional table
    expect(seqLenOf(flags(['--preset', 'tiny']))).toBe(16);
    expect(seqLenOf(flags(['--preset', 'tiny']), 64)).toBe(64);
    expect(seqLenOf(flags(['--preset', 'tiny', '--block', '24']), 64)).toBe(24);
    expect(() => seqLenFlag(flags(['--seq-len', '24', '--block', '32']))).toThrow(
      /--seq-len 24 and its alias --block 32 disagree/,
    );
  });

  it('config.json keeps the key `block`, read back as seqLen', () => {
    const t = trainingConfigFrom(flags(['--batch', '8', '--micro-batch', '4']), 16);
    const stored = storedTrainingConfig(t);
    expect(stored).toMatchObject({ batch: 8, microBatch: 4, block: 16 });
    expect('seqLen' in stored).toBe(false);
    expect(Object.keys(stored).slice(0, 3)).toEqual(['batch', 'microBatch', 'block']);
    expect(readTrainingConfig(JSON.parse(JSON.stringify(stored)) as typeof stored)).toEqual(t);
  });
});

describe('--micro-batch against --batch (one check for train and bench)', () => {
  it('accepts divisors, drops M = B, refuses the rest naming the flag', () => {
    expect(microBatchOf(32, 8)).toBe(8);
    expect(microBatchOf(32, 32)).toBeUndefined();
    expect(microBatchOf(32, undefined)).toBeUndefined();
    for (const m of [5, 64]) {
      expect(() => microBatchOf(32, m)).toThrow(UsageError);
      expect(() => microBatchOf(32, m)).toThrow(`--micro-batch ${m} must divide --batch 32`);
    }
  });
});

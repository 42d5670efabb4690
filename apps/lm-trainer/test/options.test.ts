import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '@grassflow/training';
import { MODEL_FIELDS } from '@grassflow/gpu-layers';
import { COMMON_TRAIN_FLAGS, MODEL_FIELD_FLAGS, modelConfigFrom } from '../src/shared/model-options.js';
import {
  microBatchOf,
  readTrainingConfig,
  seqLenOf,
  storedTrainingConfig,
  trainingConfigFrom,
} from '../src/train/config.js';

const flags = (argv: string[]) => parseFlags(argv, COMMON_TRAIN_FLAGS);

describe('sequence length: --seq-len', () => {
  it('is bounded: a row longer than 16,384 tokens is refused by name before anything runs', () => {
    expect(() => flags(['--seq-len', '100000'])).toThrow(/--seq-len must be <= 16384, got 100000/);
    expect(flags(['--seq-len', '16384'])['seq-len']).toBe(16384);
  });

  it('sets seqLen and the model maxLen; the old name --block is not a flag (flags are not aliased)', () => {
    const f = flags(['--preset', 'tiny', '--seq-len', '24']);
    const model = modelConfigFrom('grassmann', f, 100, seqLenOf(f));
    expect(model.maxLen).toBe(24);
    expect(trainingConfigFrom(f, seqLenOf(f)).seqLen).toBe(24);
    // absent: the command's default, else the preset's positional table
    expect(seqLenOf(flags(['--preset', 'tiny']))).toBe(16);
    expect(seqLenOf(flags(['--preset', 'tiny']), 64)).toBe(64);
    expect(seqLenOf(flags(['--preset', 'tiny', '--seq-len', '24']), 64)).toBe(24);
    expect(() => flags(['--block', '24'])).toThrow(UsageError);
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

describe('the flags of the base model fields come from MODEL_FIELDS', () => {
  it("one flag per field that declares one, with the table's type, bounds and values", () => {
    const flagged = Object.values(MODEL_FIELDS).flatMap((f) => ('flag' in f ? [f.flag.name] : []));
    expect(Object.keys(MODEL_FIELD_FLAGS).sort()).toEqual([...flagged].sort());
    expect(MODEL_FIELD_FLAGS.r).toMatchObject({ type: 'int', min: MODEL_FIELDS.r.min });
    expect(MODEL_FIELD_FLAGS['d-model']).toMatchObject({ type: 'int', min: MODEL_FIELDS.dModel.flag.min });
    expect(MODEL_FIELD_FLAGS.norm).toMatchObject({ type: 'string', choices: MODEL_FIELDS.norm.values });
    expect(MODEL_FIELD_FLAGS.dropout).toMatchObject({ type: 'float', min: 0, max: MODEL_FIELDS.dropout.flag.max });
    expect(MODEL_FIELD_FLAGS.offsets).toMatchObject({ type: 'int-list', min: 1 });
    for (const name of flagged) expect(COMMON_TRAIN_FLAGS[name as keyof typeof COMMON_TRAIN_FLAGS]).toBeDefined();
  });

  it('the parser holds each flag to the table: below a bound, or not one of the values, is a usage error', () => {
    expect(() => flags(['--r', '1'])).toThrow(/--r must be >= 2/);
    expect(() => flags(['--dropout', '1'])).toThrow(/--dropout must be <= 0.99/);
    expect(() => flags(['--norm', 'mid'])).toThrow(UsageError);
    const f = flags(['--preset', 'tiny', '--layers', '3', '--r', '4', '--norm', 'pre', '--dropout', '0.2']);
    expect(modelConfigFrom('grassmann', f, 100, 16)).toMatchObject({ nLayers: 3, r: 4, norm: 'pre', dropout: 0.2 });
  });
});

describe('the ablations of MODEL_OPTIONS', () => {
  it('say so in --help, with what the results measured; the paper-model options do not', () => {
    for (const flag of ['gate', 'mixer-norm', 'ea-eps'] as const)
      expect(COMMON_TRAIN_FLAGS[flag].help).toMatch(/an ablation: /);
    for (const flag of ['head', 'dropout-at'] as const) expect(COMMON_TRAIN_FLAGS[flag].help).not.toMatch(/ablation/);
  });
});

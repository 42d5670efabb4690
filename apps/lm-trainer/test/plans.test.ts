// Each command resolves its flags once into a plan (planCommand): the plan functions on their own, no training.
import { join, resolve } from 'node:path';
import { parseFlags, UsageError } from '@grassflow/training';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planCompare } from '../src/compare/command.js';
import { planTrain } from '../src/train/command.js';
import { resumedConfig, type StoredRunConfig } from '../src/train/config.js';
import { planLadder } from '../src/ladder/command.js';
import { ladderConfigFrom, LADDER_FLAGS } from '../src/ladder/options.js';
import { planInspect } from '../src/inspect/command.js';
import { benchOf } from '../src/bench/command.js';
import { planTrainBench } from '../src/bench/train.js';
import { planProfile } from '../src/bench/profile.js';
import { runKey } from '@grassflow/studies';
import { resolvedOfStored, resolvedRunConfig } from '../src/study/key.js';
import { DATA_DIR } from './helpers.js';

/** The UsageError a plan function throws for `argv` (its message and the flag it names). */
async function usageError(plan: () => unknown): Promise<UsageError> {
  const err: unknown = await Promise.resolve()
    .then(plan)
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(UsageError);
  return err as UsageError;
}

describe.skipIf(DATA_DIR === undefined)('planCompare (needs GRASSFLOW_DATA_DIR for the tokenizer)', () => {
  const data = ['--data-dir', DATA_DIR as string];

  it('without flags: the documented defaults, one fresh run per kind with one training config', async () => {
    const plan = await planCompare(data);
    const out = resolve('runs/compare');
    expect(plan.out).toBe(out);
    expect(plan.evalTokens).toBe(16384);
    expect(plan.runs.map((r) => [r.modelKind, r.out])).toEqual([
      ['grassmann', join(out, 'grassmann')],
      ['transformer-dpa', join(out, 'transformer-dpa')],
      ['transformer-ea', join(out, 'transformer-ea')],
    ]);
    for (const r of plan.runs) {
      expect(r.preset).toBe('tiny');
      expect(r.control).toEqual({ quiet: false }); // compare runs every kind to its end
      expect(r.evalDefault).toBeUndefined();
      expect(r.training).toEqual({
        batch: 16,
        seqLen: 64,
        lr: 3e-3,
        minLr: 3e-3 / 10,
        weightDecay: 0.01,
        clip: 1,
        beta1: 0.9,
        beta2: 0.98,
        length: { tokens: 409600 },
        evalEvery: 100,
        evalTokens: 16384,
        checkpointEvery: null,
        logEvery: 10,
        seed: 1,
      });
      expect(r.model).toMatchObject({ vocabSize: 30522, dModel: 64, dFF: 256, nLayers: 2, maxLen: 64 });
      expect(r.model).toMatchObject({ head: 'adaptive', cutoffs: [2000, 10000], dropout: 0.1, norm: 'post' });
    }
    expect(plan.runs[0]?.model).toMatchObject({ kind: 'grassmann', r: 16, offsets: [[1], [2]] });
    expect(plan.runs[1]?.model).toMatchObject({ kind: 'transformer', attention: 'dpa', nHeads: 2 });
    expect(plan.runs[2]?.model).toMatchObject({ kind: 'transformer', attention: 'ea', nHeads: 2 });
  });

  it("each run is train's fresh plan for the same flags (compare's defaults written out)", async () => {
    const flags = ['--preset', 'tiny', '--d-model', '32', '--steps', '7', '--seq-len', '24', '--seed', '3', ...data];
    const compare = await planCompare(flags);
    for (const r of compare.runs) {
      const train = await planTrain([
        '--model',
        r.modelKind,
        ...flags,
        '--r',
        '16',
        '--batch',
        '16',
        '--head',
        'adaptive',
        '--lr',
        '3e-3',
        '--eval-every',
        '100',
        '--eval-tokens',
        '16384',
      ]);
      if (train.kind !== 'fresh') throw new Error('a fresh plan was expected');
      expect(r.model).toEqual(train.run.model);
      expect(r.training).toEqual(train.run.training);
      expect(r.training.seqLen).toBe(24);
      expect(r.model.maxLen).toBe(24);
    }
  });

  it('a length flag replaces the token budget; --seq-len the 64', async () => {
    const length = async (argv: string[]) => (await planCompare([...argv, ...data])).runs[0]?.training.length;
    expect(await length(['--steps', '20'])).toEqual({ steps: 20 });
    expect(await length(['--epochs', '0.5'])).toEqual({ epochs: 0.5 });
    expect(await length(['--tokens', '1000'])).toEqual({ tokens: 1000 });
    const seqLen = async (argv: string[]) => (await planCompare([...argv, ...data])).runs[0]?.training.seqLen;
    expect(await seqLen(['--seq-len', '32'])).toBe(32);
  });

  it('bad flags: the same errors as train, naming the flag', async () => {
    const cases: Array<[string[], RegExp, string]> = [
      [['--tokens', '1000', '--steps', '3'], /give only one of .*\(got --steps and --tokens\)/, 'tokens'],
      [['--epochs', '1', '--steps', '2'], /\(got --epochs and --steps\)/, 'steps'],
      [['--block', '48'], /unknown flag --block/, 'block'],
      [['--micro-batch', '3'], /--micro-batch 3 must divide --batch 16/, 'micro-batch'],
      [['--d-model', '65'], /--d-model 65 must be divisible by the 2 attention heads of preset tiny/, 'd-model'],
      [['--heads', '3'], /--d-model 64 must be divisible by --heads 3/, 'heads'],
      [['--gate', 'additive'], /--gate applies to --model grassmann, not to --model transformer-dpa/, 'gate'],
      [['--bogus'], /unknown flag --bogus/, 'bogus'],
    ];
    for (const [argv, message, flag] of cases) {
      const err = await usageError(() => planCompare([...argv, ...data]));
      expect(err.message, argv.join(' ')).toMatch(message);
      expect(err.flag, argv.join(' ')).toBe(flag);
    }
  });
});

describe.skipIf(DATA_DIR === undefined)('planTrain: one name for the sequence length', () => {
  const data = ['--data-dir', DATA_DIR as string, '--preset', 'tiny'];

  it("--heads sets a Transformer's nHeads (absent: the preset's); a Grassmann model has none", async () => {
    const model = async (argv: string[]) => {
      const plan = await planTrain([...data, ...argv]);
      if (plan.kind !== 'fresh') throw new Error('a fresh plan was expected');
      return plan.run.model;
    };
    expect(await model(['--model', 'transformer-dpa', '--heads', '4'])).toMatchObject({ nHeads: 4 });
    expect(await model(['--model', 'transformer-ea'])).toMatchObject({ nHeads: 2 });
    expect(await model(['--model', 'grassmann', '--heads', '4'])).not.toHaveProperty('nHeads');
  });

  it("--seq-len sets training.seqLen and the model's positional table; absent: the preset's", async () => {
    for (const [argv, L] of [
      [[], 16],
      [['--seq-len', '24'], 24],
    ] as const) {
      const plan = await planTrain([...data, ...argv]);
      if (plan.kind !== 'fresh') throw new Error('a fresh plan was expected');
      expect(plan.run.training.seqLen).toBe(L);
      expect(plan.run.model.maxLen).toBe(L);
      expect(plan.run.training.length).toEqual({ epochs: 1 });
    }
  });
});

describe('stored files keep `block`', () => {
  it("an existing run's config.json (training.block) loads as seqLen, with the key a study ledger holds", () => {
    const model = { kind: 'grassmann', vocabSize: 100, dModel: 16, nLayers: 2, dFF: 64, maxLen: 16 };
    const training = {
      batch: 8,
      block: 16,
      lr: 1e-3,
      minLr: 1e-4,
      weightDecay: 0.01,
      clip: 1,
      beta1: 0.9,
      beta2: 0.98,
      length: { steps: 40 },
      evalEvery: 20,
      evalTokens: 256,
      checkpointEvery: null,
      logEvery: 1,
      seed: 1,
    };
    // as an earlier grassflow-lm wrote it (only the fields read here)
    const stored = JSON.parse(
      JSON.stringify({ modelKind: 'grassmann', model, training, data: { tokenizer: 'wordpiece' } }),
    ) as StoredRunConfig;
    const cfg = resumedConfig(stored);
    expect(cfg.training.seqLen).toBe(16);
    expect('block' in cfg.training).toBe(false);
    const { block: _b, ...rest } = training;
    const fresh = resolvedRunConfig('grassmann', 'wordpiece', cfg.model, { ...rest, seqLen: 16 });
    expect(runKey(resolvedOfStored(stored))).toBe(runKey(fresh));
  });
});

describe('planLadder', () => {
  const saved = process.env['GRASSFLOW_QUEUE'];
  beforeEach(() => {
    delete process.env['GRASSFLOW_QUEUE'];
  });
  afterEach(() => {
    if (saved !== undefined) process.env['GRASSFLOW_QUEUE'] = saved;
  });

  it('resolves the ladder config, its folder and the queue once', () => {
    const plan = planLadder(['--quick', '--out', 'runs/x-ladder-plan']);
    expect(plan.cfg).toEqual(ladderConfigFrom(parseFlags(['--quick'], LADDER_FLAGS)));
    expect(plan.out).toBe(resolve('runs/x-ladder-plan'));
    expect(plan.command).toBe('grassflow-lm ladder --quick --out runs/x-ladder-plan');
    expect(plan.queue).toBeUndefined();
    expect(plan.backend).toBeUndefined();
    expect(planLadder(['--quick', '--seq-len', '12']).cfg.seqLen).toBe(12);
    expect(planLadder(['--queue', 'redis://localhost:6379/0']).queue?.url).toBe('redis://localhost:6379/0');
  });

  it('bad flags are usage errors naming the flag, before any backend or folder', async () => {
    const cases: Array<[string[], string]> = [
      [['--levels', '1..99'], 'levels'],
      [['--models', 'foo'], 'models'],
      [['--warmup', '500', '--steps', '10'], 'warmup'],
      [['--queue', 'http://x'], 'queue'],
      [['--block', '9'], 'block'],
    ];
    for (const [argv, flag] of cases) expect((await usageError(() => planLadder(argv))).flag).toBe(flag);
  });
});

describe('planInspect', () => {
  it('--split defaults to 8 windows; --samples only with --split', async () => {
    const plan = planInspect(['--checkpoint', 'ck', '--split', 'valid', '--out', 'o']);
    expect(plan.input).toEqual({ split: 'valid', samples: 8 });
    expect(plan.out).toBe(resolve('o'));
    expect(planInspect(['--checkpoint', 'ck', '--split', 'test', '--samples', '3', '--out', 'o']).input).toEqual({
      split: 'test',
      samples: 3,
    });
    const err = await usageError(() => planInspect(['--checkpoint', 'ck', '--text', 'a', '--samples=3', '--out', 'o']));
    expect(err.message).toBe('--samples goes with --split');
  });
});

describe('bench: one benchmark, one plan', () => {
  it('argv selects the benchmark; two of them is an error', async () => {
    expect(benchOf([])).toBe('train');
    expect(benchOf(['--against', 'pytorch'])).toBe('against');
    expect(benchOf(['--profile'])).toBe('profile');
    expect(benchOf(['--scaling'])).toBe('scaling');
    expect(benchOf(['--generate'])).toBe('generate');
    expect((await usageError(() => benchOf(['--scaling', '--generate']))).message).toBe(
      'give --scaling or --generate, not both',
    );
    expect((await usageError(() => benchOf(['--against', 'pytorch', '--profile']))).message).toBe(
      'give one of --against, --profile, --scaling, --generate',
    );
  });

  it("the training step's plan holds the model it times: --seq-len is its positional table", async () => {
    const plan = planTrainBench(['--preset', 'tiny', '--seq-len', '32', '--vocab', '100']);
    expect(plan.config).toMatchObject({ maxLen: 32, vocabSize: 100, dModel: 16 });
    expect(plan.flags.batch).toBe(8);
    expect(planTrainBench(['--preset', 'tiny']).config.maxLen).toBe(16);
    expect((await usageError(() => planTrainBench(['--micro-batch', '3']))).flag).toBe('micro-batch');
    expect((await usageError(() => planProfile(['--micro-batch', '4']))).message).toBe(
      '--profile times one pass per step: give no --micro-batch',
    );
  });
});

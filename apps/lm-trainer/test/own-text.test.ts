// Your own text: train --train-file/--valid-file, --config run.json, eval --file/--max-tokens, generate (streamed, and
// --json), from the command line and from the library's trainLanguageModel; a small default preset for train.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countParams, createModel, initBackend, preset, sampleIds } from '@grassflow/gpu-layers';
import { evaluatePerplexity, trainLanguageModel, TrainingRng, UsageError } from '@grassflow/training';
import { continuationText } from '@grassflow/tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer } from '../src/shared/corpus.js';
import { planEval } from '../src/eval/command.js';
import { planTrain } from '../src/train/command.js';
import { cli, DATA_DIR, describeRun, metrics, tmp } from './helpers.js';

/** A few lines that are not from Wikipedia, repeated so that a tiny model learns them in a few dozen steps. */
const STORY = [
  'The lighthouse keeper climbed the spiral stairs every evening before the sun went down.',
  'She trimmed the wick, polished the great lens, and wrote the weather in her logbook.',
  'Ships passed far out on the grey water, and the keeper counted their lights one by one.',
  'In winter the storms came from the north, and the waves broke white against the rocks below.',
  'In summer the gulls nested on the cliffs and the fishermen waved from their small boats.',
];

/** The story's text files in a new folder: train.txt (30 copies, in two files), valid.txt (its first three lines). */
function storyFiles(): { dir: string; train: string[]; valid: string } {
  const dir = tmp();
  const name = `lighthouse-${process.pid}-${Date.now()}`; // its own entry in the token-id cache
  const train = [join(dir, `${name}-a.txt`), join(dir, `${name}-b.txt`)];
  for (const f of train) writeFileSync(f, `${Array.from({ length: 15 }, () => STORY.join('\n')).join('\n')}\n`);
  const valid = join(dir, `${name}-valid.txt`);
  writeFileSync(valid, `${STORY.slice(0, 3).join('\n')}\n`);
  return { dir, train, valid };
}

/** Model flags of the CLI runs: the tiny preset, a rate that learns the story in 40 steps. */
const FAST = ['--preset', 'tiny', '--steps', '40', '--lr', '3e-3', '--batch', '8', '--quiet'];
const WORDPIECE_VOCAB = 30522;

describe('grassflow-lm --version', () => {
  it('prints the version and exits 0', () => {
    const r = cli(['--version']);
    expect(r.code, describeRun(r)).toBe(0);
    expect(r.stdout).toMatch(/^grassflow-lm \d+\.\d+\.\d+ \(tfjs-core [\d.]+, node v\d+/);
  });
});

describe.skipIf(DATA_DIR === undefined)('your own text from the command line (needs GRASSFLOW_DATA_DIR)', () => {
  it('train --train-file/--valid-file, eval --file --max-tokens, generate streamed and --json', () => {
    const { dir, train, valid } = storyFiles();
    const out = join(dir, 'run');
    const r = cli(['train', '--train-file', train.join(','), '--valid-file', valid, ...FAST, '--out', out]);
    expect(r.code, describeRun(r)).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as {
      data: { trainFiles: string[]; validFiles: string[]; trainTokens: number; validTokens: number };
    };
    expect(config.data.trainFiles).toEqual(train);
    expect(config.data.validFiles).toEqual([valid]);
    expect(config.data.trainTokens).toBeGreaterThan(2000); // both files, one after another
    expect(r.stderr).toContain('--valid-file tokens');
    // the ids of each file went through the token-id cache, named by the file
    const cached = readdirSync(join(tmpdir(), 'grassflow-lm-trainer-test-cache'));
    for (const f of [...train, valid])
      expect(cached.some((n) => n.startsWith(`text.${f.split('/').pop()}`))).toBe(true);
    const evals = metrics(out).filter((m) => m['type'] === 'eval');
    // an untrained model scores about the vocabulary's size; the story is learned well below it
    expect(evals.at(-1)?.['val_ppl']).toBeLessThan(WORDPIECE_VOCAB / 3);
    // the report's n-gram baselines are fitted and scored on the run's own text, not on WikiText-2
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(
      'Against n-gram baselines fitted on the training text and scored on the same validation ids',
    );

    const e = cli(['eval', '--checkpoint', out, '--file', valid, '--max-tokens', '20']);
    expect(e.code, describeRun(e)).toBe(0);
    const line = JSON.parse(e.stdout) as { files: string[]; tokens: number; ppl: number };
    expect(line.files).toEqual([valid]);
    expect(line.tokens).toBe(20);
    expect(line.ppl).toBeLessThan(WORDPIECE_VOCAB / 3);

    const prompt = 'the lighthouse keeper';
    const g = cli(['generate', '--checkpoint', out, '--prompt', prompt, '--max-tokens', '6', '--json']);
    expect(g.code, describeRun(g)).toBe(0);
    const lines = g.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1 + 6 + 1); // the prompt, one line per token, the end
    expect(lines[0]).toEqual({ prompt, prompt_ids: [1996, 10171, 10684] });
    const end = lines.at(-1) as { text: string; ids: number[]; tokens: number };
    expect(end.tokens).toBe(6);
    expect(lines.slice(1, 7).map((l) => l['id'])).toEqual(end.ids);
    // the pieces as streamed join to the final text, which starts with the prompt as typed
    expect(
      prompt +
        lines
          .slice(1, 7)
          .map((l) => l['text'] as string)
          .join(''),
    ).toBe(end.text);
    // the same seed without --json: the same text, as one line
    const plain = cli(['generate', '--checkpoint', out, '--prompt', prompt, '--max-tokens', '6']);
    expect(plain.code, describeRun(plain)).toBe(0);
    expect(plain.stdout).toBe(`${end.text}\n`);
  });

  it('--config run.json gives the flags (the command line wins); an unknown key is refused with the nearest flag', () => {
    const { dir, train } = storyFiles();
    const cfg = join(dir, 'run.json');
    writeFileSync(cfg, JSON.stringify({ 'train-file': train[0], preset: 'tiny', steps: 9, lr: 3e-3, quiet: true }));
    const out = join(dir, 'run');
    const r = cli(['train', '--config', cfg, '--steps', '3', '--out', out]);
    expect(r.code, describeRun(r)).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as {
      preset: string;
      totalSteps: number;
      training: { lr: number };
      data: { trainFiles: string[]; validFiles?: string[] };
    };
    expect([config.preset, config.totalSteps, config.training.lr]).toEqual(['tiny', 3, 3e-3]);
    expect(config.data.trainFiles).toEqual([train[0]]);
    expect(config.data.validFiles).toBeUndefined(); // the end of the training text validates
    expect(r.stderr).toContain("held-out (the training text's last tenth)");

    writeFileSync(cfg, JSON.stringify({ 'train-file': train[0], stpes: 9 }));
    const bad = cli(['train', '--config', cfg, '--out', join(dir, 'other')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('unknown key "stpes" (did you mean "steps"?)');
    expect(existsSync(join(dir, 'other'))).toBe(false);
  });

  it('refuses a missing or empty text file, --valid-file alone, and --tokenizer word, each in one line', () => {
    const { dir, train } = storyFiles();
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '\n  \n');
    for (const [argv, message] of [
      [
        ['--train-file', join(dir, 'nope.txt')],
        /^grassflow-lm train: --train-file: cannot read the text file .*nope\.txt \(ENOENT\)$/,
      ],
      [['--train-file', empty], /the text file .*empty\.txt is empty/],
      [['--valid-file', train[0] as string], /--valid-file goes with --train-file/],
      [['--train-file', train[0] as string, '--tokenizer', 'word'], /--tokenizer word is WikiText-2's own vocabulary/],
    ] as const) {
      const r = cli(['train', ...argv, ...FAST, '--out', join(dir, 'r')]);
      expect(r.code, describeRun(r)).toBe(2);
      const lines = r.stderr.trim().split('\n'); // an empty file is found once it is read, after the backend's line
      expect(lines.filter((l) => l.startsWith('grassflow-lm train:'))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(message);
    }
  });

  it('the default preset of train is small: about 1M parameters', async () => {
    const { train } = storyFiles();
    const plan = await planTrain(['--train-file', train[0] as string, '--data-dir', DATA_DIR as string]);
    if (plan.kind !== 'fresh') throw new Error('a fresh plan');
    expect(plan.run.preset).toBe('small');
    const params = countParams(plan.run.model);
    expect(params).toBeGreaterThan(0.9e6);
    expect(params).toBeLessThan(1.2e6);
    await expect(planTrain(['--preset', 'smal', '--data-dir', DATA_DIR as string])).rejects.toThrow(UsageError);
  });

  it('eval: --file or --split, not both; --max-tokens at least 1; the files resolved and checked in the plan', () => {
    const { dir, valid } = storyFiles();
    const base = ['--checkpoint', dir, '--data-dir', DATA_DIR as string];
    expect(planEval([...base, '--file', valid, '--max-tokens', '7'])).toMatchObject({
      text: { kind: 'files', files: [valid] },
      maxTokens: 7,
    });
    expect(planEval(base)).toMatchObject({ text: { kind: 'split', split: 'valid' }, maxTokens: undefined });
    expect(() => planEval([...base, '--file', valid, '--split', 'test'])).toThrow('give --split or --file, not both');
    expect(() => planEval([...base, '--file', valid, '--max-tokens', '0'])).toThrow('--max-tokens must be >= 1');
    expect(() => planEval([...base, '--file', join(dir, 'nope.txt')])).toThrow(/--file: cannot read the text file/);
  });
});

describe.skipIf(DATA_DIR === undefined)('your own text from the library: trainLanguageModel', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('trains on text in a few lines, then scores it and generates from it', async () => {
    const { train, valid } = storyFiles();
    const tokenizer = await loadTokenizer('wordpiece', DATA_DIR as string); // anything with encodeCorpus(text)
    const model = createModel(preset('tiny', { vocabSize: tokenizer.vocabSize }), { seed: 1 });
    const validIds = await tokenizer.encodeCorpus(readFileSync(valid, 'utf8'));
    const before = await evaluatePerplexity(model, validIds, { seqLen: 16, batch: 8 });
    const losses: number[] = [];
    const r = await trainLanguageModel({
      model,
      text: readFileSync(train[0] as string, 'utf8'),
      validText: readFileSync(valid, 'utf8'),
      tokenizer,
      steps: 40,
      optimizer: { lr: 3e-3, minLr: 3e-4 },
      onStep: (u) => losses.push(u.loss),
    });
    expect(r.result.status).toBe('finished');
    expect(losses).toHaveLength(40);
    expect(losses.at(-1)).toBeLessThan((losses[0] as number) - 1);
    expect(r.validation?.tokens).toBe(validIds.length - 1);
    expect(r.validation?.ppl).toBeLessThan(before.ppl / 3);
    // the evaluation it reports is evaluatePerplexity's on the same ids, the model trained in place
    const after = await evaluatePerplexity(model, validIds, { seqLen: 16, batch: 8 });
    expect(after.ppl).toBeCloseTo(r.validation?.ppl as number, 3);
    expect(r.metrics.filter((m) => m.type === 'train').length).toBeGreaterThan(0);

    const prompt = await tokenizer.encodePrompt('the keeper');
    const ids: number[] = [];
    for await (const id of sampleIds(model, prompt, { maxTokens: 5, temperature: 1, topK: 40 }, new TrainingRng(1)))
      ids.push(id);
    expect(ids).toHaveLength(5);
    expect(continuationText(tokenizer, prompt, ids)).toMatch(/^the keeper /);
    model.dispose();
  });

  it('refuses ids outside the vocabulary, text without a tokenizer, and too little data, naming what to give', async () => {
    const model = createModel(preset('tiny', { vocabSize: 50 }), { seed: 1 });
    const ids = Int32Array.from({ length: 400 }, (_, i) => i % 50);
    await expect(trainLanguageModel({ model, ids: Int32Array.from([...ids, 50]), steps: 2 })).rejects.toThrow(
      'token id 50 at flat position 400 is outside [0, vocabSize = 50)',
    );
    await expect(trainLanguageModel({ model, text: 'some text', steps: 2 })).rejects.toThrow(
      'text needs a tokenizer (anything with encodeCorpus(text)), or give ids',
    );
    await expect(trainLanguageModel({ model, ids: ids.subarray(0, 40), steps: 2 })).rejects.toThrow(
      /holds 2 windows of 17 tokens, fewer than the batch of 8: give more text/,
    );
    const r = await trainLanguageModel({ model, ids, steps: 3, batch: 4 });
    expect([r.result.status, r.validation]).toEqual(['finished', null]); // no validation data: no evaluation
    model.dispose();
  });
});

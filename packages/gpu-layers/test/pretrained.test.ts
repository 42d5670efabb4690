// savePretrained / loadPretrained (a model folder with its tokenizer's files and a card) and loadCheckpoint of a run
// folder.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isPretrainedFolder,
  loadCheckpoint,
  loadPretrained,
  saveCheckpoint,
  savePretrained,
  type PretrainedTokenizerFiles,
} from '@grassflow/gpu-layers';
import { logitsOf, tinyModel, useCpu } from './checkpoint-helpers.js';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-pretrained-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const TOKENIZER: PretrainedTokenizerFiles = {
  config: { kind: 'test-vocab', files: { vocab: 'vocab.txt' }, lowercase: true },
  files: new Map([['vocab.txt', '[PAD]\n[UNK]\nthe\n']]),
};

describe('savePretrained → loadPretrained', () => {
  it('gives the same model, the tokenizer settings and the paths of its files', async () => {
    const model = tinyModel();
    const dir = join(root, 'a');
    await savePretrained(dir, model, { tokenizer: TOKENIZER, card: '# tiny\n', extra: { step: 3 } });
    expect((await readdir(dir)).sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer_config.json',
      'vocab.txt',
    ]);
    expect(await isPretrainedFolder(dir)).toBe(true);
    const loaded = await loadPretrained(dir);
    expect(loaded.extra['step']).toBe(3);
    expect(loaded.tokenizer.config).toEqual(TOKENIZER.config);
    expect(await readFile(loaded.tokenizer.paths['vocab'] as string, 'utf8')).toBe('[PAD]\n[UNK]\nthe\n');
    expect(logitsOf(loaded.model)).toEqual(logitsOf(model));
    // it is a checkpoint folder too
    const ck = await loadCheckpoint(dir);
    expect(logitsOf(ck.model)).toEqual(logitsOf(model));
    for (const m of [model, loaded.model, ck.model]) m.dispose();
  });

  it('replaces an earlier export and refuses a non-empty folder that is not one, leaving it as it was', async () => {
    const model = tinyModel();
    const dir = join(root, 'b');
    await savePretrained(dir, model, { tokenizer: TOKENIZER, card: 'first' });
    await savePretrained(dir, model, { tokenizer: TOKENIZER, card: 'second' });
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('second');
    expect((await readdir(root)).filter((n) => n.startsWith('b.'))).toEqual([]); // no staging or old folder left
    const other = join(root, 'c');
    await mkdir(other);
    await writeFile(join(other, 'notes.txt'), 'keep');
    await expect(savePretrained(other, model, { tokenizer: TOKENIZER, card: '' })).rejects.toThrow(
      /not empty and not a pretrained folder/,
    );
    expect(await readdir(other)).toEqual(['notes.txt']);
    const ckDir = join(root, 'ck');
    await saveCheckpoint(ckDir, model);
    expect(await isPretrainedFolder(ckDir)).toBe(false);
    await expect(loadPretrained(ckDir)).rejects.toThrow(/is not a pretrained folder/);
    await expect(
      savePretrained(join(root, 'd'), model, {
        tokenizer: { config: { kind: 'x', files: { vocab: '../vocab.txt' } }, files: new Map() },
        card: '',
      }),
    ).rejects.toThrow(/a name a folder cannot hold/);
    model.dispose();
  });
});

describe('loadCheckpoint of a run folder', () => {
  it('reads checkpoints/best, else checkpoints/latest, and says when there is neither', async () => {
    const model = tinyModel();
    const run = join(root, 'run');
    await mkdir(run);
    await writeFile(join(run, 'config.json'), JSON.stringify({ format: 'some-run', formatVersion: 1 }));
    await expect(loadCheckpoint(run)).rejects.toThrow(/has format "some-run", expected "grassflow-checkpoint"/);
    await mkdir(join(run, 'checkpoints'));
    await expect(loadCheckpoint(run)).rejects.toThrow(/is a run folder .* without checkpoints yet/);
    await saveCheckpoint(join(run, 'checkpoints', 'latest'), model, { extra: { which: 'latest' } });
    const latest = await loadCheckpoint(run);
    expect(latest.extra['which']).toBe('latest');
    latest.model.dispose();
    await saveCheckpoint(join(run, 'checkpoints', 'best'), model, { extra: { which: 'best' } });
    const ck = await loadCheckpoint(run);
    expect(ck.extra['which']).toBe('best');
    expect(ck.dir).toBe(join(run, 'checkpoints', 'best'));
    ck.model.dispose();
    model.dispose();
  });
});

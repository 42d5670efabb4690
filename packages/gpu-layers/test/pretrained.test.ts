// savePretrained / loadPretrained (a model folder with its tokenizer's files and a card) and loadCheckpoint of a run
// folder.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fromPretrained,
  isPretrainedFolder,
  loadCheckpoint,
  loadPretrained,
  saveCheckpoint,
  savePretrained,
  type SavePretrainedOptions,
} from '@grassflow/gpu-layers';
import { logitsOf, TINY_TOKENIZER, tinyModel, useCpu } from './checkpoint-helpers.js';
import { WordPieceTokenizer } from '@grassflow/tokenizers';

let root: string;
beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-pretrained-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const TOKENIZER = TINY_TOKENIZER;
const VOCAB_TEXT = TINY_TOKENIZER.files.get('vocab.txt') as string;

describe('savePretrained → loadPretrained', () => {
  it('gives the same model, the tokenizer settings and the paths of its files', async () => {
    const model = tinyModel();
    const dir = join(root, 'a');
    await savePretrained(dir, model, { tokenizer: TOKENIZER, card: '# tiny\n', extra: { step: 3 } });
    expect((await readdir(dir)).sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'vocab.txt',
    ]);
    expect(await isPretrainedFolder(dir)).toBe(true);
    const loaded = await loadPretrained(dir);
    expect(loaded.extra['step']).toBe(3);
    // Hugging Face's tokenizer.json added beside the vocabulary, as their library saves it for the same tokens
    expect(loaded.tokenizer.config).toEqual({
      ...TOKENIZER.config,
      files: { ...TOKENIZER.config.files, huggingFace: 'tokenizer.json' },
    });
    expect(await readFile(loaded.tokenizer.paths['vocab'] as string, 'utf8')).toBe(VOCAB_TEXT);
    const hfSaved = join(root, 'hf-tokenizer.json');
    WordPieceTokenizer.fromVocab(VOCAB_TEXT.split('\n').slice(0, -1)).saveTokenizerJson(hfSaved);
    expect(await readFile(loaded.tokenizer.paths['huggingFace'] as string, 'utf8')).toBe(
      await readFile(hfSaved, 'utf8'),
    );
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
        tokenizer: { config: { ...TOKENIZER.config, files: { vocab: '../vocab.txt' } }, files: new Map() },
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

/**
 * A valid export whose tokenizer_config.json is then replaced by `config` (its record in config.json updated, so
 * that the folder is consistent and fromPretrained's refusal is about the settings, not about a changed file).
 */
async function exportWithTokenizerConfig(dir: string, config: object): Promise<void> {
  const model = tinyModel();
  await savePretrained(dir, model, { tokenizer: TOKENIZER, card: '' });
  model.dispose();
  const text = `${JSON.stringify(config, null, 2)}\n`;
  await writeFile(join(dir, 'tokenizer_config.json'), text);
  const cfgPath = join(dir, 'config.json');
  const cfg = JSON.parse(await readFile(cfgPath, 'utf8')) as {
    extra: { pretrained: { files: Record<string, { bytes: number; sha256: string }> } };
  };
  cfg.extra.pretrained.files['tokenizer_config.json'] = {
    bytes: Buffer.byteLength(text),
    sha256: createHash('sha256').update(text).digest('hex'),
  };
  await writeFile(cfgPath, JSON.stringify(cfg, null, 2));
}

/** The message of a rejection, without the folder it names (savePretrained and fromPretrained name the same one). */
async function refusal(p: Promise<unknown>, dir: string): Promise<string> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'it was not refused').toBeInstanceOf(Error);
  return (error as Error).message.replace(dir, 'DIR');
}

describe('savePretrained refuses what fromPretrained would refuse, with the same message', () => {
  it.each([
    ["kind 'bpe'", { ...TOKENIZER.config, kind: 'bpe' }, /"kind" is "bpe".*set "kind": "wordpiece"/],
    [
      'no preparation',
      { kind: 'wordpiece', files: { vocab: 'vocab.txt' }, lowercase: true },
      /has no "preparation": set it to "wikitext-tokens:unk-markers-sep:v1"/,
    ],
    [
      'an unknown preparation',
      { ...TOKENIZER.config, preparation: 'other:v9' },
      /"preparation" is "other:v9"; this version knows .* update @grassflow\/gpu-layers/,
    ],
    ['no files.vocab', { ...TOKENIZER.config, files: { words: 'vocab.txt' } }, /has no "files\.vocab": name/],
  ])('%s', async (_, config, message) => {
    const model = tinyModel();
    const saved = join(root, `refused-${_.replace(/\W+/g, '-')}`);
    const saving = savePretrained(saved, model, { tokenizer: { ...TOKENIZER, config }, card: '' });
    const savedMessage = await refusal(saving, saved);
    model.dispose();
    expect(savedMessage).toMatch(message);
    expect(savedMessage).toMatch(/^DIR: tokenizer_config\.json /); // names the file and the field
    await expect(readdir(saved)).rejects.toThrow(/ENOENT/); // nothing written
    const loadedDir = join(root, `loaded-${_.replace(/\W+/g, '-')}`);
    await exportWithTokenizerConfig(loadedDir, config);
    expect(await refusal(fromPretrained(loadedDir), loadedDir)).toBe(savedMessage);
  });

  it('a vocabulary of another size than the model is refused at save, as at load', async () => {
    const model = tinyModel();
    const dir = join(root, 'vocab-size');
    const files = new Map([['vocab.txt', VOCAB_TEXT.replace(/[^\n]*\n$/, '')]]); // 63 of the 64 tokens
    await expect(savePretrained(dir, model, { tokenizer: { ...TOKENIZER, files }, card: '' })).rejects.toThrow(
      /the tokenizer has 63 tokens, the model's config\.vocabSize is 64: give the vocab\.txt the model was trained/,
    );
    model.dispose();
  });

  it('plain JavaScript that leaves out the tokenizer, its parts or the card gets what to pass, not a TypeError', async () => {
    const model = tinyModel();
    const dir = join(root, 'plain-js');
    // as a JavaScript caller may call it: the types would not allow these
    const save = (options: unknown) => savePretrained(dir, model, options as SavePretrainedOptions);
    await expect(save(undefined)).rejects.toThrow(/^savePretrained: options are required: \{ tokenizer: /);
    await expect(save({ card: '' })).rejects.toThrow(/^savePretrained: options\.tokenizer is required: \{ config: /);
    await expect(save({ tokenizer: { files: new Map() }, card: '' })).rejects.toThrow(
      /options\.tokenizer\.config is required/,
    );
    await expect(save({ tokenizer: { config: TOKENIZER.config, files: {} }, card: '' })).rejects.toThrow(
      /options\.tokenizer\.files must be a Map/,
    );
    await expect(save({ tokenizer: TOKENIZER })).rejects.toThrow(/options\.card is required/);
    await expect(save({ tokenizer: { config: TOKENIZER.config, files: new Map() }, card: '' })).rejects.toThrow(
      /tokenizer file 'vocab' \(vocab\.txt\) is named but not given: add it to tokenizer\.files/,
    );
    model.dispose();
  });

  it("config.json carries Hugging Face's model_type and architectures beside grassflow's fields", async () => {
    const dir = join(root, 'hub-fields');
    for (const kind of ['grassmann', 'transformer'] as const) {
      const model = tinyModel({ kind });
      await savePretrained(dir, model, { tokenizer: TOKENIZER, card: '' });
      model.dispose();
      const cfg = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
      expect(Object.keys(cfg).slice(0, 2)).toEqual(['model_type', 'architectures']);
      expect(cfg['model_type']).toBe(`grassflow_${kind}`);
      expect(cfg['architectures']).toEqual([
        kind === 'grassmann' ? 'GrassflowGrassmannForCausalLM' : 'GrassflowTransformerForCausalLM',
      ]);
      expect(cfg).toMatchObject({ format: 'grassflow-checkpoint', model: { kind } });
      const loaded = await loadPretrained(dir); // still a checkpoint folder loadCheckpoint reads
      expect(loaded.config.kind).toBe(kind);
      loaded.model.dispose();
    }
  });
});

// The shipped model is the one its card describes: it loads by its package name as a user's project finds it, has
// the card's parameter count, and scores all of wiki.test at the card's test perplexity.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPretrained, type PretrainedModel } from '@grassflow/gpu-layers';
import { WordPieceTokenizer, wikitextForWordPiece } from '@grassflow/tokenizers';
import { evaluatePerplexity } from '@grassflow/training';

const here = resolve(import.meta.dirname, '..');
const { name } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as { name: string };
const card = readFileSync(join(here, 'README.md'), 'utf8');
/** A number the card states: `- Parameters: 2,502,760.`, `- Test perplexity: 149.70 (…`. */
const cardNumber = (label: string): number => {
  const m = new RegExp(`^- ${label}: ([\\d,.]+)`, 'm').exec(card);
  if (m === null) throw new Error(`README.md states no "${label}"`);
  return Number((m[1] as string).replace(/,/g, '').replace(/\.$/, ''));
};
const dataDir = process.env['GRASSFLOW_DATA_DIR'];

describe(name, () => {
  // a project with the package installed, as npm lays it out: node_modules/@grassflow/<name> is this folder
  const project = mkdtempSync(join(tmpdir(), 'grassflow-model-package-'));
  let lm: PretrainedModel;
  beforeAll(async () => {
    mkdirSync(join(project, 'node_modules', '@grassflow'), { recursive: true });
    symlinkSync(here, join(project, 'node_modules', name));
    lm = await fromPretrained(name, { resolveFrom: project });
  });
  afterAll(() => {
    lm?.dispose();
    rmSync(project, { recursive: true, force: true });
  });

  it("loads by its name, with the card's parameter count and the vocabulary of its tokenizer.json", () => {
    expect(lm.source).toBe(join(project, 'node_modules', name));
    const params = lm.model.trainableVariables().reduce((n, v) => n + v.size, 0);
    expect(params).toBe(cardNumber('Parameters'));
    const tokenizer = WordPieceTokenizer.fromTokenizerJson(join(here, 'tokenizer.json'));
    expect(tokenizer.vocabSize).toBe(lm.config.vocabSize);
  });

  it('generates the same text for the same seed', async () => {
    const a = await lm.generate('the history of', { maxTokens: 12, seed: 3 });
    const b = await lm.generate('the history of', { maxTokens: 12, seed: 3 });
    expect(a.startsWith('the history of ')).toBe(true);
    expect(a).toBe(b);
  });

  it.skipIf(dataDir === undefined)(
    "scores all of wiki.test at the card's test perplexity (needs GRASSFLOW_DATA_DIR)",
    async () => {
      // WikiText-2's test split as the trainer reads it: its markers prepared for WordPiece, each line ended by [SEP]
      const tokenizer = WordPieceTokenizer.fromTokenizerJson(join(here, 'tokenizer.json'));
      const text = readFileSync(join(dataDir as string, 'wikitext-2', 'wiki.test.tokens'), 'utf8');
      const ids = await tokenizer.encodeCorpus(wikitextForWordPiece(text), {
        lineEndId: tokenizer.tokenToId('[SEP]') as number,
      });
      const { ppl, tokens } = await evaluatePerplexity(lm.model, ids, { seqLen: lm.config.maxLen, batch: 32 });
      expect(tokens).toBe(ids.length - 1);
      // the card rounds to two decimals; backends differ in the last float32 bits, not in the second decimal
      expect(Math.abs(ppl - cardNumber('Test perplexity'))).toBeLessThan(0.006);
    },
  );
});

// The pure word-level tokenizer (the browser entry's) against the Node WordLevelTokenizer on Wikitext-2: the same
// id, the same ids (unknown words included) and the same decoded text, from the vocabulary file a run folder carries.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PureWordLevelTokenizer, TokenizerError, WordLevelTokenizer } from '@grassflow/tokenizers';
import { dataDir, dataPath } from './helpers.js';

describe('PureWordLevelTokenizer from a vocabulary file', () => {
  const node = WordLevelTokenizer.fromCorpus(' \n = A b = \n b <unk> c \n');

  it('reads what save writes, with the Node id, and refuses an edited file', async () => {
    const pure = await PureWordLevelTokenizer.fromVocabFileText(node.vocabFileText(), 'vocab.json');
    expect(pure.id).toBe(node.id);
    expect(pure.words()).toEqual(node.words());
    const edited = node.vocabFileText().replace('"A"', '"Z"');
    await expect(PureWordLevelTokenizer.fromVocabFileText(edited, 'vocab.json')).rejects.toThrow(
      /vocab\.json is not a usable word-level vocabulary: the SHA-256 of "words" does not match/,
    );
    await expect(PureWordLevelTokenizer.fromVocabFileText('{"format":"x"}', 'v.json')).rejects.toThrow(TokenizerError);
    await expect(PureWordLevelTokenizer.fromVocabFileText('not json', 'v.json')).rejects.toThrow(/not valid JSON/);
  });

  it('encodes a prompt as grassflow-lm generate does: one line, no <eos>', () => {
    expect(Array.from(node.encodePrompt('  b  c x \n'))).toEqual([3, 5, 4]); // b, c, <unk>
    expect(node.encodePrompt('   ').length).toBe(0);
  });
});

describe.skipIf(dataDir === undefined)('PureWordLevelTokenizer on Wikitext-2 (real files)', () => {
  let node: WordLevelTokenizer;
  let pure: PureWordLevelTokenizer;
  const text = (split: string): string => readFileSync(dataPath(`wikitext-2/wiki.${split}.tokens`), 'utf8');
  beforeAll(async () => {
    node = WordLevelTokenizer.fromCorpusFile(dataPath('wikitext-2/wiki.train.tokens'));
    pure = await PureWordLevelTokenizer.fromVocabFileText(node.vocabFileText(), 'word-vocab.json');
  });

  it("keeps the Node tokenizer's id (the token caches' key) and ids", () => {
    // Pinned from the tokenizer before the rules moved into the pure module: existing runs' caches stay valid.
    expect(node.id).toBe('wordlevel:45f2cb999804e259059676fa2bf5b12999229a0c33dae878ae690fd8c84427eb');
    expect(pure.id).toBe(node.id);
    expect(Array.from(node.encode(' the cat zorblax <unk> sat \n = = Valkyria qqq = = \n'))).toEqual([
      17, 5887, 9, 9, 4777, 0, 1, 1, 2, 9, 1, 1, 0,
    ]);
  });

  it('gives the same ids and text on every line of valid and test, and on lines with unknown words', () => {
    for (const split of ['valid', 'test']) {
      const lines = text(split).split('\n');
      // Every 50th line with words that are not in wiki.train: they become <unk> in both.
      const withUnknown = lines.map((l, i) => (i % 50 === 0 ? `${l} zqxwv Ωmega-Ünknown ${i}x${i} ` : l));
      for (const sample of [lines, withUnknown]) {
        const joined = sample.join('\n');
        const ids = pure.encode(joined);
        expect(ids).toEqual(node.encode(joined));
        expect(pure.decode(ids)).toBe(node.decode(ids));
      }
      expect(pure.encode(withUnknown.join('\n')).filter((id) => id === pure.unkId).length).toBeGreaterThan(
        pure.encode(text(split)).filter((id) => id === pure.unkId).length,
      );
      for (const line of lines.slice(0, 200)) expect(pure.encodePrompt(line)).toEqual(node.encodePrompt(line));
    }
  });
});

// Word-level tokenizer: vocabulary order, <unk>/<eos>, the .tokens line convention, save/load, Wikitext-2 counts.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EOS, TokenizerError, UNK, WordLevelTokenizer } from '@grassflow/tokenizers';
import { dataDir, dataPath, tempDir } from './helpers.js';

// Two lines in the .tokens convention: a blank line, then " = A b = \n", then " b <unk> c \n".
const CORPUS = ' \n = A b = \n b <unk> c \n';

describe('WordLevelTokenizer on a small corpus', () => {
  const dir = tempDir();
  const tok = WordLevelTokenizer.fromCorpus(CORPUS);

  it('orders the vocabulary by first appearance, <eos> after each line', () => {
    // Line 1 is blank → <eos> 0; line 2: = 1, A 2, b 3, (= again), <eos>; line 3: (b), <unk> 4, c 5.
    expect(tok.words()).toEqual([EOS, '=', 'A', 'b', UNK, 'c']);
    expect([tok.eosId, tok.unkId, tok.vocabSize]).toEqual([0, 4, 6]);
    expect(tok.tokenToId('c')).toBe(5);
    expect(tok.idToToken(2)).toBe('A');
    expect(tok.idToToken(6)).toBeUndefined();
  });

  it('appends <unk> last when the corpus has none', () => {
    expect(WordLevelTokenizer.fromCorpus('x y\nz').words()).toEqual(['x', 'y', EOS, 'z', UNK]);
  });

  it('encodes each line as its words plus <eos>, unknown words as <unk>', () => {
    expect(Array.from(tok.encode(CORPUS))).toEqual([0, 1, 2, 3, 1, 0, 3, 4, 5, 0]);
    // "zebra" is not in the vocabulary; tabs, \r and repeated spaces separate words; no final "\n" still ends a line.
    expect(Array.from(tok.encode('A\tzebra  c\r\nb'))).toEqual([2, 4, 5, 0, 3, 0]);
    expect(Array.from(tok.encode(''))).toEqual([]);
    expect(Array.from(tok.encode('\n'))).toEqual([0]);
    expect(Array.from(tok.encode(new TextEncoder().encode(CORPUS)))).toEqual(Array.from(tok.encode(CORPUS)));
  });

  it('decodes in the .tokens convention and round-trips exactly', () => {
    expect(tok.decode(tok.encode(CORPUS))).toBe(CORPUS);
    expect(tok.decode([2, 3])).toBe(' A b'); // no <eos>: no line end
    expect(() => tok.decode([6])).toThrow(/not a word id/);
  });

  it('matches multi-byte words byte for byte', () => {
    const t = WordLevelTokenizer.fromCorpus(' Senjō no Valkyria 3 : 戦場のヴァルキュリア3 \uFEFFx \n');
    expect(t.words()).toContain('\uFEFFx'); // a leading BOM stays part of the word
    const text = ' 戦場のヴァルキュリア3 Senjō Senjo \n';
    expect(Array.from(t.encode(text))).toEqual([
      t.tokenToId('戦場のヴァルキュリア3'),
      t.tokenToId('Senjō'),
      t.unkId,
      t.eosId,
    ]);
  });

  it('saves atomically, loads back with the same identity, and rejects damaged files', () => {
    const path = join(dir, 'vocab', 'wikitext.json');
    tok.save(path);
    expect(readdirSync(join(dir, 'vocab'))).toEqual(['wikitext.json']);
    const back = WordLevelTokenizer.load(path);
    expect(back.id).toBe(tok.id);
    expect(back.words()).toEqual(tok.words());
    expect(tok.id).toMatch(/^wordlevel:[0-9a-f]{64}$/);
    expect(WordLevelTokenizer.fromWords(tok.words()).id).toBe(tok.id);
    expect(WordLevelTokenizer.fromCorpus(CORPUS + ' d \n').id).not.toBe(tok.id);

    const saved = JSON.parse(readFileSync(path, 'utf8')) as { words: string[]; size: number };
    const edited = join(dir, 'edited.json');
    writeFileSync(edited, JSON.stringify({ ...saved, words: [...saved.words.slice(0, 5), 'd'] }));
    expect(() => WordLevelTokenizer.load(edited)).toThrow(/SHA-256/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"format":');
    let err: unknown;
    try {
      WordLevelTokenizer.load(broken);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokenizerError);
    expect((err as TokenizerError).code).toBe('BAD_VOCAB_FILE');
    expect((err as TokenizerError).message).toContain(broken);
    expect(() => WordLevelTokenizer.load(join(dir, 'none.json'))).toThrow(/not found: .*none\.json/);
  });

  it('rejects bad vocabularies and inputs', () => {
    expect(() => WordLevelTokenizer.fromWords(['a', EOS])).toThrow(/lacks <unk>/);
    expect(() => WordLevelTokenizer.fromWords(['a', 'a', EOS, UNK])).toThrow(/appears twice/);
    expect(() => WordLevelTokenizer.fromWords(['a b', EOS, UNK])).toThrow(/whitespace/);
    expect(() => WordLevelTokenizer.fromCorpus('')).toThrow(/empty corpus/);
    expect(() => tok.encode(5 as unknown as string)).toThrow(/string or a Uint8Array/);
    expect(() => WordLevelTokenizer.fromCorpusFile(join(dir, 'no.tokens'))).toThrow(TokenizerError);
  });
});

describe.skipIf(dataDir === undefined)('WordLevelTokenizer on Wikitext-2 (real files)', () => {
  let tok: WordLevelTokenizer;
  const file = (split: string): Buffer => readFileSync(dataPath(`wikitext-2/wiki.${split}.tokens`));
  beforeAll(() => {
    tok = WordLevelTokenizer.fromCorpusFile(dataPath('wikitext-2/wiki.train.tokens'));
  });

  it('has 33,278 types from train, in first-appearance order', () => {
    expect(tok.vocabSize).toBe(33278);
    // The file starts " \n = Valkyria Chronicles III = \n \n Senjō no Valkyria 3 : <unk> Chronicles ...".
    expect(tok.words().slice(0, 9)).toEqual([EOS, '=', 'Valkyria', 'Chronicles', 'III', 'Senjō', 'no', '3', ':']);
    expect(tok.unkId).toBe(9);
  });

  it('counts 2,088,628 / 217,646 / 245,569 tokens and round-trips each split byte for byte', () => {
    for (const [split, count, unks] of [
      ['train', 2088628, 54625],
      ['valid', 217646, undefined],
      ['test', 245569, undefined],
    ] as const) {
      const bytes = file(split);
      const ids = tok.encode(bytes);
      expect(ids).toBeInstanceOf(Int32Array);
      expect(ids.length).toBe(count);
      if (unks !== undefined) expect(ids.filter((id) => id === tok.unkId).length).toBe(unks); // SOURCES.md: 54,625
      expect(tok.decode(ids)).toBe(bytes.toString('utf8'));
    }
  });

  it('the vocabulary of train covers valid and test (no new <unk>), and the file and string paths agree', () => {
    const valid = file('valid').toString('utf8');
    const union = WordLevelTokenizer.fromCorpus(file('train').toString('utf8') + valid + file('test').toString('utf8'));
    expect(union.id).toBe(tok.id); // SOURCES.md: 33,278 types in train alone and in train+valid+test
    expect(tok.encode(valid)).toEqual(tok.encodeFile(dataPath('wikitext-2/wiki.valid.tokens')));
  });
});

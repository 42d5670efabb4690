// The pure-TypeScript WordPiece (the browser's tokenizer) against WordPieceTokenizer (HF's Rust library): the same
// ids and the same decoded text on the real bert-base-uncased vocabulary.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PureWordPieceTokenizer, WordPieceTokenizer } from '@grassflow/tokenizers';
import { BERT_VOCAB, dataDir, dataPath, tempDir } from './helpers.js';

/** Cases where a hand-written BERT tokenizer usually drifts from HF's. */
const WORDPIECE_CASES: readonly string[] = [
  'A man is playing a guitar on stage.',
  'Café naïve façade — résumé, Ångström, São Paulo, Dvořák, Øresund, Straße.',
  'ΟΔΟΣ and Οδός (Greek final sigma), İstanbul, ΣΊΣΥΦΟΣ',
  '北京欢迎你！東京は日本の首都です。서울은 한국의 수도이다.',
  "Hello, world!!! (it's 3.14) [brackets] {braces} <angles> $5 + 10% = ~#@^&*_|\\/`\"'",
  'don\'t stop — "quoted" … ¿qué? ¡sí! «guillemets» §7 ¶ † ‡ • ‰ ′ ″',
  'supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  'x'.repeat(100) + ' ' + 'y'.repeat(101),
  'emoji 😀🎉👍🏽 and symbols ∑∫√∞≠ ★☆ ♥ © ® ™',
  'zero\u200bwidth\u200dspace\ufeff, soft\u00adhyphen, tab\tnew\nline\r\nnbsp\u00a0ideographic\u3000space',
  'control\u0001chars\u0007removed\ufffdreplacement\u0000nul',
  '[UNK] stays, [SEP] too, [CLS][MASK][PAD] glued; [unk] lower-case does not',
  'hello[SEP]world [SEP][SEP] x',
  'ﬁ ligature, full-width ＡＢＣ１２３, Ⅻ roman, ①②, ½ ¼, ², x²',
  'Thai ภาษาไทย, Hindi हिन्दी, Arabic العربية, Hebrew עברית, Russian Ёлка',
  '   leading and trailing spaces   ',
  '',
  '@-@ 1 @,@ 000 @.@ 5 <unk> = = Heading = =',
];

describe.skipIf(dataDir === undefined)('PureWordPieceTokenizer equals WordPieceTokenizer (HF)', () => {
  let hf: WordPieceTokenizer;
  let pure: PureWordPieceTokenizer;
  beforeAll(() => {
    hf = WordPieceTokenizer.fromVocabFile(dataPath(BERT_VOCAB));
    pure = PureWordPieceTokenizer.fromVocabText(readFileSync(dataPath(BERT_VOCAB), 'utf8'));
  });

  it('has the same vocabulary and special ids', () => {
    expect(pure.vocabSize).toBe(hf.vocabSize);
    expect(pure.specialIds).toEqual({ pad: 0, unk: 100, cls: 101, sep: 102 });
  });

  it.each(WORDPIECE_CASES.map((text) => [text.slice(0, 40), text]))(
    'ids and decoded text: %s',
    async (_label, text) => {
      for (const addSpecialTokens of [true, false]) {
        const want = await hf.encode(text, undefined, { addSpecialTokens });
        const got = pure.encode(text, { addSpecialTokens });
        expect(Array.from(got.ids)).toEqual(Array.from(want.ids));
        expect(got.tokens).toEqual(want.tokens);
        for (const skipSpecialTokens of [true, false])
          expect(pure.decode(got.ids, { skipSpecialTokens })).toBe(hf.decode(want.ids, { skipSpecialTokens }));
      }
    },
  );

  it('gives [UNK] for a word it cannot cover and for one over 100 characters', () => {
    expect(Array.from(pure.encode('\u{1f600}', { addSpecialTokens: false }).ids)).toEqual([100]);
    expect(Array.from(pure.encode('a'.repeat(101), { addSpecialTokens: false }).ids)).toEqual([100]);
  });
});

describe("PureWordPieceTokenizer.tokenizerJson: Hugging Face's tokenizer.json without native code", () => {
  const dir = tempDir();
  /** What WordPieceTokenizer (HF's library) saves for the same tokens. */
  const saved = (tokens: readonly string[], lowercase: boolean): string => {
    const path = join(dir, `tokenizer-${lowercase ? 'uncased' : 'cased'}-${tokens.length}.json`);
    WordPieceTokenizer.fromVocab(tokens, { lowercase }).saveTokenizerJson(path);
    return readFileSync(path, 'utf8');
  };
  // integer-like tokens (a JS object would reorder them), quotes, a backslash, non-ASCII, specials out of order
  const odd = ['the', '[PAD]', '1', '100', '0', '"quoted"', 'back\\slash', 'naïve', '##s', '[UNK]', '[SEP]', '[CLS]'];

  it('writes the bytes HF saves, uncased and cased, for an odd vocabulary', () => {
    for (const lowercase of [true, false]) {
      expect(PureWordPieceTokenizer.fromVocab(odd, { lowercase }).tokenizerJson()).toBe(saved(odd, lowercase));
    }
  });

  it.skipIf(dataDir === undefined)('writes the bytes HF saves for bert-base-uncased, which HF reads back', async () => {
    const text = readFileSync(dataPath(BERT_VOCAB), 'utf8');
    const json = PureWordPieceTokenizer.fromVocabText(text).tokenizerJson();
    const tokens = text.split('\n').slice(0, -1);
    expect(json).toBe(saved(tokens, true));
    const path = join(dir, 'bert-tokenizer.json');
    writeFileSync(path, json);
    const back = WordPieceTokenizer.fromTokenizerJson(path);
    const hf = WordPieceTokenizer.fromVocabFile(dataPath(BERT_VOCAB));
    for (const s of WORDPIECE_CASES) expect((await back.encode(s)).ids).toEqual((await hf.encode(s)).ids);
  });
});

// WordPiece ids against HF bert-base-uncased, derived by hand from vocab.txt (id = line number − 1).
import { beforeAll, describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '@grassflow/tokenizers';
import { BERT_VOCAB, dataDir, dataPath } from './helpers.js';

describe.skipIf(dataDir === undefined)('WordPiece ids equal HF bert-base-uncased (real vocab.txt)', () => {
  let tok: WordPieceTokenizer;
  beforeAll(() => {
    tok = WordPieceTokenizer.fromVocabFile(dataPath(BERT_VOCAB));
  });
  const ids = async (text: string): Promise<number[]> => Array.from((await tok.encode(text)).ids);

  it('has the 30,522-token vocabulary, the special ids, and the identity of the published file hash', () => {
    expect(tok.vocabSize).toBe(30522);
    // Lines 1, 101–104 of vocab.txt: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103.
    expect(tok.specialIds).toEqual({ pad: 0, unk: 100, cls: 101, sep: 102, mask: 103 });
    expect(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => tok.tokenToId(t))).toEqual([
      0, 100, 101, 102, 103,
    ]);
    expect(tok.idToToken(1)).toBe('[unused0]');
    // sha256 of vocab.txt as published (SOURCES.md): the identity hashes the vocabulary in id order.
    expect(tok.id).toBe('wordpiece:07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3:lowercase');
  });

  it('encodes the reference sentence as HF does', async () => {
    // [CLS] a man is playing a guitar on stage . [SEP] — the ids HF's fast tokenizer gives.
    expect(await ids('A man is playing a guitar on stage.')).toEqual([
      101, 1037, 2158, 2003, 2652, 1037, 2858, 2006, 2754, 1012, 102,
    ]);
  });

  it('lowercases and strips accents', async () => {
    // NFD splits é → e + U+0301 (category Mn, removed): "Café naïve résumé" → cafe naive resume.
    // cafe line 7669 → 7668; naive line 15744 → 15743; resume line 13747 → 13746.
    expect(await ids('Café naïve résumé')).toEqual([101, 7668, 15743, 13746, 102]);
    // "ÉCOLE Über Ångström" → ecole uber angstrom; "angstrom" is not a word of the vocab, the greedy
    // longest prefix is "ang" (17076), the rest "##strom" (15687). ecole 12431, uber 19169.
    expect(await ids('ÉCOLE Über Ångström')).toEqual([101, 12431, 19169, 17076, 15687, 102]);
  });

  it('splits CJK ideographs into single-character words; kana are not split', async () => {
    // 我爱北京天安门: each ideograph is its own word. 我 1855, 北 1781, 京 1755, 天 1811, 安 1820;
    // 爱 and 门 (simplified forms) are not in the vocab → [UNK] 100.
    expect(await ids('我爱北京天安门')).toEqual([101, 1855, 100, 1781, 1755, 1811, 1820, 100, 102]);
    // 東京は日本の首都です: ideographs split; the kana は, の stand alone because their neighbours are
    // ideographs; 首 is not in the vocab → 100; です stays one word, NFD turns で into て + U+3099 (Mn,
    // stripped) → "てす" → て 1665 + ##す 30184. 東 1879 京 1755 は 1672 日 1864 本 1876 の 1671 都 1961.
    expect(await ids('東京は日本の首都です')).toEqual([
      101, 1879, 1755, 1672, 1864, 1876, 1671, 100, 1961, 1665, 30184, 102,
    ]);
  });

  it('splits every punctuation character into its own token', async () => {
    // hello 7592 , 1010 world 2088 ! 999 ( 1006 it 2009 ' 1005 s 1055 ) 1007 well 2092 - 1011 known 2124
    // . 1012 ×3, " 1000 quoted 9339 " 1000, [ 1031 brackets 19719 ] 1033, { 1063 brace 17180 ##s 2015 } 1065,
    // a 1037 / 1013 b 1038, c 1039 ; 1025 d 1040.
    expect(await ids('Hello, world! (It\'s) well-known... "quoted" [brackets] {braces} a/b c;d')).toEqual([
      101, 7592, 1010, 2088, 999, 1006, 2009, 1005, 1055, 1007, 2092, 1011, 2124, 1012, 1012, 1012, 1000, 9339, 1000,
      1031, 19719, 1033, 1063, 17180, 2015, 1065, 1037, 1013, 1038, 1039, 1025, 1040, 102,
    ]);
  });

  it('splits numbers at punctuation and continues with ## pieces', async () => {
    // in 1999, 1984 3118, "3.14%" → 3 1017 . 1012 14 2403 % 1003; of 1997; "$2,000" → $ 1002 2 1016 , 1010 000 2199;
    // cost 3465; "1,000,000" → 1 1015 , 000 , 000; dollars 6363 at 2012; "10:30pm." → 10 2184 : 1024 30 2382 ##pm 9737
    // . 1012.
    expect(await ids('In 1984, 3.14% of $2,000 cost 1,000,000 dollars at 10:30pm.')).toEqual([
      101, 1999, 3118, 1010, 1017, 1012, 2403, 1003, 1997, 1002, 1016, 1010, 2199, 3465, 1015, 1010, 2199, 1010, 2199,
      6363, 2012, 2184, 1024, 2382, 9737, 1012, 102,
    ]);
  });

  it('covers unknown whole words with ## continuations, and unknown characters with [UNK]', async () => {
    // tokenization → token 19204 + ##ization 3989; unbelievably → un 4895 ##bel 8671 ##ie 2666 ##va 3567 ##bly 6321;
    // transformers is a whole word 19081.
    const e = await tok.encode('tokenization unbelievably transformers');
    expect(e.tokens).toEqual([
      '[CLS]',
      'token',
      '##ization',
      'un',
      '##bel',
      '##ie',
      '##va',
      '##bly',
      'transformers',
      '[SEP]',
    ]);
    expect(Array.from(e.ids)).toEqual([101, 19204, 3989, 4895, 8671, 2666, 3567, 6321, 19081, 102]);
    // Emoji are not in the vocab, not even as ## pieces: i 1045 love 2293 pizza 10733 😀 100 🍕 100.
    expect(await ids('I love pizza 😀 🍕')).toEqual([101, 1045, 2293, 10733, 100, 100, 102]);
    // A word over 100 characters is [UNK] whole, even when its pieces exist.
    expect(await ids('a'.repeat(101))).toEqual([101, 100, 102]);
    expect((await ids('a'.repeat(100))).includes(100)).toBe(false);
  });

  it('matches special tokens written in the text, as HF added tokens', async () => {
    // [MASK] is a special added token: matched before normalisation → 103. paris 3000 france 2605.
    expect(await ids('Paris is the [MASK] of France.')).toEqual([101, 3000, 2003, 1996, 103, 1997, 2605, 1012, 102]);
  });

  it('cleans text: control characters are dropped, tabs and newlines are spaces', async () => {
    expect(await ids('a\u0000 man\tis\nplaying\u200b')).toEqual(await ids('a man is playing'));
  });

  it('decodes as HF: special tokens skipped, ## pieces joined, no space before punctuation', async () => {
    const e = await tok.encode('Hello, world! Tokenization is fun.');
    expect(tok.decode(e.ids)).toBe('hello, world! tokenization is fun.');
    expect(tok.decode(e.ids, { skipSpecialTokens: false })).toBe('[CLS] hello, world! tokenization is fun. [SEP]');
    expect(tok.decode([101, 100, 102])).toBe(''); // [UNK] is a special token: skipped too, as in HF
    expect(() => tok.decode([30522])).toThrow(/not a token id/);
  });
});

// WordPiece on a tiny hand-made vocabulary (no data needed): the algorithm, tokenizer.json, bad input.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokenizerError, WordPieceTokenizer } from '@grassflow/tokenizers';
import { TINY_VOCAB, tempDir, writeVocab } from './helpers.js';

const dir = tempDir();
const vocabPath = writeVocab(dir, 'vocab.txt', TINY_VOCAB);

/** The thrown TokenizerError of `fn` (fails the test when it does not throw one). */
function caught(fn: () => unknown): TokenizerError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TokenizerError) return err;
    throw err;
  }
  throw new Error('expected a TokenizerError');
}

/** A tokenizer.json in the layout of HF's bert-base-uncased file on the hub, over `vocab`. */
function hubStyleJson(vocab: readonly string[]): object {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((content) => ({
    id: vocab.indexOf(content),
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special,
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab.indexOf('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab.indexOf('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

describe('WordPiece algorithm on a tiny vocabulary', () => {
  const tok = WordPieceTokenizer.fromVocabFile(vocabPath);

  it('greedy longest match with ## continuations; [UNK] when a word cannot be covered', async () => {
    // "Unaffable" → lowercase "unaffable" → un (7) + ##aff (8) + ##able (9).
    expect((await tok.encode('Unaffable')).tokens).toEqual(['[CLS]', 'un', '##aff', '##able', '[SEP]']);
    // "aaa" → a (13) ##a (14) ##a (14); "dog" has no prefix in the vocab → [UNK] for the whole word.
    expect(Array.from((await tok.encode('aaa dog, the cat!')).ids)).toEqual([2, 13, 14, 14, 1, 10, 5, 6, 11, 3]);
    // "unaffablex": "##x" is missing, so the whole word is [UNK] (not un ##aff ##able [UNK]).
    expect(Array.from((await tok.encode('unaffablex', null, { addSpecialTokens: false })).ids)).toEqual([1]);
    // 100 characters is the limit: 100 × "a" is covered, 101 × "a" is [UNK].
    expect((await tok.encode('a'.repeat(100), null, { addSpecialTokens: false })).ids.length).toBe(100);
    expect(Array.from((await tok.encode('a'.repeat(101), null, { addSpecialTokens: false })).ids)).toEqual([1]);
  });

  it('decodes by joining ## pieces and removing spaces before punctuation', () => {
    expect(tok.decode([2, 5, 7, 8, 9, 6, 10, 13, 14, 12, 3, 0])).toBe('the unaffable cat, aa.');
    expect(tok.decode(new Int32Array([7, 8, 9]))).toBe('unaffable');
    expect(() => tok.decode([15])).toThrow(TokenizerError);
    expect(() => tok.decode([-1])).toThrow(/not a token id/);
  });

  it('has an identity made of the vocabulary hash and the casing', () => {
    expect(tok.id).toMatch(/^wordpiece:[0-9a-f]{64}:lowercase$/);
    const cased = WordPieceTokenizer.fromVocabFile(vocabPath, { lowercase: false });
    expect(cased.id).toBe(tok.id.replace(':lowercase', ':cased'));
    const other = WordPieceTokenizer.fromVocab([...TINY_VOCAB, 'dog']);
    expect(other.id).not.toBe(tok.id);
    expect(WordPieceTokenizer.fromVocab(TINY_VOCAB).id).toBe(tok.id);
  });

  it('concurrent encodes with different truncation options do not interfere', async () => {
    const text = 'the cat the cat the cat the cat';
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => tok.encode(text, null, i % 2 === 0 ? { truncation: { maxLength: 4 } } : {})),
    );
    runs.forEach((e, i) => expect(e.ids.length).toBe(i % 2 === 0 ? 4 : 10));
  });

  it('cased vocabularies keep case and accents', async () => {
    const cased = WordPieceTokenizer.fromVocab([...TINY_VOCAB, 'The', 'café'], { lowercase: false });
    expect(Array.from((await cased.encode('The café the', null, { addSpecialTokens: false })).ids)).toEqual([
      15, 16, 5,
    ]);
  });
});

describe('tokenizer.json', () => {
  it('reads a hub-style bert tokenizer.json with the same ids as the vocab.txt build', async () => {
    const path = join(dir, 'hub-tokenizer.json');
    writeFileSync(path, JSON.stringify(hubStyleJson(TINY_VOCAB)));
    const fromJson = WordPieceTokenizer.fromTokenizerJson(path);
    const fromTxt = WordPieceTokenizer.fromVocabFile(vocabPath);
    for (const [a, b] of [
      ['Unaffable, THE cat!', 'aaa dog [MASK].'],
      ['the', 'cat'],
    ] as const) {
      expect(await fromJson.encode(a, b)).toEqual(await fromTxt.encode(a, b));
    }
    expect(fromJson.vocabSize).toBe(TINY_VOCAB.length);
    expect(fromJson.decode([2, 7, 8, 3])).toBe('unaff');
    expect(fromJson.id.startsWith(fromTxt.id + ':json-')).toBe(true);
  });

  it('saves atomically and loads back to the same encodings', async () => {
    const tok = WordPieceTokenizer.fromVocabFile(vocabPath);
    const path = join(dir, 'saved', 'tokenizer.json');
    tok.saveTokenizerJson(path);
    expect(readdirSync(join(dir, 'saved'))).toEqual(['tokenizer.json']); // no temp file left behind
    const back = WordPieceTokenizer.fromTokenizerJson(path);
    expect(await back.encode('the cat', 'unaffable', { truncation: { maxLength: 5 } })).toEqual(
      await tok.encode('the cat', 'unaffable', { truncation: { maxLength: 5 } }),
    );
    expect((JSON.parse(readFileSync(path, 'utf8')) as { model: { type: string } }).model.type).toBe('WordPiece');
  });

  it('rejects malformed or non-WordPiece tokenizer.json with the path and the reason', () => {
    const write = (name: string, text: string): string => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const notJson = caught(() => WordPieceTokenizer.fromTokenizerJson(write('broken.json', '{"model": {')));
    expect(notJson.code).toBe('BAD_TOKENIZER_JSON');
    expect(notJson.message).toContain('broken.json');
    expect(notJson.message).toMatch(/not valid JSON/);
    const bpe = hubStyleJson(TINY_VOCAB) as { model: Record<string, unknown> };
    bpe.model['type'] = 'BPE';
    expect(caught(() => WordPieceTokenizer.fromTokenizerJson(write('bpe.json', JSON.stringify(bpe)))).message).toMatch(
      /"BPE", not "WordPiece"/,
    );
    const gap = hubStyleJson(TINY_VOCAB) as { model: { vocab: Record<string, number> } };
    gap.model.vocab['cat'] = 99;
    expect(caught(() => WordPieceTokenizer.fromTokenizerJson(write('gap.json', JSON.stringify(gap)))).message).toMatch(
      /ids must be 0 … 14/,
    );
    const noCls = hubStyleJson(TINY_VOCAB.filter((t) => t !== '[CLS]'));
    expect(
      caught(() => WordPieceTokenizer.fromTokenizerJson(write('nocls.json', JSON.stringify(noCls)))).message,
    ).toMatch(/lacks \[CLS\]/);
    const badPipeline = hubStyleJson(TINY_VOCAB) as Record<string, unknown>;
    badPipeline['normalizer'] = { type: 'NoSuchNormalizer' };
    const lib = caught(() => WordPieceTokenizer.fromTokenizerJson(write('badnorm.json', JSON.stringify(badPipeline))));
    expect(lib.code).toBe('BAD_TOKENIZER_JSON');
    expect(lib.message).toContain('badnorm.json');
    expect(caught(() => WordPieceTokenizer.fromTokenizerJson(join(dir, 'nope.json'))).code).toBe('FILE_NOT_FOUND');
  });
});

describe('bad vocabularies and bad input', () => {
  it('a missing vocab file names the path and what to pass', () => {
    const err = caught(() => WordPieceTokenizer.fromVocabFile(join(dir, 'missing', 'vocab.txt')));
    expect(err.code).toBe('FILE_NOT_FOUND');
    expect(err.file).toBe(join(dir, 'missing', 'vocab.txt'));
    expect(err.message).toContain(join(dir, 'missing', 'vocab.txt'));
    expect(err.message).toMatch(/BERT vocab\.txt/);
    expect(caught(() => WordPieceTokenizer.fromVocabFile(dir)).code).toBe('FILE_NOT_FOUND'); // a folder
  });

  it('rejects empty vocabularies, duplicates, empty lines and missing specials', () => {
    const empty = caught(() => WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'empty.txt', [])));
    expect(empty.code).toBe('BAD_VOCAB');
    expect(empty.message).toMatch(/empty \(0 tokens\)/);
    expect(
      caught(() => WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'dup.txt', [...TINY_VOCAB, 'cat']))).message,
    ).toMatch(/"cat" appears twice \(ids 6 and 15\)/);
    expect(
      caught(() => WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'hole.txt', [...TINY_VOCAB.slice(0, 6), '', 'x'])))
        .message,
    ).toMatch(/token 6 \(line 7\) is empty/);
    expect(
      caught(() => WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'nounk.txt', ['[PAD]', '[CLS]', '[SEP]', 'a'])))
        .message,
    ).toMatch(/lacks \[UNK\]/);
  });

  it('CRLF vocab files read as LF ones (trailing whitespace trimmed, as HF)', async () => {
    const p = join(dir, 'crlf.txt');
    writeFileSync(p, TINY_VOCAB.map((t) => t + '\r\n').join(''));
    const crlf = WordPieceTokenizer.fromVocabFile(p);
    expect(crlf.id).toBe(WordPieceTokenizer.fromVocabFile(vocabPath).id);
    expect(Array.from((await crlf.encode('the cat')).ids)).toEqual([2, 5, 6, 3]);
  });

  it('rejects bad options and inputs with INVALID_ARGUMENT', async () => {
    const tok = WordPieceTokenizer.fromVocabFile(vocabPath);
    await expect(tok.encode('the', null, { maxTokensPerSentence: 0 })).rejects.toThrow(
      /maxTokensPerSentence must be an integer/,
    );
    await expect(tok.encode('the', null, { truncation: { maxLength: 4.5 } })).rejects.toThrow(/truncation.maxLength/);
    await expect(tok.encode('the', null, { padding: { strategy: 'fixed', length: -1 } })).rejects.toThrow(
      /padding.length/,
    );
    await expect(tok.encode(42 as unknown as string)).rejects.toThrow(/text must be a string/);
    await expect(tok.encodeBatch([['a'] as unknown as [string, string]])).rejects.toThrow(/inputs\[0\]/);
    await expect(tok.encodeCorpus('the', { lineEndId: 99 })).rejects.toThrow(/lineEndId/);
  });
});

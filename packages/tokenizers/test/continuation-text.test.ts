// The text of a prompt and its sampled continuation: '##' pieces join their word, never the prompt's last word.
import { describe, expect, it } from 'vitest';
import {
  ContinuationStream,
  continuationText,
  type Detokenizer,
  PureWordPieceTokenizer,
  WordPieceTokenizer,
} from '@grassflow/tokenizers';
import { BERT_VOCAB, dataDir, dataPath, TINY_VOCAB, tempDir, writeVocab } from './helpers.js';

// ids of TINY_VOCAB: 3 [SEP] 5 the 6 cat 7 un 8 ##aff 9 ##able 10 , 12 . 14 ##a
const dir = tempDir();
const native = WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'vocab.txt', TINY_VOCAB));
const pure = PureWordPieceTokenizer.fromVocab(TINY_VOCAB);
const TOKENIZERS = [
  ['WordPieceTokenizer', native],
  ['PureWordPieceTokenizer', pure],
] as const;

/** n ids drawn from [0, size) by a fixed linear congruential sequence (the same ids on every run). */
function drawIds(n: number, size: number, seed: number): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % size;
  });
}

/** The pieces a stream returns for ids, joined after its promptText, and the number of ids it gave decode. */
function streamed(tok: Detokenizer, prompt: ArrayLike<number>, ids: readonly number[]) {
  let decoded = 0;
  const counting: Detokenizer = {
    decode: (xs) => ((decoded += xs.length), tok.decode(xs)),
    ...(tok.idToToken ? { idToToken: (id: number) => tok.idToToken?.(id) } : {}),
  };
  const s = new ContinuationStream(counting, prompt);
  const text = s.promptText + ids.map((id) => s.push(id)).join('');
  expect(text).toBe(s.text);
  return { text, decoded };
}

describe.each(TOKENIZERS)('continuationText with %s', (_name, tok) => {
  const prompt = Int32Array.from([5, 6]); // "the cat"

  it("a '##' piece right after the prompt starts a new word (decode alone glues it on)", () => {
    expect(tok.decode([5, 6, 14])).toBe('the cata'); // the defect: a new word glued onto the prompt's last one
    expect(continuationText(tok, prompt, [14])).toBe('the cat a');
    expect(continuationText(tok, prompt, [14, 8, 9, 12])).toBe('the cat aaffable.');
  });

  it("inside the continuation, '##' pieces join the word before, as the tokenizer split them", () => {
    expect(continuationText(tok, prompt, [7, 8, 9, 10, 5])).toBe('the cat unaffable, the');
    expect(continuationText(tok, prompt, [])).toBe('the cat');
  });

  it('streamed piece by piece: the pieces join to the whole text', () => {
    const ids = [14, 7, 8, 9, 10, 5, 6, 12];
    const s = new ContinuationStream(tok, prompt);
    const pieces = ids.map((id) => s.push(id));
    expect(pieces).toEqual([' a', ' un', 'aff', 'able', ',', ' the', ' cat', '.']);
    expect(s.promptText + pieces.join('')).toBe(continuationText(tok, prompt, ids));
    expect(s.text).toBe('the cat a unaffable, the cat.');
  });

  it('streamed: 300 ids of every kind (specials, pieces, punctuation) join to the whole text', () => {
    for (const seed of [1, 2, 3]) {
      const ids = drawIds(300, TINY_VOCAB.length, seed);
      expect(streamed(tok, prompt, ids).text).toBe(continuationText(tok, prompt, ids));
    }
  });
});

describe.skipIf(dataDir === undefined)('ContinuationStream on the BERT vocabulary (real file)', () => {
  it('2,000 random ids join to the whole text, each push decoding a window of at most 2·8 ids after the first', () => {
    const tok = WordPieceTokenizer.fromVocabFile(dataPath(BERT_VOCAB));
    const prompt = [1996, 2381, 1997]; // "the history of"
    for (const seed of [1, 2]) {
      const ids = drawIds(2000, tok.vocabSize, seed);
      const { text, decoded } = streamed(tok, prompt, ids);
      expect(text).toBe(continuationText(tok, prompt, ids));
      // the whole text each push would decode ≈ 2,000²/2 ids; the window decodes ≤ 16 a push, plus the window's moves
      expect(decoded).toBeLessThan(2000 * 40);
    }
  });
});

it('a tokenizer without word pieces (no idToToken): its decode as it is', () => {
  const words = ['<unk>', 'the', 'cat', 'sat'];
  const tok = { decode: (ids: ArrayLike<number>) => Array.from(ids, (i) => words[i]).join(' ') };
  expect(continuationText(tok, [1, 2], [3])).toBe('the cat sat');
  const ids = drawIds(100, words.length, 4);
  expect(streamed(tok, [1, 2], ids).text).toBe(continuationText(tok, [1, 2], ids));
});

// The text of a prompt and its sampled continuation: '##' pieces join their word, never the prompt's last word.
import { describe, expect, it } from 'vitest';
import {
  ContinuationStream,
  continuationText,
  PureWordPieceTokenizer,
  WordPieceTokenizer,
} from '@grassflow/tokenizers';
import { TINY_VOCAB, tempDir, writeVocab } from './helpers.js';

// ids of TINY_VOCAB: 3 [SEP] 5 the 6 cat 7 un 8 ##aff 9 ##able 10 , 12 . 14 ##a
const dir = tempDir();
const native = WordPieceTokenizer.fromVocabFile(writeVocab(dir, 'vocab.txt', TINY_VOCAB));
const pure = PureWordPieceTokenizer.fromVocab(TINY_VOCAB);
const TOKENIZERS = [
  ['WordPieceTokenizer', native],
  ['PureWordPieceTokenizer', pure],
] as const;

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
});

it('a tokenizer without word pieces (no idToToken): its decode as it is', () => {
  const words = ['<unk>', 'the', 'cat', 'sat'];
  const tok = { decode: (ids: ArrayLike<number>) => Array.from(ids, (i) => words[i]).join(' ') };
  expect(continuationText(tok, [1, 2], [3])).toBe('the cat sat');
});

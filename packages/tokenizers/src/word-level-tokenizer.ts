// Word-level tokenizer for Wikitext `.tokens` files (Node): the pure tokenizer's rules, plus files and a
// synchronous SHA-256 (node:crypto) for the id.
import { resolve } from 'node:path';
import { writeFileAtomicSync } from '@grassflow/checkpoints';
import { messageOf, TokenizerError } from './errors.js';
import { readFileOrThrow, sha256Hex } from './files.js';
import {
  badWordLevelVocabFile,
  parseWordLevelVocabFile,
  PureWordLevelTokenizer,
  wordLevelVocabFile,
  wordLevelVocabulary,
} from './word-level-pure.js';

export { EOS, UNK } from './word-level-pure.js';

/**
 * Word-level tokenizer of the Wikitext `.tokens` format: the encoding rules and vocabulary order of
 * {@link PureWordLevelTokenizer} (one implementation, shared with browsers), built from a corpus file, loaded from
 * and saved to a vocabulary file.
 */
export class WordLevelTokenizer extends PureWordLevelTokenizer {
  private constructor(words: readonly string[], source: string) {
    super(words, source, sha256Hex(words.join('\n')));
  }

  /** Build the vocabulary of a corpus (text or UTF-8 bytes) in order of first appearance (see class doc). */
  static fromCorpus(corpus: string | Uint8Array): WordLevelTokenizer {
    return new WordLevelTokenizer(wordLevelVocabulary(corpus), 'built from corpus');
  }

  /** Build the vocabulary of a corpus file (e.g. wiki.train.tokens); `FILE_NOT_FOUND` names a missing path. */
  static fromCorpusFile(path: string): WordLevelTokenizer {
    return WordLevelTokenizer.fromCorpus(
      readFileOrThrow(path, 'Corpus file', 'Pass the path of a Wikitext .tokens file, e.g. wiki.train.tokens.'),
    );
  }

  /** Tokenizer over a given word list (id = index); it must hold `<eos>` and `<unk>`, each word once. */
  static fromWords(words: readonly string[]): WordLevelTokenizer {
    const given: unknown = words; // callers from JavaScript may pass anything
    if (!Array.isArray(given)) throw new TokenizerError('INVALID_ARGUMENT', 'fromWords expects an array of words.');
    return new WordLevelTokenizer([...words], 'given words');
  }

  /** Load a vocabulary written by {@link save}; checks format, size and SHA-256. */
  static load(path: string): WordLevelTokenizer {
    const hint = 'Build one with WordLevelTokenizer.fromCorpusFile(trainPath).save(path).';
    const text = readFileOrThrow(path, 'Word-level vocabulary file', hint).toString('utf8');
    const { words, sha256 } = parseWordLevelVocabFile(text, path);
    if (sha256 !== sha256Hex(words.join('\n')))
      throw badWordLevelVocabFile(path, 'the SHA-256 of "words" does not match "sha256" (file edited or damaged)');
    try {
      return new WordLevelTokenizer(words, path);
    } catch (err) {
      throw badWordLevelVocabFile(path, messageOf(err));
    }
  }

  /** The vocabulary file's text (JSON, one line): what {@link save} writes and `PureWordLevelTokenizer` reads. */
  vocabFileText(): string {
    return JSON.stringify(wordLevelVocabFile(this.words(), sha256Hex(this.words().join('\n')))) + '\n';
  }

  /** Save the vocabulary as JSON (atomic: temp file + rename). */
  save(path: string): void {
    writeFileAtomicSync(resolve(path), this.vocabFileText()); // atomic: readers see the old file or the new one
  }

  /** Ids of a file's contents, read as bytes (no intermediate string). */
  encodeFile(path: string): Int32Array {
    return this.encode(readFileOrThrow(path, 'Text file', 'Pass the path of a Wikitext .tokens file.'));
  }
}

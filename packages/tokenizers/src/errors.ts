// Typed errors of @grassflow/tokenizers: each says what is wrong and what to do about it.
import { CodedError } from '@grassflow/checkpoints';

/** Machine-readable reason of a {@link TokenizerError}. */
export type TokenizerErrorCode =
  | 'FILE_NOT_FOUND' // a vocabulary or tokenizer.json path does not exist or is not a file
  | 'BAD_VOCAB' // a vocabulary is empty, has duplicates, or lacks a required token
  | 'BAD_TOKENIZER_JSON' // a tokenizer.json is not JSON, or not a WordPiece tokenizer
  | 'BAD_VOCAB_FILE' // a saved word-level vocabulary file is malformed or corrupted
  | 'INVALID_ARGUMENT' // an option or input value is out of range or of the wrong type
  | 'ENCODE_FAILED'; // the Hugging Face tokenizer rejected an input (message carries its reason)

/** Error thrown by every public function of this package; `code` says what failed, `file` which file. */
export class TokenizerError extends CodedError<TokenizerErrorCode> {
  override readonly name = 'TokenizerError';
}

/** Throw `INVALID_ARGUMENT` unless `value` is an integer in [min, max]. */
export function assertInteger(name: string, value: unknown, min: number, max = 2 ** 31 - 1): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TokenizerError(
      'INVALID_ARGUMENT',
      `${name} must be an integer in [${min}, ${max}], got ${String(value)}.`,
    );
  }
}

/** Message of an unknown thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

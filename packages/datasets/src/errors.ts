// Typed errors of @grassflow/datasets: every failure says what is wrong and what to do.
import { CodedError } from '@grassflow/checkpoints';

/** Machine-readable reason of a {@link DatasetError}. */
export type DatasetErrorCode =
  | 'FILE_MISSING' // a data file is absent and could not be downloaded
  | 'DOWNLOAD_DISABLED' // a data file is absent and downloads are switched off
  | 'DOWNLOAD_FAILED' // network error, refused connection, idle timeout
  | 'TIMED_OUT' // the overall deadline passed before the last byte
  | 'HTTP_STATUS' // the server answered with a non-2xx status
  | 'TOO_MANY_REDIRECTS'
  | 'SIZE_LIMIT' // more bytes than declared or than the allowed maximum
  | 'TRUNCATED' // fewer bytes than the server declared
  | 'CHECKSUM_MISMATCH'
  | 'UNSAFE_ARCHIVE' // entry outside the target folder, symlink, or too large
  | 'ARCHIVE_INVALID' // not a readable zip, or a member is missing
  | 'NOT_WRITABLE' // the target folder cannot be written
  | 'MALFORMED_JSONL'
  | 'INVALID_ARGUMENT'
  | 'UNKNOWN_DATASET';

/** Error thrown by every public function of this package; `code` says what failed, `file` which file. */
export class DatasetError extends CodedError<DatasetErrorCode> {
  override readonly name = 'DatasetError';
}

/** Throw `INVALID_ARGUMENT` unless `value` is an integer in [min, max]. */
export function assertInteger(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new DatasetError('INVALID_ARGUMENT', `${name} must be an integer in [${min}, ${max}], got ${String(value)}.`);
  }
}

/** Message of an unknown thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sequence length L of a batching option object: `seqLen` (the project's one name for it), or `blockSize`, its
 * deprecated alias kept for existing code. Returns L and the name the caller used, so messages speak the caller's terms.
 */
export interface SeqLenOption {
  /** L: tokens per input row. */
  seqLen?: number;
  /** @deprecated Alias of `seqLen`. */
  blockSize?: number;
}

/** L from {@link SeqLenOption}: exactly one of `seqLen` / `blockSize` (or both equal), an integer ≥ 1. */
export function resolveSeqLen(opts: SeqLenOption): { seqLen: number; name: 'seqLen' | 'blockSize' } {
  const { seqLen, blockSize } = opts;
  if (seqLen !== undefined && blockSize !== undefined && seqLen !== blockSize) {
    throw new DatasetError(
      'INVALID_ARGUMENT',
      `seqLen ${seqLen} and its alias blockSize ${blockSize} disagree: give seqLen only.`,
    );
  }
  const name = seqLen !== undefined ? 'seqLen' : 'blockSize';
  const value = seqLen ?? blockSize;
  if (value === undefined) throw new DatasetError('INVALID_ARGUMENT', 'seqLen (tokens per row) is required.');
  assertInteger(name, value, 1);
  return { seqLen: value, name };
}

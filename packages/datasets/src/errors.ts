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

/** Sequence length L of a batching option object (`seqLen`, the project's one name for it). */
export interface SeqLenOption {
  /** L: tokens per input row. */
  seqLen: number;
}

/** L from {@link SeqLenOption}, checked to be an integer ≥ 1 (also for callers without types). */
export function resolveSeqLen(opts: Partial<SeqLenOption>): { seqLen: number; name: 'seqLen' } {
  const { seqLen } = opts;
  if (seqLen === undefined) throw new DatasetError('INVALID_ARGUMENT', 'seqLen (tokens per row) is required.');
  assertInteger('seqLen', seqLen, 1);
  return { seqLen, name: 'seqLen' };
}

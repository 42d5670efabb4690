// Typed errors of @grassflow/datasets: every failure says what is wrong and what to do.
import { CodedError, type DownloadErrorCode } from '@grassflow/checkpoints';

/** Machine-readable reason of a {@link DatasetError}: the downloader's codes, and the data folder's own. */
export type DatasetErrorCode =
  | DownloadErrorCode // a download failed (its code passed on as it is)
  | 'FILE_MISSING' // a data file is absent and could not be downloaded
  | 'DOWNLOAD_DISABLED' // a data file is absent and downloads are switched off
  | 'UNSAFE_ARCHIVE' // entry outside the target folder, symlink, or too large
  | 'ARCHIVE_INVALID' // not a readable zip, or a member is missing
  | 'MALFORMED_JSONL'
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

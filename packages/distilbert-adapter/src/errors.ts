// Typed errors of @grassflow/distilbert-adapter: every failure says what is wrong and what to do.
import { CodedError } from '@grassflow/checkpoints';

/** Machine-readable reason of a {@link DistilBertError}. */
export type DistilBertErrorCode =
  | 'NOT_FOUND' // a folder or file is absent
  | 'PYTORCH_ONLY' // the folder holds pytorch_model.bin but no model.safetensors
  | 'INVALID_CONFIG' // config.json is not JSON, misses a field, or a field is out of range
  | 'UNSUPPORTED_CONFIG' // a valid DistilBERT option this package does not implement
  | 'TENSOR_MISSING' // a tensor the config needs is not in model.safetensors
  | 'TENSOR_SHAPE' // a tensor has a shape other than the config implies
  | 'TENSOR_DTYPE' // a tensor's dtype is not a float type
  | 'TENSOR_UNEXPECTED' // a backbone tensor the config does not account for (e.g. an extra layer)
  | 'CORRUPT_FILE' // a file fails its safetensors, size or SHA-256 check
  | 'OFFLINE' // files are missing and downloads are switched off
  | 'DOWNLOAD_FAILED' // network error, HTTP status, size bound, truncated download
  | 'CHECKSUM_MISMATCH' // a downloaded file's SHA-256 differs from the known one
  | 'INVALID_MODEL_ID'
  | 'INVALID_INPUT' // forward() inputs of the wrong shape, dtype or range
  | 'INVALID_ARGUMENT'
  | 'NO_FEATURE_CACHE' // forwardCached() without a feature cache, or in trainable mode
  | 'DISPOSED'; // the encoder was used after dispose()

/** Error thrown by every public function of this package; `code` says what failed, `file` which file. */
export class DistilBertError extends CodedError<DistilBertErrorCode> {
  override readonly name = 'DistilBertError';
}

/** Message of an unknown thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

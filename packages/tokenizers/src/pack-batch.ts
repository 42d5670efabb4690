// Packing a padded batch of WordPiece encodings into row-major (B, L) matrices for a model.
import { TokenizerError } from './errors.js';
import type { WordPieceEncoding } from './wordpiece-options.js';

/** A batch as flat row-major matrices of shape (B, L). */
export interface PackedBatch {
  readonly batchSize: number; // B
  readonly seqLen: number; // L
  readonly ids: Int32Array; // (B, L)
  readonly typeIds: Int32Array; // (B, L)
  readonly attentionMask: Int32Array; // (B, L)
}

/**
 * Stack encodings of equal length L into (B, L) matrices: row b = encodings[b]. Encode with
 * `padding: { strategy: 'longest' }` (or `fixed`) first; unequal lengths throw `INVALID_ARGUMENT`.
 */
export function packBatch(encodings: readonly WordPieceEncoding[]): PackedBatch {
  const B = encodings.length;
  const L = encodings[0]?.ids.length ?? 0;
  const ids = new Int32Array(B * L);
  const typeIds = new Int32Array(B * L);
  const attentionMask = new Int32Array(B * L);
  encodings.forEach((e, b) => {
    if (e.ids.length !== L) {
      throw new TokenizerError(
        'INVALID_ARGUMENT',
        `packBatch: encoding ${b} has length ${e.ids.length}, encoding 0 has ${L}; encode with padding: { strategy: 'longest' } first.`,
      );
    }
    ids.set(e.ids, b * L);
    typeIds.set(e.typeIds, b * L);
    attentionMask.set(e.attentionMask, b * L);
  });
  return { batchSize: B, seqLen: L, ids, typeIds, attentionMask };
}

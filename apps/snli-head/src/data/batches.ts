// Batches of encoded SNLI pairs as tensors: trimmed to the batch's longest sentence, rounded up to the window.
import * as tf from '@tensorflow/tfjs-core';
import type { EncodedSnli } from '@grassflow/datasets';
import type { SentenceInput } from '../model/snli-model.js';

/** Precomputed frozen-backbone features per pair: premise/hypothesis [len, D] row-major, real tokens only. */
export interface FeatureTable {
  dim: number;
  premise: Float32Array[];
  hypothesis: Float32Array[];
}

/** Rows of a batch, and the padded length T used for both sentences. */
export interface BatchRows {
  rows: ArrayLike<number>;
  T: number;
}

/** T = the longest sentence of the rows, rounded up to a multiple of `multiple` (at most the encoded length). */
export function batchLength(data: EncodedSnli, rows: ArrayLike<number>, multiple: number): number {
  let n = 1;
  for (let b = 0; b < rows.length; b++) {
    const r = rows[b] as number;
    n = Math.max(n, data.premiseLength[r] as number, data.hypothesisLength[r] as number);
  }
  return Math.min(Math.ceil(n / multiple) * multiple, Math.ceil(data.maxTokens / multiple) * multiple);
}

/** Sentence inputs [B, T] (ids, or features [B, T, D] from `features`) and masks for `which` side of the rows. */
export function sentenceInput(
  data: EncodedSnli,
  which: 'premise' | 'hypothesis',
  batch: BatchRows,
  features: FeatureTable | null,
): SentenceInput {
  const { rows, T } = batch;
  const B = rows.length;
  const S = data.maxTokens;
  const src = which === 'premise' ? data.premise : data.hypothesis;
  const lens = which === 'premise' ? data.premiseLength : data.hypothesisLength;
  const mask = new Float32Array(B * T);
  for (let b = 0; b < B; b++) mask.fill(1, b * T, b * T + Math.min(T, lens[rows[b] as number] as number));
  const maskT = tf.tensor2d(mask, [B, T]);
  if (features !== null) {
    const D = features.dim;
    const x = new Float32Array(B * T * D);
    const table = which === 'premise' ? features.premise : features.hypothesis;
    for (let b = 0; b < B; b++) {
      const f = table[rows[b] as number] as Float32Array; // [len, D]
      x.set(f.subarray(0, Math.min(f.length, T * D)), b * T * D);
    }
    return { features: tf.tensor3d(x, [B, T, D]), mask: maskT };
  }
  const ids = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    const r = rows[b] as number;
    const w = Math.min(T, S);
    ids.set(src.subarray(r * S, r * S + w), b * T);
  }
  return { ids: tf.tensor2d(ids, [B, T], 'int32'), mask: maskT };
}

/** Gold labels of the rows, int32 [B]. */
export function labelTensor(data: EncodedSnli, rows: ArrayLike<number>): tf.Tensor1D {
  return tf.tensor1d(
    Int32Array.from(rows, (r) => data.labels[r] as number),
    'int32',
  );
}

/** Real tokens (both sentences) of the rows: the tokens/s counter. */
export function tokenCount(data: EncodedSnli, rows: ArrayLike<number>): number {
  let n = 0;
  for (let b = 0; b < rows.length; b++)
    n += (data.premiseLength[rows[b] as number] as number) + (data.hypothesisLength[rows[b] as number] as number);
  return n;
}

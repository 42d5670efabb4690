// The --backbone choice: 'none' (trainable embedding encoder) or a frozen DistilBERT with its feature cache.
import type { EncodedSnli } from '@grassflow/datasets';
import { loadDistilBert, type DistilBertEncoder } from '@grassflow/distilbert-adapter';
import type { FeatureTable } from './batches.js';

/** Memory the in-memory feature tables may take (float32 features of every real token of the used splits). */
export const MAX_FEATURE_BYTES = 6 * 2 ** 30;

/** A frozen DistilBERT (feature cache on) from a folder or hub id. */
export async function loadFrozenBackbone(dirOrId: string): Promise<DistilBertEncoder> {
  return loadDistilBert(dirOrId, { mode: 'frozen', featureCache: true });
}

/** Bytes the features of `data` would take: Σ real tokens × D × 4. */
export function featureBytes(data: EncodedSnli, dim: number): number {
  let n = 0;
  for (let i = 0; i < data.count; i++) n += (data.premiseLength[i] as number) + (data.hypothesisLength[i] as number);
  return n * dim * 4;
}

/**
 * Last hidden states of every sentence of `data` through the frozen encoder, via `forwardCached` (computed once,
 * then read from the on-disk feature cache by later runs), kept in memory as [len, D] per sentence: the training
 * loop asks for batches synchronously, so features must be at hand. `onProgress(done, total)` reports sentences.
 */
export async function computeFeatures(
  encoder: DistilBertEncoder,
  data: EncodedSnli,
  onProgress?: (done: number, total: number) => void,
): Promise<FeatureTable> {
  const D = encoder.config.dim;
  const S = data.maxTokens;
  const out: FeatureTable = {
    dim: D,
    premise: new Array<Float32Array>(data.count),
    hypothesis: new Array<Float32Array>(data.count),
  };
  const B = 32;
  for (const which of ['premise', 'hypothesis'] as const) {
    const ids = which === 'premise' ? data.premise : data.hypothesis;
    const lens = which === 'premise' ? data.premiseLength : data.hypothesisLength;
    const table = out[which];
    for (let i0 = 0; i0 < data.count; i0 += B) {
      const rows = Math.min(B, data.count - i0);
      let T = 1;
      for (let b = 0; b < rows; b++) T = Math.max(T, lens[i0 + b] as number);
      const idArr = new Int32Array(rows * T);
      const mask = new Int32Array(rows * T);
      for (let b = 0; b < rows; b++) {
        const n = lens[i0 + b] as number;
        idArr.set(ids.subarray((i0 + b) * S, (i0 + b) * S + n), b * T);
        mask.fill(1, b * T, b * T + n);
      }
      const r = await encoder.forwardCached({ data: idArr, shape: [rows, T] }, { data: mask, shape: [rows, T] });
      const h = (await r.lastHiddenState.data()) as Float32Array; // [rows, T, D]
      r.lastHiddenState.dispose();
      for (let b = 0; b < rows; b++) table[i0 + b] = h.slice(b * T * D, (b * T + (lens[i0 + b] as number)) * D);
      onProgress?.(which === 'premise' ? i0 + rows : data.count + i0 + rows, 2 * data.count);
    }
  }
  return out;
}

// pluckerBatch in plain TypeScript: one pass over rows, no allocation in the loop.
import type { BatchArray } from './batch-input.js';

/**
 * Writes p_ij = a_i b_j − a_j b_i (i < j, lexicographic order) for each of the N rows of
 * a = zPrev, b = zCur ([N, r] row-major) into out ([N, r(r−1)/2] row-major). No checks.
 * The pair order is produced by the nested i < j loops, so no index tables are read; each row's
 * a_i, b_i are hoisted out of the inner loop, and the output index only increments.
 */
export function pluckerBatchTsInto(zPrev: BatchArray, zCur: BatchArray, N: number, r: number, out: Float32Array): void {
  let o = 0;
  for (let n = 0; n < N; n++) {
    const base = n * r; // row n of [N, r]
    const end = base + r;
    for (let i = base; i < end; i++) {
      const ai = zPrev[i]!;
      const bi = zCur[i]!;
      for (let j = i + 1; j < end; j++) out[o++] = ai * zCur[j]! - zPrev[j]! * bi;
    }
  }
}

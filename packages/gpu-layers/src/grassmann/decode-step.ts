// The mixer's decoding step: new positions t0 … t0 + L − 1 mixed with the reduced states z of the positions before
// them (the ring buffer of ring-state.ts), in few kernels: on wasm each kernel has a fixed cost that dominates at
// one token. Inference only (its gate is a fused product with a sigmoid, which tfjs cannot differentiate).
import * as tf from '@tensorflow/tfjs-core';
import { pairCounts, projectAndGate } from './gate.js';
import { rows } from './pair-sum.js';
import { pluckerDim, pluckerPairs } from './plucker.js';
import type { GrassmannMixingOptions, GrassmannMixingPast, GrassmannMixingWeights } from './types.js';

/** Refuse a past that cannot serve the new positions: wrong shape, too few states, or a bidirectional layer. */
function checkPast(
  zPast: tf.Tensor3D | null,
  t0: number,
  B: number,
  r: number,
  offsets: readonly number[],
  direction: 'causal' | 'bidirectional',
): void {
  const m = zPast === null ? 0 : zPast.shape[1];
  if (!Number.isInteger(t0) || t0 < 0)
    throw new RangeError(`grassmannMixing: past.t0 must be an integer >= 0, got ${t0}`);
  if (direction === 'bidirectional' && (t0 > 0 || m > 0)) {
    throw new RangeError('grassmannMixing: a bidirectional layer reads future positions and takes no past');
  }
  if (zPast !== null && (zPast.rank !== 3 || zPast.shape[0] !== B || zPast.shape[2] !== r)) {
    throw new RangeError(`grassmannMixing: past.z must be [${B}, m, ${r}], got [${zPast.shape.join(', ')}]`);
  }
  const need = Math.min(t0, Math.max(...offsets));
  if (m < need || m > t0) {
    throw new RangeError(`grassmannMixing: at t0 = ${t0} past.z needs between ${need} and ${t0} positions, got ${m}`);
  }
}

/** Index arrays of the two gathers, by (r, m, L, live offsets); a decoding step asks for the same ones every token. */
const gatherIndexCache = new Map<string, { aIdx: Int32Array; bIdx: Int32Array; missing: boolean }>();

/**
 * Flat indices into zAll = [past.z; z] (rows 0 … n − 1 of r floats, row n a zero row when `missing`) of the
 * partners [a_i | a_j] [O, L, 2C] and the new positions [b_j | b_i] [L, 2C] of grassmannMixingStep's pairs.
 */
function pairGatherIndices(
  r: number,
  m: number,
  L: number,
  live: readonly number[],
): { aIdx: Int32Array; bIdx: Int32Array; missing: boolean } {
  const key = `${r}:${m}:${L}:${live.join(',')}`;
  const hit = gatherIndexCache.get(key);
  if (hit !== undefined) return hit;
  const C = pluckerDim(r);
  const O = live.length;
  const n = m + L;
  const pairs = pluckerPairs(r);
  const partnerRow = (o: number, k: number) => m + k - (live[o] as number); // < 0: no partner
  const missing = live.some((_, o) => partnerRow(o, 0) < 0);
  const zero = missing ? n : -1; // row n: a zero row appended for missing partners (p = 0 → p̂ = 0)
  const aIdx = new Int32Array(O * L * 2 * C);
  const bIdx = new Int32Array(L * 2 * C);
  for (let k = 0; k < L; k++) {
    pairs.forEach(([i, j], c) => {
      bIdx[k * 2 * C + c] = (m + k) * r + j;
      bIdx[k * 2 * C + C + c] = (m + k) * r + i;
    });
    for (let o = 0; o < O; o++) {
      const row = partnerRow(o, k) >= 0 ? partnerRow(o, k) : zero;
      const at = (o * L + k) * 2 * C;
      pairs.forEach(([i, j], c) => {
        aIdx[at + c] = row * r + i;
        aIdx[at + C + c] = row * r + j;
      });
    }
  }
  if (gatherIndexCache.size >= 64) gatherIndexCache.clear(); // prompts of many lengths: keep it small
  const entry = { aIdx, bIdx, missing };
  gatherIndexCache.set(key, entry);
  return entry;
}

/**
 * Mixing of h [B, L, d] at positions past.t0 … past.t0 + L − 1 given past.z (the z of the m positions before,
 * [B, m, r], m ≥ min(t0, max Δ)); returns the output [B, L, d] and the past of the next call: the last max(Δ) z's.
 * Equal to rows t0 … of grassmannMixing on the whole sequence. All stacked pairs come from two gathers into
 * zAll = [past.z; z] (flattened per sequence): the partners as [a_i | a_j] and the new positions as [b_j | b_i],
 * so one product gives [a_i b_j | a_j b_i] and p its two halves' difference.
 */
export function grassmannMixingStep(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions & { past: GrassmannMixingPast },
): { output: tf.Tensor3D; next: GrassmannMixingPast } {
  const [B, L, d] = h.shape;
  const r = w.wRed.shape[1];
  const C = pluckerDim(r);
  const { offsets, eps, direction, past } = options;
  const t0 = past.t0;
  const zPast = past.z;
  checkPast(zPast, t0, B, r, offsets, direction);
  const m = zPast === null ? 0 : zPast.shape[1];
  const n = m + L;
  return tf.tidy(() => {
    const z = tf.reshape<tf.Rank.R3>(tf.fused.matMul({ a: tf.reshape(h, [B * L, d]), b: w.wRed, bias: w.bRed }), [
      B,
      L,
      r,
    ]); // [B, L, r]
    const zAll = zPast === null ? z : tf.concat<tf.Tensor3D>([zPast, z], 1); // [B, n, r], positions t0 − m …
    const live = offsets.filter((delta) => n - delta > 0); // offsets with a pair for the last new row
    let pSum: tf.Tensor3D | null = null; // Σ p̂ over existing pairs [B, L, C]
    if (live.length > 0) {
      const O = live.length;
      const { aIdx, bIdx, missing } = pairGatherIndices(r, m, L, live);
      const rowsIn = missing ? n + 1 : n;
      const flat = tf.reshape(missing ? tf.concat([zAll, tf.zeros([B, 1, r])], 1) : zAll, [B, rowsIn * r]);
      const a = tf.reshape(tf.gather(flat, tf.tensor1d(aIdx, 'int32'), 1), [B, O, L, 2 * C]); // [a_i | a_j]
      const b = tf.reshape(tf.gather(flat, tf.tensor1d(bIdx, 'int32'), 1), [B, 1, L, 2 * C]); // [b_j | b_i]
      const prod = tf.mul(a, b); // [a_i b_j | a_j b_i]
      const p = tf.sub(tf.slice(prod, [0, 0, 0, 0], [B, O, L, C]), tf.slice(prod, [0, 0, 0, C], [B, O, L, C]));
      const pHat = tf.mul(p, tf.rsqrt(tf.add(tf.sum(tf.square(p), -1, true), eps * eps))); // [B, O, L, C]
      pSum = O === 1 ? tf.reshape<tf.Rank.R3>(pHat, [B, L, C]) : tf.sum<tf.Tensor3D>(pHat, 1);
    }
    const { output } = projectAndGate(h, pSum, pairCounts(L, offsets, 'causal', t0), w, options, true);
    const keep = Math.min(n, Math.max(...offsets));
    return { output, next: { z: rows(zAll, n - keep, keep), t0: t0 + L } };
  });
}

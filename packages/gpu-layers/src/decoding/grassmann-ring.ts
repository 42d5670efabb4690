// Incremental Grassmann mixing: the last max(Δ) reduced states z of a layer in a ring buffer (paper-notes §1, §5).
import * as tf from '@tensorflow/tfjs-core';
import { pluckerDim } from '../config.js';
import { pluckerPairs } from '../grassmann-mixing.js';
import type { GrassmannBlock } from '../layers/grassmann-block.js';
import { matmul } from '../ops.js';
import type { LayerDecodingState } from './layer-state.js';

/** p̂ = p / sqrt(‖p‖² + ε²) over the last axis, as grassmannMixing computes it. */
function normalisePlucker(p: tf.Tensor3D, eps: number): tf.Tensor3D {
  return tf.div(p, tf.sqrt(tf.add(tf.sum(tf.square(p), -1, true), eps * eps)));
}

/** Number of offsets Δ (duplicates counted) with t − Δ ≥ 0: the pairs that exist at position t. */
function pairCount(t: number, offsets: readonly number[]): number {
  return offsets.reduce((n, delta) => n + (t - delta >= 0 ? 1 : 0), 0);
}

/**
 * Decoding state of one GrassmannBlock: a ring buffer of M = max(Δ) slots, slot (t mod M) holding z_t [B, r].
 * Pairs need z_{t−Δ} for Δ ≤ M only, so the state is B·M·r floats whatever the position — constant memory,
 * where attention's key/value cache grows with the context. Writing a slot replaces one [B, r] tensor; nothing
 * else is copied.
 */
export class GrassmannRingState implements LayerDecodingState {
  /** M = max(Δ) of the layer's offsets. */
  readonly capacity: number;
  private readonly slots: (tf.Tensor2D | null)[];
  /**
   * Column indices [i_0 … i_{C−1} | j_0 … j_{C−1}] of the pairs (i, j) in lexicographic order: gathering them from
   * z gives [z_i | z_j], the same values as grassmannMixing's product z·S with its 0/1 selection matrix S, in one
   * gather instead of a matrix product (on wasm every product has a fixed cost that dominates at one token).
   */
  private readonly pairIndex: tf.Tensor1D;

  constructor(private readonly block: GrassmannBlock) {
    this.capacity = Math.max(...block.offsets);
    this.slots = Array.from({ length: this.capacity }, () => null);
    const pairs = pluckerPairs(block.r);
    this.pairIndex = tf.tensor1d([...pairs.map(([i]) => i), ...pairs.map(([, j]) => j)], 'int32');
  }

  /**
   * Mixer output [B, T, d] for inputs u [B, T, d] at positions t0 … t0 + T − 1, with the same formulas as
   * grassmannMixing over the whole sequence: z_t = W_red u_t + b_red; for each Δ with t − Δ ≥ 0 the Plücker
   * coordinates p of (z_{t−Δ}, z_t), p̂ = p/sqrt(‖p‖² + ε²); g_t = W_plu mean_Δ(p̂) + b_plu (0 where no pair
   * exists); α = σ(W_gate [u; g] + b_gate); out = α⊙u + (1−α)⊙g. Then stores the new z's (the last M of them).
   */
  mix(u: tf.Tensor3D, t0: number): tf.Tensor3D {
    const [B, T, d] = u.shape;
    const { r, offsets, eps } = this.block;
    const C = pluckerDim(r);
    const M = this.capacity;
    const w = this.block.mixerWeights();
    const m = Math.min(t0, M); // z's of positions t0 − m … t0 − 1 are in the ring
    const out = tf.tidy(() => {
      const u2 = tf.reshape(u, [B * T, d]); // [B·T, d]
      const z = tf.add(matmul(u2, w.wRed), w.bRed) as tf.Tensor2D; // [B·T, r]
      if (T === 1) return tf.reshape(this.mixOne(u2 as tf.Tensor2D, z, t0), [B, 1, d]) as tf.Tensor3D;
      const z3 = tf.reshape(z, [B, T, r]) as tf.Tensor3D; // [B, T, r]
      const past = this.history(t0, m); // [B, m, r] or null
      const z3All = past === null ? z3 : tf.concat([past, z3], 1); // [B, m + T, r]: positions t0 − m … t0 + T − 1
      const n = m + T;
      const zs = tf.reshape(tf.gather(tf.reshape(z3All, [B * n, r]), this.pairIndex, 1), [B, n, 2 * C]) as tf.Tensor3D; // [B, m+T, 2C] = [z_i | z_j]
      const cur = tf.slice(zs, [0, m, 0], [B, T, 2 * C]); // [B, T, 2C]: the new positions
      const zi = tf.slice(cur, [0, 0, 0], [B, T, C]); // [B, T, C]
      const zj = tf.slice(cur, [0, 0, C], [B, T, C]); // [B, T, C]

      const terms: tf.Tensor3D[] = [];
      for (const delta of offsets) {
        // New position k pairs with row m + k − Δ of zs; that row exists exactly when t0 + k − Δ ≥ 0.
        const lo = m - delta;
        const have = T + Math.min(lo, 0); // new positions whose partner exists (the last `have` of them)
        if (have <= 0) continue; // no new position has a pair at this offset
        const kept = tf.slice(zs, [0, Math.max(lo, 0), 0], [B, have, 2 * C]); // [B, have, 2C]
        const partner = have === T ? kept : tf.pad(kept, [[0, 0], [T - have, 0], [0, 0]]); // [B, T, 2C], zeros where no pair
        const pi = tf.slice(partner, [0, 0, 0], [B, T, C]); // z_{t−Δ,i}
        const pj = tf.slice(partner, [0, 0, C], [B, T, C]); // z_{t−Δ,j}
        terms.push(normalisePlucker(tf.sub(tf.mul(pi, zj), tf.mul(pj, zi)) as tf.Tensor3D, eps)); // [B, T, C]
      }
      const counts = Array.from({ length: T }, (_, k) => pairCount(t0 + k, offsets));
      const invCount = tf.tensor3d(counts.map((c) => (c > 0 ? 1 / c : 0)), [1, T, 1]); // [1, T, 1]
      const hasPair = tf.tensor3d(counts.map((c) => (c > 0 ? 1 : 0)), [1, T, 1]); // [1, T, 1]
      let g: tf.Tensor3D;
      if (terms.length === 0) {
        g = tf.zeros([B, T, d]);
      } else {
        const pMean = tf.mul(terms.length === 1 ? (terms[0] as tf.Tensor3D) : tf.addN(terms), invCount); // [B, T, C]
        const proj = tf.reshape(matmul(tf.reshape(pMean, [B * T, C]), w.wPlu), [B, T, d]); // [B, T, d]
        g = tf.add(proj, tf.mul(tf.reshape(w.bPlu, [1, 1, d]), hasPair)); // [B, T, d], 0 where no pair
      }
      const ug = tf.concat([u2, tf.reshape(g, [B * T, d])], 1); // [B·T, 2d], order [u; g]
      const alpha = tf.reshape(tf.sigmoid(tf.add(matmul(ug, w.wGate), w.bGate)), [B, T, d]); // [B, T, d]
      this.store(t0, z3);
      return tf.add(g, tf.mul(alpha, tf.sub(u, g))) as tf.Tensor3D; // α⊙u + (1−α)⊙g
    });
    return out;
  }

  /**
   * One position t0 (T = 1), u2 [B, d] and its z [B, r]: only the partners z_{t0−Δ} of existing pairs are read
   * from the ring, and the mean's 1/count is a number. Same formulas and operation order as the chunk path.
   */
  private mixOne(u2: tf.Tensor2D, z: tf.Tensor2D, t0: number): tf.Tensor2D {
    const [B, d] = u2.shape;
    const C = pluckerDim(this.block.r);
    const M = this.capacity;
    const w = this.block.mixerWeights();
    const partners = this.block.offsets.filter((delta) => t0 - delta >= 0).map((delta) => this.slots[(t0 - delta) % M] as tf.Tensor2D); // k × [B, r]
    const k = partners.length;
    let g: tf.Tensor2D;
    if (k === 0) {
      g = tf.zeros([B, d]); // no pair exists: g = 0
    } else {
      const coords = tf.gather(tf.concat([z, ...partners], 0), this.pairIndex, 1); // [(1 + k)·B, 2C]: rows z_t, then each partner
      const zi = tf.slice(coords, [0, 0], [B, C]); // [B, C]
      const zj = tf.slice(coords, [0, C], [B, C]); // [B, C]
      const pc = tf.reshape(tf.slice(coords, [B, 0], [k * B, 2 * C]), [k, B, 2 * C]); // [k, B, 2C]
      const pi = tf.slice(pc, [0, 0, 0], [k, B, C]); // z_{t−Δ,i}
      const pj = tf.slice(pc, [0, 0, C], [k, B, C]); // z_{t−Δ,j}
      const pHat = normalisePlucker(tf.sub(tf.mul(pi, zj), tf.mul(pj, zi)) as tf.Tensor3D, this.block.eps); // [k, B, C]
      const pSum = k === 1 ? tf.reshape(pHat, [B, C]) : tf.sum(pHat, 0); // [B, C]
      const pMean = tf.mul(pSum, 1 / k); // [B, C]
      g = tf.add(matmul(pMean, w.wPlu), w.bPlu) as tf.Tensor2D; // [B, d]
    }
    const alpha = tf.sigmoid(tf.add(matmul(tf.concat([u2, g], 1), w.wGate), w.bGate)); // [B, d], input order [u; g]
    this.store(t0, tf.reshape(z, [B, 1, this.block.r]) as tf.Tensor3D);
    return tf.add(g, tf.mul(alpha, tf.sub(u2, g))) as tf.Tensor2D; // α⊙u + (1−α)⊙g
  }

  /** z of positions t0 − m … t0 − 1 from the ring, oldest first: [B, m, r] (null when m = 0). */
  private history(t0: number, m: number): tf.Tensor3D | null {
    if (m === 0) return null;
    const M = this.capacity;
    const parts: tf.Tensor2D[] = [];
    for (let p = t0 - m; p < t0; p++) {
      const slot = this.slots[p % M];
      if (slot === null || slot === undefined) throw new Error(`internal: ring slot of position ${p} is empty`);
      parts.push(slot);
    }
    return tf.stack(parts, 1) as tf.Tensor3D; // [B, m, r]
  }

  /** Write z of positions t0 … t0 + T − 1 (z3 [B, T, r]) into their slots; only the last M can matter. */
  private store(t0: number, z3: tf.Tensor3D): void {
    const [B, T, r] = z3.shape;
    const M = this.capacity;
    for (let p = Math.max(t0, t0 + T - M); p < t0 + T; p++) {
      const fresh = tf.keep(tf.reshape(tf.slice(z3, [0, p - t0, 0], [B, 1, r]), [B, r]) as tf.Tensor2D); // [B, r]
      this.slots[p % M]?.dispose();
      this.slots[p % M] = fresh;
    }
  }

  bytes(): number {
    return this.slots.reduce((n, s) => n + (s === null ? 0 : s.size * 4), 0);
  }

  reset(): void {
    this.slots.forEach((s, k) => {
      s?.dispose();
      this.slots[k] = null;
    });
  }

  dispose(): void {
    this.reset();
    this.pairIndex.dispose();
  }
}

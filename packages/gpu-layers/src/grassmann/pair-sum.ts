// The training path of the mixer's Plücker part: Σ_Δ p̂(z_{t−Δ}, z_t) over a whole sequence, every offset stacked
// into one [B, O, L, C] tensor, with its analytic gradient (fusedPairSum). grassmannMixing calls it.
import * as tf from '@tensorflow/tfjs-core';
import { FUSED, hasFusedKernel } from '../backend/wasm-fused.js';
import { matMulT, matmulConst, sumTensors } from '../ops/ops.js';
import { pluckerDim, pluckerSelection } from './plucker.js';

/** The two halves z·S_i and z·S_j of the pair coordinates [z_i | z_j] (see pluckerSelection). */
interface PairHalves<T extends tf.Tensor> {
  /** z_i of every pair (i, j) */ i: T;
  /** z_j of every pair (i, j) */ j: T;
}

/** Sub-tensor x[:, from … from + n − 1] along axis 1 with n ≥ 1 rows: [B, ·, K] → [B, n, K]. */
export function rows(x: tf.Tensor3D, from: number, n: number): tf.Tensor3D {
  const [B, , K] = x.shape;
  return tf.slice(x, [0, from, 0], [B, n, K]);
}

/**
 * z_i and z_j of every pair for z [B, L, r], [B, L, C] each: two products with the 0/1 halves S_i, S_j of the
 * selection matrix (their gradient is a product too). Two halves instead of one [B, L, 2C] tensor: no slicing of
 * the last axis later.
 */
function pairHalves(z: tf.Tensor3D): PairHalves<tf.Tensor3D> {
  const [B, L, r] = z.shape;
  const C = pluckerDim(r);
  const z2 = tf.reshape(z, [B * L, r]); // [B·L, r]
  const half = (from: number): tf.Tensor3D =>
    tf.reshape<tf.Rank.R3>(matmulConst(z2, tf.slice(pluckerSelection(r), [0, from], [r, C])), [B, L, C]);
  return { i: half(0), j: half(C) };
}

/**
 * The partners x_{t−Δ} of every position for each offset Δ in `live`, stacked [B, O, L, K] (O = live.length): one
 * slice per offset, padded with zero rows in front where t − Δ < 0.
 */
function partnerStack(x: tf.Tensor3D, live: readonly number[]): tf.Tensor4D {
  const [B, L, K] = x.shape;
  const shifted = live.map((delta) => {
    const kept = rows(x, 0, L - delta); // [B, L − Δ, K]
    return tf.pad(kept, [
      [0, 0],
      [delta, 0],
      [0, 0],
    ]); // [B, L, K], 0: no pair
  });
  return live.length === 1
    ? tf.expandDims<tf.Tensor4D>(shifted[0] as tf.Tensor3D, 1)
    : tf.reshape<tf.Rank.R4>(tf.stack(shifted, 1), [B, live.length, L, K]);
}

/** Rows s ← s + Δ_o of each stacked x [B, O, L, K], summed over o: the adjoint of partnerStack. */
function unshiftSum(x: tf.Tensor4D, live: readonly number[]): tf.Tensor3D {
  const [B, , L, K] = x.shape;
  const back = live.map((delta, o) =>
    tf.pad(tf.reshape<tf.Rank.R3>(tf.slice(x, [0, o, delta, 0], [B, 1, L - delta, K]), [B, L - delta, K]), [
      [0, 0],
      [0, delta],
      [0, 0],
    ]),
  ); // row s of x's source is the partner of row s + Δ_o
  return back.length === 1 ? (back[0] as tf.Tensor3D) : sumTensors(back); // addN, at most 7 inputs a call
}

/**
 * The Plücker coordinates of stacked pairs and their normalisation, for partners a [B, O, L, C] and the positions
 * b [B, L, C] (both as halves z_i, z_j):
 *   p = a_i ⊙ b_j − a_j ⊙ b_i [B, O, L, C];  nrm = sqrt(‖p‖² + ε²) [B, O, L, 1];  p̂ = p / nrm,
 * finite, with p̂ = 0 exactly where p = 0 (a missing partner is a zero row).
 */
function pluckerStack(
  a: PairHalves<tf.Tensor4D>,
  b: PairHalves<tf.Tensor3D>,
  eps: number,
): { pHat: tf.Tensor4D; nrm: tf.Tensor4D } {
  const [B, L, C] = b.i.shape;
  const as4 = (x: tf.Tensor3D) => tf.reshape<tf.Rank.R4>(x, [B, 1, L, C]);
  const p = tf.sub<tf.Tensor4D>(tf.mul(a.i, as4(b.j)), tf.mul(a.j, as4(b.i)));
  const nrm = tf.sqrt(tf.add<tf.Tensor4D>(tf.sum(tf.square(p), -1, true), eps * eps));
  return { pHat: tf.div(p, nrm), nrm };
}

/**
 * Σ of the stacked p̂ [B, O, L, C] over existing pairs, [B, L, C]: causal Σ_o p̂_o[t]; bidirectional also
 * Σ_o p̂_o[t + Δ_o] for t + Δ_o < L, since the pair (z_t, z_{t+Δ}) is the causal pair of position t + Δ.
 */
function sumPairs(pHat: tf.Tensor4D, live: readonly number[], direction: 'causal' | 'bidirectional'): tf.Tensor3D {
  const [B, O, L, C] = pHat.shape;
  const causal = O === 1 ? tf.reshape<tf.Rank.R3>(pHat, [B, L, C]) : tf.sum<tf.Tensor3D>(pHat, 1);
  return direction === 'causal' ? causal : tf.add(causal, unshiftSum(pHat, live)); // + p̂_o[t + Δ_o], 0 past the end
}

/**
 * Σ_{Δ ∈ live} p̂(z_{t−Δ}, z_t) (and the bidirectional terms) for z [B, L, r] → [B, L, C(r, 2)], with its analytic
 * gradient instead of the tape's: it keeps z, p̂ and nrm, not every element-wise intermediate. Offsets in `live`
 * are < L. For dy = ∂/∂(Σ p̂) [B, L, C], per stacked pair (a = z_{t−Δ}, b = z_t):
 *   g = dy[t] (+ dy[t − Δ] if bidirectional);  dp = (g − p̂ (p̂·g)) / nrm   (dp̂/dp = (I − p̂p̂ᵀ)/nrm);
 *   d b_j = Σ_o dp ⊙ a_i,  d b_i = −Σ_o dp ⊙ a_j;   d a_i = dp ⊙ b_j,  d a_j = −dp ⊙ b_i  (shifted back by Δ_o rows);
 *   dz = d z_i · S_iᵀ + d z_j · S_jᵀ.
 */
export function fusedPairSum(
  z: tf.Tensor3D,
  live: readonly number[],
  eps: number,
  direction: 'causal' | 'bidirectional',
): tf.Tensor3D {
  const [B, L, r] = z.shape;
  const C = pluckerDim(r);
  const O = live.length;
  const parts = (x: tf.Tensor3D) => {
    const b = pairHalves(x); // [B, L, C] each
    const a = { i: partnerStack(b.i, live), j: partnerStack(b.j, live) }; // [B, O, L, C] each
    return { a, b };
  };
  if (hasFusedKernel(FUSED.pairSum)) return nativePairSum(z, live, eps, direction);
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = args[0] as tf.Tensor3D; // [B, L, r]
    const save = args[1] as tf.GradSaveFunc;
    const [value, pHat, nrm] = tf.tidy((): [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D] => {
      const { a, b } = parts(x);
      const s = pluckerStack(a, b, eps);
      return [sumPairs(s.pHat, live, direction), s.pHat, s.nrm];
    });
    save([x, pHat, nrm]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sx, sp, sn] = saved as [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D];
        const dy3 = dy as tf.Tensor3D; // [B, L, C]
        const past = (delta: number): tf.Tensor3D =>
          tf.add(
            dy3,
            tf.pad(rows(dy3, 0, L - delta), [
              [0, 0],
              [delta, 0],
              [0, 0],
            ]),
          ); // dy[t] + dy[t − Δ]
        const g =
          direction === 'causal'
            ? tf.reshape<tf.Rank.R4>(dy3, [B, 1, L, C])
            : tf.reshape<tf.Rank.R4>(tf.stack(live.map(past), 1), [B, O, L, C]); // [B, 1 or O, L, C]
        const dot = tf.sum(tf.mul(sp, g), -1, true); // [B, O, L, 1]
        const dp = tf.div<tf.Tensor4D>(tf.sub(g, tf.mul(sp, dot)), sn); // [B, O, L, C]
        const { a, b } = parts(sx);
        const overO = (t: tf.Tensor4D) => (O === 1 ? tf.reshape<tf.Rank.R3>(t, [B, L, C]) : tf.sum<tf.Tensor3D>(t, 1));
        const as4 = (t: tf.Tensor3D) => tf.reshape<tf.Rank.R4>(t, [B, 1, L, C]);
        // d z_i = d a_i (shifted back) + d b_i, d z_j likewise [B, L, C]
        const dI = tf.sub(unshiftSum(tf.mul(dp, as4(b.j)), live), overO(tf.mul(dp, a.j)));
        const dJ = tf.sub(overO(tf.mul(dp, a.i)), unshiftSum(tf.mul(dp, as4(b.i)), live));
        const sel = pluckerSelection(r); // [r, 2C] = [S_i | S_j]
        const dz = matMulT(tf.concat([tf.reshape(dI, [B * L, C]), tf.reshape(dJ, [B * L, C])], 1), sel, false, true);
        return [tf.reshape<tf.Rank.R3>(dz, [B, L, r])];
      },
    };
  });
  return op(z);
}

/**
 * fusedPairSum's formulas as the native kernels (wasm under Node with @grassflow/native-linux-x64): the pairs straight
 * from z's columns, one pass per row for p̂, nrm and Σ p̂ forward and one for dp and dz backward, on every core.
 */
function nativePairSum(
  z: tf.Tensor3D,
  live: readonly number[],
  eps: number,
  direction: 'causal' | 'bidirectional',
): tf.Tensor3D {
  const attrs = { offsets: [...live], eps, bidirectional: direction === 'bidirectional' };
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = args[0] as tf.Tensor3D; // [B, L, r]
    const save = args[1] as tf.GradSaveFunc;
    const [value, pHat, nrm] = tf
      .engine()
      .runKernel<[tf.Tensor3D, tf.Tensor4D, tf.Tensor4D]>(FUSED.pairSum, { z: x }, attrs);
    save([x, pHat, nrm]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sx, sp, sn] = saved as [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D];
        const inputs = { dy, z: sx, pHat: sp, nrm: sn };
        return [tf.engine().runKernel<tf.Tensor3D>(FUSED.pairSumGrad, inputs, attrs)];
      },
    };
  });
  return op(z);
}

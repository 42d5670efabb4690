// Causal Grassmann mixing as a pure function of hidden states and weights (paper-notes §1).
import * as tf from '@tensorflow/tfjs-core';
import { pluckerDim } from '../shared/config.js';
import { LN_EPS } from '../shared/block-parts.js';
import { dropout, layerNorm, matmul, matMulT, matmulConst, sumTensors } from '../shared/ops.js';

/** Weights of one mixing layer, in the internal [in, out] layout. */
export interface GrassmannMixingWeights {
  /** W_redᵀ [d, r] */ wRed: tf.Tensor2D;
  /** b_red [r] */ bRed: tf.Tensor1D;
  /** W_pluᵀ [C(r,2), d] */ wPlu: tf.Tensor2D;
  /** b_plu [d] */ bPlu: tf.Tensor1D;
  /** W_gateᵀ [2d, d], input rows h then g */ wGate: tf.Tensor2D;
  /** b_gate [d] */ bGate: tf.Tensor1D;
  /** LN_mix γ, β [d] each: a LayerNorm (ε = 1e-5) on the mixer's output (mixerNorm; absent: none). */
  ln?: { weight: tf.Tensor1D; bias: tf.Tensor1D };
}

/** The gate's form: 'blend' m = α⊙h + (1−α)⊙g (the paper's, the skip path) or 'additive' m = α⊙g (a residual). */
export type GrassmannGate = 'blend' | 'additive';

/**
 * Pairs (i, j), 0 ≤ i < j < r, in lexicographic order (0,1), (0,2), …, (r−2, r−1): the order of
 * the Plücker coordinates p_ij.
 */
export function pluckerPairs(r: number): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < r; i++) for (let j = i + 1; j < r; j++) pairs.push([i, j]);
  return pairs;
}

/**
 * Selection matrix S = [S_i | S_j] ∈ {0,1}^{r × 2C}: (z·S)[c] = z_i and (z·S)[C + c] = z_j for pair c = (i, j).
 */
export function pluckerSelection(r: number): tf.Tensor2D {
  const C = pluckerDim(r);
  const s = new Float32Array(r * 2 * C);
  pluckerPairs(r).forEach(([i, j], c) => {
    s[i * 2 * C + c] = 1;
    s[j * 2 * C + C + c] = 1;
  });
  return tf.tensor2d(s, [r, 2 * C]);
}

/** Column indices [i_0 … i_{C−1} | j_0 … j_{C−1}] of the pairs: gathering them from z gives z·S (int32 [2C]). */
export function pluckerColumns(r: number): tf.Tensor1D {
  const pairs = pluckerPairs(r);
  return tf.tensor1d([...pairs.map(([i]) => i), ...pairs.map(([, j]) => j)], 'int32');
}

/**
 * Number of existing pairs at positions t0 … t0 + L − 1 of a sequence of length t0 + L (t0 = 0: the whole
 * sequence): offsets with t − Δ ≥ 0 (and t + Δ < L if bidirectional).
 */
export function pairCounts(
  L: number,
  offsets: readonly number[],
  direction: 'causal' | 'bidirectional',
  t0 = 0,
): number[] {
  return Array.from({ length: L }, (_, k) => {
    const t = t0 + k;
    const future = (delta: number) => (direction === 'bidirectional' && t + delta < t0 + L ? 1 : 0);
    return offsets.reduce((n, delta) => n + (t - delta >= 0 ? 1 : 0) + future(delta), 0);
  });
}

/** Positions an incremental caller (a decoder) has already fed: their reduced states z and where h starts. */
export interface GrassmannMixingPast {
  /**
   * z_t of positions t0 − m … t0 − 1, [B, m, r], oldest first; m ≥ min(t0, max Δ) so that every pair of the new
   * positions exists (null or m = 0 at t0 = 0). Positions older than t0 − max(Δ) are never read.
   */
  z: tf.Tensor3D | null;
  /** Absolute position of the first row of h. */
  t0: number;
}

export interface GrassmannMixingOptions {
  /** Offsets Δ ≥ 1 of this layer. */
  offsets: readonly number[];
  /** ε of p̂ = p / sqrt(‖p‖² + ε²). */
  eps: number;
  /** 'causal' pairs (z_{t−Δ}, z_t); 'bidirectional' also (z_t, z_{t+Δ}) — encoders only. */
  direction: 'causal' | 'bidirectional';
  /** Earlier positions (causal only): h then holds positions t0 … t0 + L − 1. Default: none, t0 = 0. */
  past?: GrassmannMixingPast;
  /**
   * Training path (no past, no trace): true (default) differentiates the Plücker part (pairs, p̂, their sum) with
   * its hand-written analytic gradient, keeping only z·S, p̂ and the norms for the backward pass; false lets the
   * tape record every element-wise op of the same formula instead — the reference the tests compare with.
   * The values are the same either way.
   */
  fused?: boolean;
  /**
   * Gate form (default 'blend'): 'blend' h_mix = α⊙h + (1−α)⊙g; 'additive' returns α⊙g only, which the caller
   * adds to h as a residual (kanenorman's reproduction). α = σ(W_gate [h; g] + b_gate) either way.
   */
  gate?: GrassmannGate;
  /**
   * Blend only, training: the rate of a dropout on the mixing branch before the skip path is added,
   * h_mix = α⊙h + Dropout((1−α)⊙g) (post-LN dropoutAt 'branch'). Default 0: none. The additive gate's output is
   * all branch: its caller drops it.
   */
  branchDropout?: number;
}

/** The intermediates of one {@link grassmannMixing} call, for inspection (see {@link grassmannMixingTrace}). */
export interface GrassmannMixingTrace {
  /** The value grassmannMixing returns [B, L, d]: h_mix (or α⊙g), then LN_mix of it where w.ln is given. */
  output: tf.Tensor3D;
  /** z_t = W_red h_t + b_red of the new positions [B, L, r]. */
  z: tf.Tensor3D;
  /**
   * p̂ per entry of options.offsets [B, L, C(r,2)], 0 where t − Δ < 0 (causal direction only: the pair
   * (z_{t−Δ}, z_t); a bidirectional call also has the (z_t, z_{t+Δ}) terms, which are not listed).
   */
  pHat: tf.Tensor3D[];
  /** g_t = W_plu mean_Δ p̂ + b_plu [B, L, d], 0 where no pair exists. */
  g: tf.Tensor3D;
  /** α = σ(W_gate [h; g] + b_gate) [B, L, d]. */
  alpha: tf.Tensor3D;
}

/** What {@link mixingParts} returns: the output, and with `trace` the intermediates. */
interface MixingParts {
  output: tf.Tensor3D;
  /** z of the past and new positions, [B, m + L, r] (positions t0 − m … t0 + L − 1). */
  zAll: tf.Tensor3D;
  trace?: Omit<GrassmannMixingTrace, 'output'>;
}

/** Sub-tensor x[:, from … from + n − 1] along axis 1 with n ≥ 1 rows: [B, ·, K] → [B, n, K]. */
function rows(x: tf.Tensor3D, from: number, n: number): tf.Tensor3D {
  const [B, , K] = x.shape;
  return tf.slice(x, [0, from, 0], [B, n, K]);
}

/**
 * The one implementation of Grassmann mixing (paper-notes §1) behind grassmannMixing, grassmannMixingTrace and
 * the decoder's ring buffer. h [B, L, d] holds positions t0 … t0 + L − 1; zAll below stacks the m past states
 * and the L new ones, so the partner z_{t−Δ} of new row k is row m + k − Δ of zAll (absent when negative).
 */
function mixingParts(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
  trace: boolean,
): MixingParts {
  const [B, L, d] = h.shape;
  const r = w.wRed.shape[1];
  const C = pluckerDim(r);
  const { offsets, eps, direction, past } = options;
  const t0 = past?.t0 ?? 0;
  const zPast = past?.z ?? null;
  const m = zPast === null ? 0 : zPast.shape[1];
  checkPast(zPast, t0, m, B, r, offsets, direction);
  return tf.tidy(() => {
    const h2 = tf.reshape(h, [B * L, d]); // [B·L, d]
    const z = tf.reshape<tf.Rank.R3>(tf.add(matmul(h2, w.wRed), w.bRed), [B, L, r]); // [B, L, r]
    const zAll = m === 0 ? z : tf.concat<tf.Tensor3D>([zPast as tf.Tensor3D, z], 1); // [B, n, r], n = m + L
    const n = m + L;
    // offsets with at least one pair among the new rows (partner row m + k − Δ ≥ 0 for the last new row)
    const live = offsets.filter((delta) => n - delta > 0);
    let pSum: tf.Tensor3D | null = null; // [B, L, C] Σ of p̂ over existing pairs
    const perOffset: tf.Tensor3D[] = []; // traced: the causal p̂ of each entry of offsets, 0 where absent
    if (live.length > 0 && past === undefined && !trace && options.fused !== false) {
      pSum = fusedPairSum(z, live, eps, direction); // the training path: the same formula, analytic gradient
    } else if (live.length > 0) {
      const how = past === undefined ? 'matmul' : 'gather';
      const zp = pairHalves(zAll, how); // [B, n, C] each
      const cur = { i: m === 0 ? zp.i : rows(zp.i, m, L), j: m === 0 ? zp.j : rows(zp.j, m, L) }; // new positions
      const partner = {
        i: partnerStack(zp.i, m, L, live, past === undefined ? 'shift' : 'gather'),
        j: partnerStack(zp.j, m, L, live, past === undefined ? 'shift' : 'gather'),
      }; // [B, O, L, C] each
      const { pHat } = pluckerStack(partner, cur, eps);
      pSum = sumPairs(pHat, live, direction); // bidirectional only with m = 0 (checkPast)
      if (trace) {
        for (const delta of offsets) {
          const o = live.indexOf(delta);
          perOffset.push(
            o < 0 ? tf.zeros([B, L, C]) : tf.reshape(tf.slice(pHat, [0, o, 0, 0], [B, 1, L, C]), [B, L, C]),
          );
        }
      }
    } else if (trace) {
      for (let k = 0; k < offsets.length; k++) perOffset.push(tf.zeros([B, L, C]));
    }
    // Non-existent pairs contribute p = 0 → p̂ = 0, so a plain sum is the sum over existing pairs.
    const counts = pairCounts(L, offsets, direction, t0);
    let g: tf.Tensor3D;
    if (pSum === null) {
      g = tf.zeros([B, L, d]);
    } else {
      // every position with the same count (e.g. all past max(Δ), as when decoding): 1/count is a number
      const uniform = counts.every((c) => c === counts[0]) && (counts[0] as number) > 0;
      const invCount = uniform ? 1 / (counts[0] as number) : perPosition(counts.map((c) => (c > 0 ? 1 / c : 0)));
      const pMean = tf.mul(pSum, invCount); // [B, L, C]
      const proj = tf.reshape(matmul(tf.reshape(pMean, [B * L, C]), w.wPlu), [B, L, d]); // [B, L, d]
      const bias = tf.reshape(w.bPlu, [1, 1, d]);
      g = tf.add(proj, uniform ? bias : tf.mul(bias, perPosition(counts.map((c) => (c > 0 ? 1 : 0))))); // 0: no pair
    }
    const hg = tf.concat([h2, tf.reshape(g, [B * L, d])], 1); // [B·L, 2d], order [h; g]
    const alpha = tf.reshape<tf.Rank.R3>(tf.sigmoid(tf.add(matmul(hg, w.wGate), w.bGate)), [B, L, d]); // [B, L, d]
    const output = gateOutput(h, g, alpha, w, options);
    return trace ? { output, zAll, trace: { z, pHat: perOffset, g, alpha } } : { output, zAll };
  });
}

/**
 * The mixer's output from h, g and α [B, L, d]: m = α⊙h + (1−α)⊙g (blend; α⊙h + Dropout((1−α)⊙g) with
 * options.branchDropout) or m = α⊙g (additive), then LN_mix(m) where w.ln is given.
 */
function gateOutput(
  h: tf.Tensor3D,
  g: tf.Tensor3D,
  alpha: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): tf.Tensor3D {
  const { gate = 'blend', branchDropout = 0 } = options;
  if (gate !== 'blend' && gate !== 'additive') {
    throw new RangeError(`grassmannMixing: gate must be 'blend' or 'additive', got ${JSON.stringify(gate)}`);
  }
  if (!(branchDropout >= 0 && branchDropout < 1)) {
    throw new RangeError(`grassmannMixing: branchDropout must be in [0, 1), got ${String(branchDropout)}`);
  }
  if (gate === 'additive' && branchDropout > 0) {
    throw new RangeError("grassmannMixing: branchDropout is the blend's; an additive gate's caller drops its output");
  }
  let m: tf.Tensor3D;
  if (gate === 'additive') {
    m = tf.mul(alpha, g); // α⊙g
  } else if (branchDropout > 0) {
    m = tf.add(tf.mul(alpha, h), dropout(tf.mul(tf.sub(1, alpha), g), branchDropout, true)); // α⊙h + Drop((1−α)⊙g)
  } else {
    m = tf.add(g, tf.mul(alpha, tf.sub(h, g))); // α⊙h + (1−α)⊙g
  }
  return w.ln === undefined ? m : (layerNorm(m, w.ln.weight, w.ln.bias, LN_EPS) as tf.Tensor3D);
}

/** The two halves z·S_i and z·S_j of the pair coordinates [z_i | z_j] (see {@link pluckerSelection}). */
interface PairHalves<T extends tf.Tensor> {
  /** z_i of every pair (i, j) */ i: T;
  /** z_j of every pair (i, j) */ j: T;
}

/**
 * z_i and z_j of every pair for z [B, n, r], [B, n, C] each: two gathers of columns when decoding (no gradient,
 * and on wasm each matrix product has a fixed cost that dominates at one token), else two products with the 0/1
 * halves S_i, S_j of the selection matrix (their gradient is a product too). Both give the same values: S picks
 * entries, it sums nothing. Two halves instead of one [B, n, 2C] tensor: no slicing of the last axis later.
 */
function pairHalves(z: tf.Tensor3D, how: 'matmul' | 'gather'): PairHalves<tf.Tensor3D> {
  const [B, n, r] = z.shape;
  const C = pluckerDim(r);
  const z2 = tf.reshape(z, [B * n, r]); // [B·n, r]
  const half = (from: number): tf.Tensor3D => {
    const y =
      how === 'gather'
        ? tf.gather(z2, tf.slice(pluckerColumns(r), [from], [C]), 1)
        : matmulConst(z2, tf.slice(pluckerSelection(r), [0, from], [r, C]));
    return tf.reshape<tf.Rank.R3>(y, [B, n, C]);
  };
  return { i: half(0), j: half(C) };
}

/**
 * The partners x_{t−Δ} of the new positions for every offset Δ in `live`, stacked [B, O, L, K] (O = live.length),
 * zero rows where the partner does not exist. x [B, n, K] holds the m past and the L new positions; the partner
 * of new row k at offset Δ is row m + k − Δ. 'shift': one slice (padded with zeros in front) per offset, for
 * training; 'gather': one gather for all offsets, for decoding (the number of operations per token does not grow
 * with the number of offsets, and the gather's gradient is never needed there).
 */
function partnerStack(
  x: tf.Tensor3D,
  m: number,
  L: number,
  live: readonly number[],
  how: 'shift' | 'gather',
): tf.Tensor4D {
  const [B, n, K] = x.shape;
  const O = live.length;
  if (how === 'gather') {
    const padded = tf.concat([x, tf.zeros([B, 1, K])], 1); // [B, n + 1, K]: row n is the missing partner
    const index = live.flatMap((delta) =>
      Array.from({ length: L }, (_, k) => (m + k - delta >= 0 ? m + k - delta : n)),
    );
    return tf.reshape(tf.gather(padded, tf.tensor1d(index, 'int32'), 1), [B, O, L, K]);
  }
  const shifted = live.map((delta) => {
    const have = Math.min(L, n - delta); // new rows k whose partner row m + k − Δ ≥ 0 (the last `have` of them)
    const kept = rows(x, m + L - have - delta, have); // [B, have, K]
    return have === L
      ? kept
      : tf.pad(kept, [
          [0, 0],
          [L - have, 0],
          [0, 0],
        ]); // [B, L, K], 0: no pair
  });
  return O === 1
    ? tf.expandDims<tf.Tensor4D>(shifted[0] as tf.Tensor3D, 1)
    : tf.reshape<tf.Rank.R4>(tf.stack(shifted, 1), [B, O, L, K]);
}

/** Rows s ← s + Δ_o of each stacked x [B, O, L, K], summed over o: the adjoint of the 'shift' partnerStack. */
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
 * The Plücker coordinates of stacked pairs and their normalisation, for partners a [B, O, L, C] and the new
 * positions b [B, L, C] (both as halves z_i, z_j):
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
 * Σ of the p̂ [B, O, L, C] of a call on a whole sequence (m = 0) over its existing pairs, [B, L, C]: causal
 * Σ_o p̂_o[t]; bidirectional also Σ_o p̂_o[t + Δ_o] for t + Δ_o < L, since the pair (z_t, z_{t+Δ}) is the causal
 * pair of position t + Δ. Missing pairs have p̂ = 0, so a plain sum is the sum over existing pairs.
 */
function sumPairs(pHat: tf.Tensor4D, live: readonly number[], direction: 'causal' | 'bidirectional'): tf.Tensor3D {
  const [B, O, L, C] = pHat.shape;
  const causal = O === 1 ? tf.reshape<tf.Rank.R3>(pHat, [B, L, C]) : tf.sum<tf.Tensor3D>(pHat, 1);
  return direction === 'causal' ? causal : tf.add(causal, unshiftSum(pHat, live)); // + p̂_o[t + Δ_o], 0 past the end
}

/**
 * {@link sumPairs} ∘ {@link pluckerStack} ∘ {@link partnerStack} ∘ {@link pairHalves} on a whole sequence
 * z [B, L, r] (m = 0), with its analytic gradient instead of the tape's: it keeps z, p̂ and nrm, not every
 * element-wise intermediate. For dy = ∂/∂(Σ p̂) [B, L, C], per stacked pair (a = z_{t−Δ}, b = z_t):
 *   g = dy[t] (+ dy[t − Δ] if bidirectional);  dp = (g − p̂ (p̂·g)) / nrm   (dp̂/dp = (I − p̂p̂ᵀ)/nrm);
 *   d b_j = Σ_o dp ⊙ a_i,  d b_i = −Σ_o dp ⊙ a_j;   d a_i = dp ⊙ b_j,  d a_j = −dp ⊙ b_i  (shifted back by Δ_o rows);
 *   dz = d z_i · S_iᵀ + d z_j · S_jᵀ.
 */
function fusedPairSum(
  z: tf.Tensor3D,
  live: readonly number[],
  eps: number,
  direction: 'causal' | 'bidirectional',
): tf.Tensor3D {
  const [B, L, r] = z.shape;
  const C = pluckerDim(r);
  const O = live.length;
  const parts = (x: tf.Tensor3D) => {
    const b = pairHalves(x, 'matmul'); // [B, L, C] each
    const a = { i: partnerStack(b.i, 0, L, live, 'shift'), j: partnerStack(b.j, 0, L, live, 'shift') };
    return { a, b }; // a: [B, O, L, C] each
  };
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

/** A per-position factor [1, L, 1] of the values v_t. */
function perPosition(v: number[]): tf.Tensor3D {
  return tf.tensor3d(v, [1, v.length, 1]);
}

/** Refuse a past that cannot serve the new positions: wrong shape, too few states, or a bidirectional layer. */
function checkPast(
  zPast: tf.Tensor3D | null,
  t0: number,
  m: number,
  B: number,
  r: number,
  offsets: readonly number[],
  direction: 'causal' | 'bidirectional',
): void {
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

/**
 * Causal Grassmann mixing of hidden states h [B, L, d] (paper-notes §1):
 *   z_t = W_red h_t + b_red;  p_ij = z_{t−Δ,i} z_{t,j} − z_{t−Δ,j} z_{t,i} (i < j, lexicographic);
 *   p̂ = p/sqrt(‖p‖² + ε²);  g_t = mean_{Δ: t−Δ ≥ 0} (W_plu p̂ + b_plu), 0 where no pair exists;
 *   α = σ(W_gate [h; g] + b_gate);  h_mix = α ⊙ h + (1 − α) ⊙ g  (options.gate 'additive': α ⊙ g instead);
 *   then LN_mix(h_mix) where w.ln is given (mixerNorm).
 * Since W_plu is shared by the offsets, mean_Δ(W_plu p̂_Δ + b_plu) = W_plu mean_Δ(p̂_Δ) + b_plu:
 * one projection per layer whatever the number of offsets. The pair coordinates come from one
 * product z·S with a 0/1 selection matrix, and shifting commutes with it, so z_{t−Δ}·S is a shift of z·S.
 * With options.past, h holds positions t0 … t0 + L − 1 and the pairs reaching back before t0 use past.z:
 * the result equals rows t0 … of the call on the whole sequence (this is how the decoder mixes).
 * The pairs of every offset are stacked into one [B, O, L, C(r,2)] tensor, so each op runs once per layer; on the
 * training path (no past) their gradient is the analytic one of fusedPairSum unless options.fused is false.
 */
export function grassmannMixing(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): tf.Tensor3D {
  const parts = mixingParts(h, w, options, false);
  if (parts.zAll !== parts.output) parts.zAll.dispose();
  return parts.output;
}

/**
 * {@link grassmannMixing} with its intermediates z, p̂ per offset, g and α, computed by the same code (for
 * inspection). The caller disposes every returned tensor.
 */
export function grassmannMixingTrace(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions,
): GrassmannMixingTrace {
  const parts = mixingParts(h, w, options, true);
  const t = parts.trace as Omit<GrassmannMixingTrace, 'output'>;
  if (parts.zAll !== t.z) parts.zAll.dispose();
  return { output: parts.output, ...t };
}

/**
 * {@link grassmannMixing} of positions past.t0 … past.t0 + L − 1 that also returns the past of the next call:
 * the last max(Δ) (fewer before then) z's, [B, ≤ max(Δ), r], positions t0 + L − m' … t0 + L − 1. For decoders.
 */
export function grassmannMixingStep(
  h: tf.Tensor3D,
  w: GrassmannMixingWeights,
  options: GrassmannMixingOptions & { past: GrassmannMixingPast },
): { output: tf.Tensor3D; next: GrassmannMixingPast } {
  const { output, zAll } = mixingParts(h, w, options, false);
  const n = zAll.shape[1];
  const keep = Math.min(n, Math.max(...options.offsets));
  const z = keep === n ? zAll : tf.tidy(() => rows(zAll, n - keep, keep));
  if (z !== zAll) zAll.dispose();
  return { output, next: { z, t0: options.past.t0 + h.shape[1] } };
}

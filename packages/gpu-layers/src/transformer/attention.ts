// Multi-head attention, causal or bidirectional: dot-product softmax (DPA) and expressive attention (EA, paper-notes
// §4), with an optional key/value cache and key padding mask.
import * as tf from '@tensorflow/tfjs-core';
import { FUSED, hasFusedKernel } from '../backend/wasm-fused.js';
import { linear, matmul } from '../ops/ops.js';
import type { ModelOptionValue } from '../config/model-options.js';

/** Weights of one attention layer, in the internal [in, out] layout. */
export interface AttentionWeights {
  /** Shape [d, 3d], columns q then k then v, head h at columns h·d_head … */ wQkv: tf.Tensor2D;
  /** [3d] */ bQkv: tf.Tensor1D;
  /** [d, d] */ wProj: tf.Tensor2D;
  /** [d] */ bProj: tf.Tensor1D;
}

/** Keys and values of earlier positions, kept by an incremental caller (a decoder). */
export interface AttentionCache {
  /** Kᵀ [B·H, d_head, t0] of positions 0 … t0 − 1 (null at t0 = 0). */
  keysT: tf.Tensor3D | null;
  /** V [B·H, t0, d_head] (null at t0 = 0). */
  values: tf.Tensor3D | null;
}

export interface AttentionOptions {
  nHeads: number;
  kind: 'dpa' | 'ea';
  /** ε of EA's denominator Σ_j e_ij + ε. */
  eps: number;
  /**
   * EA's ε (default 'absolute'): 'absolute' a = e/(Σ_j e + ε); 'relative' a = e/(Σ_j e + ε·max_j e + ε²), scale-free,
   * so a layer whose scores are all tiny (at init) is not switched off. DPA ignores it.
   */
  eaEps?: EaEps;
  /** true (default): query i sees keys j ≤ i only. false: every key (encoders, e.g. a sentence classifier). */
  causal?: boolean;
  /** 1 for a real key, 0 for padding, [B, L] (keys of the new positions; cached keys are all real). */
  keyMask?: tf.Tensor2D;
  /**
   * Keys and values of positions 0 … t0 − 1 (causal only): h then holds positions t0 … t0 + L − 1 and the
   * result equals those rows of the call on the whole sequence.
   */
  cache?: AttentionCache;
}

/** How EA's ε enters its denominator (see {@link AttentionOptions.eaEps}). */
export type EaEps = ModelOptionValue<'eaEps'>;

/** Lower-triangular causal mask m_ij = 1 if j ≤ i else 0, [L, L]. */
export function causalMask(L: number): tf.Tensor2D {
  return offsetCausalMask(L, 0);
}

/**
 * Causal mask of L queries at positions t0 … t0 + L − 1
 * against keys 0 … t0 + L − 1: m_ij = [j ≤ t0 + i], [L, t0 + L].
 */
function offsetCausalMask(L: number, t0: number): tf.Tensor2D {
  const n = t0 + L;
  const m = new Float32Array(L * n);
  for (let i = 0; i < L; i++) for (let j = 0; j <= t0 + i; j++) m[i * n + j] = 1;
  return tf.tensor2d(m, [L, n]);
}

/**
 * Attention weights from scaled scores s = q·kᵀ/sqrt(d_head) [BH, L, n] and a 0/1 mask m broadcastable to them
 * (null: every key is allowed):
 * DPA a = softmax(s + (m − 1)·1e9) (mask added after the scale);
 * EA  e = m ⊙ s²/(1 + s²), a = e/(Σ_j e + ε) — the mask multiplies, nothing is added before squaring;
 *     eaEps 'relative': a = e/(Σ_j e + ε·max_j e + ε²), the same up to O(ε) where Σe ≫ ε, still ≈ normalised when
 *     every e is ≪ ε, and 0 (not NaN) on a row of zeros.
 */
function maskedWeights(
  scores: tf.Tensor3D,
  mask: tf.Tensor | null,
  kind: 'dpa' | 'ea',
  eps: number,
  eaEps: EaEps = 'absolute',
): tf.Tensor3D {
  // eaEps is checked once, where a config or a block is made (validateModelConfig, layerOptions), not per call
  return tf.tidy(() => {
    if (kind === 'dpa') {
      return tf.softmax(mask === null ? scores : tf.add(scores, tf.mul(tf.sub(mask, 1), 1e9))) as tf.Tensor3D;
    }
    const s2 = tf.square(scores);
    const ratio = tf.div(s2, tf.add(s2, 1));
    const e = mask === null ? ratio : tf.mul(mask, ratio); // [BH, L, n]
    const total = tf.sum(e, -1, true); // [BH, L, 1]
    if (eaEps === 'absolute') return tf.div<tf.Tensor3D>(e, tf.add(total, eps));
    return tf.div<tf.Tensor3D>(e, tf.add(tf.add(total, tf.mul(tf.max(e, -1, true), eps)), eps * eps));
  });
}

/**
 * EA's maskedWeights for a mask that is only causal (query i sees keys j ≤ t0 + i) or allows every key, as one fused
 * kernel forward and one backward where the backend has them (wasm): the composed ops make ≈ 20 passes over the
 * [BH, L, n] scores and their gradient (≈ 2.7× the CPU time at the ladder's size). Null where there is no such
 * kernel, for DPA (wasm's own softmax beats a JS loop) and for EA's 'relative' ε.
 */
function fusedExpressiveWeights(
  scores: tf.Tensor3D,
  kind: 'dpa' | 'ea',
  eps: number,
  eaEps: EaEps,
  causal: boolean,
  t0: number,
): tf.Tensor3D | null {
  if (kind !== 'ea' || eaEps !== 'absolute' || !hasFusedKernel(FUSED.expressiveWeights)) return null;
  const attrs = { eps, causal, t0 };
  const withGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const s = args[0] as tf.Tensor3D;
    const save = args[1] as tf.GradSaveFunc;
    const value = tf.engine().runKernel<tf.Tensor3D>(FUSED.expressiveWeights, { scores: s }, attrs);
    save([s, value]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [ss, a] = saved as [tf.Tensor3D, tf.Tensor3D];
        const inputs = { dy, scores: ss, weights: a };
        return [tf.engine().runKernel<tf.Tensor3D>(FUSED.expressiveWeightsGrad, inputs, attrs)];
      },
    };
  });
  return withGrad(scores);
}

/** Causal attention weights from scaled scores [BH, L, L] (see {@link causalAttention}); eaEps: EA's ε form. */
export function attentionWeights(
  scores: tf.Tensor3D,
  kind: 'dpa' | 'ea',
  eps: number,
  eaEps: EaEps = 'absolute',
): tf.Tensor3D {
  return tf.tidy(
    () =>
      fusedExpressiveWeights(scores, kind, eps, eaEps, true, 0) ??
      maskedWeights(scores, causalMask(scores.shape[1]), kind, eps, eaEps),
  );
}

/**
 * The mask of options over scores [B·H, L, n] (n = t0 + L keys), or null when every key is allowed: the causal
 * mask [L, n] (skipped for a single new query, whose keys are all in its past), times the key mask [B·H, 1, n].
 */
function attentionMask(B: number, H: number, L: number, t0: number, options: AttentionOptions): tf.Tensor | null {
  const causal = options.causal ?? true;
  const order = causal && L > 1 ? offsetCausalMask(L, t0) : null; // [L, n]
  if (options.keyMask === undefined) return order;
  const km = options.keyMask;
  if (km.rank !== 2 || km.shape[0] !== B || km.shape[1] !== L) {
    throw new RangeError(`attention: keyMask must be [${B}, ${L}], got [${km.shape.join(', ')}]`);
  }
  const withPast = t0 === 0 ? km : tf.concat([tf.ones([B, t0]), tf.cast(km, 'float32')], 1); // [B, n]
  const keys = tf.reshape(tf.tile(tf.reshape(tf.cast(withPast, 'float32'), [B, 1, 1, t0 + L]), [1, H, 1, 1]), [
    B * H,
    1,
    t0 + L,
  ]); // [B·H, 1, n]
  return order === null ? keys : tf.mul(order, keys);
}

/**
 * Multi-head self-attention of h [B, L, d], with the new keys and values for a caller's cache:
 *   q, k, v = split(h·W_qkv + b_qkv);  a = weights(q·kᵀ/sqrt(d_head), mask);  out = proj(concat_h a_h v_h).
 * The one implementation behind causalAttention, the decoder's key/value cache and the SNLI head.
 */
export function attentionWithCache(
  h: tf.Tensor3D,
  w: AttentionWeights,
  options: AttentionOptions,
): { output: tf.Tensor3D; cache: { keysT: tf.Tensor3D; values: tf.Tensor3D } } {
  const { output, cache } = attentionParts(h, w, options, true);
  return { output, cache: cache as { keysT: tf.Tensor3D; values: tf.Tensor3D } };
}

/** The intermediates of one attention call, for inspection (see {@link attentionTrace}). */
export interface AttentionTrace {
  /** The value causalAttention returns, [B, L, d]. */
  output: tf.Tensor3D;
  /** Scaled scores s = q·kᵀ/sqrt(d_head), [B·H, L, n] (n = t0 + L keys; row b·H + head). */
  scores: tf.Tensor3D;
  /** Attention weights a, [B·H, L, n]: 0 on masked keys (the future, padding). */
  weights: tf.Tensor3D;
}

/**
 * attentionWithCache's computation; the keys and values of every position are returned only with `withCache`,
 * the scores and weights only with `withTrace`.
 */
function attentionParts(
  h: tf.Tensor3D,
  w: AttentionWeights,
  options: AttentionOptions,
  withCache: boolean,
  withTrace = false,
): {
  output: tf.Tensor3D;
  cache?: { keysT: tf.Tensor3D; values: tf.Tensor3D };
  trace?: { scores: tf.Tensor3D; weights: tf.Tensor3D };
} {
  const [B, L, d] = h.shape;
  const H = options.nHeads;
  const dh = d / H;
  const past = options.cache;
  if (past !== undefined && options.causal === false) throw new RangeError('attention: a cache needs causal attention');
  if ((past?.keysT === null) !== (past?.values === null)) throw new RangeError('attention: cache keys without values');
  const t0 = past?.keysT?.shape[2] ?? 0;
  return tf.tidy(() => {
    const qkv = tf.reshape(linear(h, w.wQkv, w.bQkv), [B * L, 3 * d]); // [B·L, 3d]: columns q | k | v
    const [q2, k2, v2] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D]; // [B·L, d] each
    const heads = (x: tf.Tensor2D, perm: number[], shape: [number, number, number]) =>
      tf.reshape<tf.Rank.R3>(tf.transpose(tf.reshape(x, [B, L, H, dh]), perm), shape);
    const q = heads(q2, [0, 2, 1, 3], [B * H, L, dh]); // [B, L, H, dh] → [B, H, L, dh] → [B·H, L, dh]
    const kTNew = heads(k2, [0, 2, 3, 1], [B * H, dh, L]); // [B, L, H, dh] → [B, H, dh, L] → [B·H, dh, L]
    const vNew = heads(v2, [0, 2, 1, 3], [B * H, L, dh]); // [B·H, L, dh]
    const oldK = past?.keysT ?? null;
    const oldV = past?.values ?? null;
    const kT = oldK === null ? kTNew : tf.concat<tf.Tensor3D>([oldK, kTNew], 2); // [B·H, dh, t0 + L]
    const v = oldV === null ? vNew : tf.concat<tf.Tensor3D>([oldV, vNew], 1); // [B·H, t0 + L, dh]
    const scores = tf.mul<tf.Tensor3D>(matmul(q, kT), 1 / Math.sqrt(dh)); // [B·H, L, t0 + L]
    const { kind, eps, eaEps = 'absolute' } = options;
    // a single new query (L 1) sees all its keys: no causal limit, as attentionMask has it
    const causalLimit = (options.causal ?? true) && L > 1;
    const a =
      (options.keyMask === undefined ? fusedExpressiveWeights(scores, kind, eps, eaEps, causalLimit, t0) : null) ??
      maskedWeights(scores, attentionMask(B, H, L, t0, options), kind, eps, eaEps); // [B·H, L, t0 + L]
    const y = matmul(a, v); // [B·H, L, dh]
    const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, L, dh]), [0, 2, 1, 3]), [B, L, d]); // [B, L, d]
    const output = linear(merged, w.wProj, w.bProj) as tf.Tensor3D;
    return {
      output,
      ...(withCache ? { cache: { keysT: kT, values: v } } : {}),
      ...(withTrace ? { trace: { scores, weights: a } } : {}),
    };
  });
}

/**
 * Multi-head self-attention of h [B, L, d] (causal unless options.causal is false; padding keys masked out
 * with options.keyMask): out = proj(concat_h a_h v_h). See {@link attentionWithCache}.
 */
export function causalAttention(h: tf.Tensor3D, w: AttentionWeights, options: AttentionOptions): tf.Tensor3D {
  return attentionParts(h, w, options, false).output;
}

/**
 * {@link causalAttention} with its scaled scores and attention weights, computed by the same code (for
 * inspection). The caller disposes every returned tensor.
 */
export function attentionTrace(h: tf.Tensor3D, w: AttentionWeights, options: AttentionOptions): AttentionTrace {
  const { output, trace } = attentionParts(h, w, options, false, true);
  const t = trace as { scores: tf.Tensor3D; weights: tf.Tensor3D };
  return { output, scores: t.scores, weights: t.weights };
}

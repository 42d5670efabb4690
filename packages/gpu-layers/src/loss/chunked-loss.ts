// Tied LM head + softmax cross-entropy in row chunks: the [B·L, V] logits are never held at once.
import * as tf from '@tensorflow/tfjs-core';
import { transposeFlagsAreFree } from '../backend/products.js';
import { nllRows } from './loss.js';
import { matMulT } from '../ops/ops.js';

/** Options of {@link chunkedLmLoss}. */
export interface ChunkedLmLossOptions {
  /**
   * Rows (tokens) per chunk; each chunk holds three [rows, V] float32 buffers at a time (logits,
   * exponentials, probabilities). Default: as many rows as keep one buffer near 32 MB (≥ 1).
   */
  chunkRows?: number;
}

const CHUNK_BYTES = 32 * 1024 * 1024;

/**
 * Whether a gradient tape is recording (tf.grads/variableGrads running): then the gradient is computed with the loss.
 */
function gradientRequested(): boolean {
  const state = (tf.engine() as unknown as { state?: { gradientDepth?: number } }).state;
  return (state?.gradientDepth ?? 0) > 0;
}

interface LossParts {
  /** Σ_n nll_n over the rows, scalar. */
  sum: tf.Scalar;
  /** ∂ℓ/∂h [N, d] for ℓ = mean nll (absent when no gradient is requested). */
  dh?: tf.Tensor2D;
  /** ∂ℓ/∂E [V, d] (absent when no gradient is requested). */
  dE?: tf.Tensor2D;
}

/**
 * Forward (and, when asked, backward) over row chunks c of h [N, d] with the table E [V, d], Eᵀ [d, V]:
 *   logits_c = h_c·Eᵀ,  lse_c = m + log Σ_v exp(logits_c − m),  nll_c = lse_c − logits_c[t];
 *   P_c = softmax(logits_c),  dh_c = (P_c·E − E[t_c]) / N,  dE += P_cᵀ·(h_c/N);
 * and after the loop dE −= Σ_n onehot(t_n) h_nᵀ / N (a segment sum of h's rows by target).
 */
function lossParts(
  h: tf.Tensor2D,
  table: tf.Tensor2D,
  targets: tf.Tensor1D,
  rows: number,
  withGrad: boolean,
): LossParts {
  const [N, d] = h.shape;
  const V = table.shape[0];
  // With free transpose flags the products take E as it is and the gradient accumulates as dE [V, d]; otherwise
  // Eᵀ is formed once and the gradient accumulates as dEᵀ [d, V] (two [d, V] transposes in all, not one per chunk).
  const flags = transposeFlagsAreFree();
  const tableT = flags ? null : tf.transpose<tf.Tensor2D>(table); // [d, V], once
  const invN = 1 / N;
  let sum = tf.scalar(0);
  let dAcc: tf.Tensor2D | null = withGrad ? tf.zeros(flags ? [V, d] : [d, V]) : null; // dE or dEᵀ
  const dhChunks: tf.Tensor2D[] = [];
  for (let start = 0; start < N; start += rows) {
    const c = Math.min(rows, N - start);
    const acc = dAcc;
    const step = tf.tidy(() => {
      const hc = tf.slice(h, [start, 0], [c, d]); // [c, d]
      const tc = tf.slice(targets, [start], [c]); // [c]
      const logits =
        tableT === null ? matMulT<tf.Tensor2D>(hc, table, false, true) : tf.matMul<tf.Tensor2D>(hc, tableT); // [c, V]
      const { nll, probs } = nllRows(logits, tc, acc !== null); // [c], softmax [c, V]
      const chunkSum = tf.add<tf.Scalar>(sum, tf.sum(nll));
      if (acc === null) return { chunkSum };
      const p = probs as tf.Tensor2D; // [c, V] softmax
      const dhc = tf.mul<tf.Tensor2D>(tf.sub(tf.matMul(p, table), tf.gather(table, tc)), invN); // [c, d]
      const hs = tf.mul(hc, invN); // [c, d]
      const update = flags ? matMulT(p, hs, true, false) : matMulT(hs, p, true, false); // [V, d] or [d, V]
      return { chunkSum, dhc, next: tf.add<tf.Tensor2D>(acc, update) };
    }) as { chunkSum: tf.Scalar; dhc?: tf.Tensor2D; next?: tf.Tensor2D };
    sum.dispose();
    sum = step.chunkSum;
    if (step.dhc !== undefined && step.next !== undefined) {
      dhChunks.push(step.dhc);
      acc?.dispose();
      dAcc = step.next;
    }
  }
  tableT?.dispose();
  if (dAcc === null) return { sum };
  const dh = dhChunks.length === 1 ? (dhChunks[0] as tf.Tensor2D) : tf.concat<tf.Tensor2D>(dhChunks, 0); // [N, d]
  if (dhChunks.length > 1) tf.dispose(dhChunks);
  const accumulated = dAcc;
  const dTable = tf.tidy(() => {
    // −Σ_n onehot(t_n)·h_n/N: rows of h summed by target id (the embedding gradient's segment sum).
    const picked = tf.unsortedSegmentSum(tf.mul(h, invN), targets, V); // [V, d]
    return tf.sub<tf.Tensor2D>(flags ? accumulated : tf.transpose(accumulated), picked); // [V, d]
  });
  dAcc.dispose();
  return { sum, dh, dE: dTable };
}

const chunkedWithGrad = (rows: number) =>
  tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const h = args[0] as tf.Tensor2D; // [N, d]
    const table = args[1] as tf.Tensor2D; // [V, d]
    const targets = args[2] as tf.Tensor1D; // [N] int32
    const save = args[3] as tf.GradSaveFunc;
    const withGrad = gradientRequested();
    const parts = lossParts(h, table, targets, rows, withGrad);
    const N = h.shape[0];
    const value = tf.mul<tf.Scalar>(parts.sum, 1 / N);
    parts.sum.dispose();
    // The gradients were computed with the loss (the chunk's probabilities are at hand then): save them.
    save(withGrad ? [parts.dh as tf.Tensor2D, parts.dE as tf.Tensor2D] : []);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [dh, dE] = saved as [tf.Tensor2D | undefined, tf.Tensor2D | undefined];
        if (dh === undefined || dE === undefined)
          throw new Error(
            'chunkedLmLoss: the gradient was not computed (no gradient tape was recording at the forward pass)',
          );
        return [tf.mul(dh, dy), tf.mul(dE, dy), tf.zerosLike(targets)];
      },
    };
  });

const cache = new Map<number, ReturnType<typeof chunkedWithGrad>>();

/**
 * Next-token loss of a tied-head language model from its final hidden states, without the full logits:
 *   ℓ = (1/N) Σ_n [log Σ_v exp(h_n·E_v) − h_n·E_{t_n}],  N = B·L,
 * equal to lmLoss(logits(h), t) with logits = h·Eᵀ. The rows are processed in chunks (see
 * {@link ChunkedLmLossOptions.chunkRows}); under a gradient tape each chunk also adds its share of
 *   ∂ℓ/∂h = (softmax(h·Eᵀ) − onehot(t))·E / N  and  ∂ℓ/∂E = (softmax(h·Eᵀ) − onehot(t))ᵀ·h / N
 * while its probabilities are at hand, so no [N, V] tensor ever exists (peak ≈ 3 chunks of [rows, V]
 * plus one [d, V] accumulator). hidden [B, L, d], table [V, d], targets int32 [B, L] → scalar.
 */
export function chunkedLmLoss(
  hidden: tf.Tensor3D,
  table: tf.Tensor2D,
  targets: tf.Tensor2D,
  options: ChunkedLmLossOptions = {},
): tf.Scalar {
  if (hidden.rank !== 3 || table.rank !== 2 || hidden.shape[2] !== table.shape[1]) {
    throw new RangeError(
      `chunkedLmLoss expects hidden [B, L, d] and table [V, d], got [${hidden.shape.join(', ')}] and [${table.shape.join(', ')}]`,
    );
  }
  const [B, L, d] = hidden.shape;
  if (targets.rank !== 2 || targets.shape[0] !== B || targets.shape[1] !== L) {
    throw new RangeError(`chunkedLmLoss expects targets [B, L] = [${B}, ${L}], got [${targets.shape.join(', ')}]`);
  }
  if (targets.dtype !== 'int32')
    throw new TypeError(`chunkedLmLoss targets must be int32 token ids, got ${targets.dtype}`);
  const V = table.shape[0];
  const rows = options.chunkRows ?? Math.max(1, Math.floor(CHUNK_BYTES / (4 * V)));
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`chunkRows must be an integer >= 1, got ${rows}`);
  let fn = cache.get(rows);
  if (fn === undefined) {
    fn = chunkedWithGrad(rows);
    cache.set(rows, fn);
  }
  const f = fn;
  return tf.tidy(() => f(tf.reshape(hidden, [B * L, d]), table, tf.reshape(targets, [B * L])));
}

// Fused softmax cross-entropy for language modelling: no logSoftmax, no dense one-hot.
import * as tf from '@tensorflow/tfjs-core';
import { FUSED, hasFusedKernel } from '../backend/wasm-fused.js';

/** Flat index n·V + t_n of each target in the [N·V] view of logits [N, V]: int32 [N]. */
function flatTargetIndex(N: number, V: number, targets: tf.Tensor1D): tf.Tensor1D {
  return tf.add(tf.mul(tf.range(0, N, 1, 'int32'), tf.scalar(V, 'int32')), targets);
}

/**
 * The log-normaliser of each row of x [N, V], lse_n = log Σ_v exp(x_nv) = m_n − log max_v p_nv with m_n = max_v x_nv
 * and p = softmax(x): p at the row's maximum is exp(0)/Σ_v exp(x_nv − m_n), and max_v p_nv ≥ 1/V, so nothing
 * underflows. One softmax kernel (XNNPACK's on wasm, ≈ 4× faster there than the exp, sum and division it replaces);
 * the softmax is returned for callers that need it. lse [N, 1].
 */
function logNormaliser(logits: tf.Tensor2D): { lse: tf.Tensor2D; probs: tf.Tensor2D } {
  const probs = tf.softmax(logits); // [N, V]
  const lse = tf.sub<tf.Tensor2D>(tf.max(logits, -1, true), tf.log(tf.max(probs, -1, true))); // [N, 1]
  return { lse, probs };
}

/** lse_n = log Σ_v exp(x_nv), the log-normaliser of each row (see logNormaliser): x [N, V] → [N, 1]. */
export function logSumExp(logits: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => logNormaliser(logits).lse);
}

/**
 * The one per-token NLL: nll_n = lse_n − x_{n,t_n} (lse from logNormaliser, whose softmax serves, with `withSoftmax`,
 * the fused gradients) for logits x [N, V] and int32 targets t [N]; the target's logit is a gather at the flat index
 * n·V + t_n (no one-hot).
 */
export function nllRows(
  logits: tf.Tensor2D,
  targets: tf.Tensor1D,
  withSoftmax = false,
): { nll: tf.Tensor1D; probs?: tf.Tensor2D } {
  const [N, V] = logits.shape;
  return tf.tidy(() => {
    if (hasFusedKernel(FUSED.softmaxNll)) {
      // the same formulas in one native pass a row (max, exp and sum, p, lse − x_t) on every core
      const [nll, probs] = tf.engine().runKernel<[tf.Tensor1D, tf.Tensor2D]>(FUSED.softmaxNll, { logits, targets });
      return withSoftmax ? { nll, probs } : { nll };
    }
    const { lse: lse2, probs } = logNormaliser(logits);
    const lse = tf.reshape(lse2, [N]); // [N]
    const picked = tf.gather(tf.reshape(logits, [N * V]), flatTargetIndex(N, V, targets)); // [N] logit of the target
    const nll = tf.sub<tf.Tensor1D>(lse, picked); // [N]
    return withSoftmax ? { nll, probs } : { nll };
  });
}

/**
 * Negative log-likelihood of each target, nll_n = log Σ_v exp(x_nv) − x_{n,t_n}, for logits [N, V] and int32
 * targets [N] → [N] (see `nllRows`). Differentiable by tfjs's own gradients; a mean loss for training is
 * {@link crossEntropy}, whose gradient is fused.
 */
export function tokenNll(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  checkLogitsTargets('tokenNll', logits, targets);
  return nllRows(logits, targets).nll;
}

function checkLogitsTargets(who: string, logits: tf.Tensor2D, targets: tf.Tensor1D): void {
  if (logits.rank !== 2 || targets.rank !== 1 || targets.shape[0] !== logits.shape[0]) {
    throw new RangeError(
      `${who} expects logits [N, V] and targets [N], got [${logits.shape.join(', ')}] and [${targets.shape.join(', ')}]`,
    );
  }
  if (targets.dtype !== 'int32') throw new TypeError(`${who} targets must be int32 token ids, got ${targets.dtype}`);
}

const crossEntropyWithGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const logits = args[0] as tf.Tensor2D; // [N, V]
  const targets = args[1] as tf.Tensor1D; // [N] int32
  const save = args[2] as tf.GradSaveFunc;
  const { nll, probs } = nllRows(logits, targets, true);
  const loss = tf.mean<tf.Scalar>(nll);
  nll.dispose();
  save([probs as tf.Tensor2D, targets]);
  return {
    value: loss,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [p, t] = saved as [tf.Tensor2D, tf.Tensor1D];
      const [n, v] = p.shape;
      if (hasFusedKernel(FUSED.softmaxNllGrad))
        return [
          tf.engine().runKernel<tf.Tensor2D>(FUSED.softmaxNllGrad, { probs: p, targets: t, dy }),
          tf.zeros(t.shape),
        ];
      let diff: tf.Tensor;
      if (tf.getKernel('TensorScatterUpdate', tf.getBackend()) !== undefined) {
        // softmax − onehot: subtract 1 at the N target entries only.
        const pFlat = tf.reshape(p, [n * v]); // [N·V]
        const idx = flatTargetIndex(n, v, t); // [N]
        const updated = tf.sub(tf.gather(pFlat, idx), 1); // [N]
        diff = tf.reshape(tf.tensorScatterUpdate(pFlat, tf.reshape(idx, [n, 1]), updated), [n, v]);
      } else {
        // int32 one-hot then cast: wasm 4.22's OneHot returns all zeros when asked for float32 directly.
        diff = tf.sub(p, tf.cast(tf.oneHot(t, v), 'float32'));
      }
      return [tf.mul(diff, tf.div(dy, n)), tf.zeros(t.shape)];
    },
  };
});

/**
 * Mean softmax cross-entropy  ℓ = (1/N) Σ_n nll_n (see `nllRows`)  for logits [N, V] and
 * int32 targets [N], with the fused gradient ∂ℓ/∂x = (softmax(x) − onehot(t))/N. It never
 * computes logSoftmax (about 6.5× slower than softmax on wasm at [1024, 30522]) and, where the
 * backend has TensorScatterUpdate, never materialises a one-hot [N, V].
 */
export function crossEntropy(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Scalar {
  checkLogitsTargets('crossEntropy', logits, targets);
  return crossEntropyWithGrad(logits, targets);
}

/** Next-token loss of a language model: {@link crossEntropy} over logits [B, L, V] and targets [B, L]. */
export function lmLoss(logits: tf.Tensor3D, targets: tf.Tensor2D): tf.Scalar {
  const [B, L, V] = logits.shape;
  if (targets.rank !== 2 || targets.shape[0] !== B || targets.shape[1] !== L) {
    throw new RangeError(`lmLoss expects targets [B, L] = [${B}, ${L}], got [${targets.shape.join(', ')}]`);
  }
  return tf.tidy(() => crossEntropy(tf.reshape(logits, [B * L, V]), tf.reshape(targets, [B * L])));
}

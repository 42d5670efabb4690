// Plücker coordinates of the 2-planes span(a, b) ⊂ R^r: their count, index order and selection (paper-notes §1).
import { binomial, pairIndexArrays } from '@grassflow/grassmann-math';
import * as tf from '@tensorflow/tfjs-core';

/** C(r, 2) = r(r − 1)/2, the number of Plücker coordinates of a 2-plane in R^r (grassmann-math's binomial). */
export function pluckerDim(r: number): number {
  return binomial(r, 2);
}

/**
 * Pairs (i, j), 0 ≤ i < j < r, in lexicographic order (0,1), (0,2), …, (r−2, r−1): the order of the Plücker
 * coordinates p_ij, grassmann-math's pairIndex order (its pairIndexArrays, tested there against pairIndex).
 */
export function pluckerPairs(r: number): Array<[number, number]> {
  const { I, J } = pairIndexArrays(r);
  return Array.from(I, (i, q) => [i, J[q] as number]);
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
 * p̂ = p / sqrt(‖p‖² + ε²) of the planes span(a_t, b_t), p_ij = a_i b_j − a_j b_i (i < j), for a, b [..., r]:
 * [..., C(r, 2)]. Finite everywhere, and 0 exactly where a and b are parallel or one of them is 0.
 */
export function normalizedPlucker(a: tf.Tensor, b: tf.Tensor, eps: number): tf.Tensor {
  return tf.tidy(() => {
    const r = a.shape[a.rank - 1] as number;
    const C = pluckerDim(r);
    const cols = pluckerColumns(r);
    const [iCols, jCols] = [tf.slice(cols, [0], [C]), tf.slice(cols, [C], [C])];
    const axis = a.rank - 1;
    const p = tf.sub(
      tf.mul(tf.gather(a, iCols, axis), tf.gather(b, jCols, axis)),
      tf.mul(tf.gather(a, jCols, axis), tf.gather(b, iCols, axis)),
    ); // [..., C]
    return tf.div(p, tf.sqrt(tf.add(tf.sum(tf.square(p), -1, true), eps * eps)));
  });
}

// Differentiable building blocks with hand-written gradients: matmul, linear, LayerNorm, exact GELU, embedding
// lookup. Every gradient here runs on the cpu and wasm backends.
import * as tf from '@tensorflow/tfjs-core';
import { transposeFlagsAreFree } from '../backend/products.js';
import { FUSED, fusedKernelsAreNative, hasFusedKernel } from '../backend/wasm-fused.js';

/** Swap the last two axes of a rank ≥ 2 tensor, as an explicit `tf.transpose` (never a matMul flag). */
export function transposeLast(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  const n = perm.length;
  if (n < 2) throw new RangeError(`transposeLast needs a tensor of rank >= 2, got shape [${x.shape.join(', ')}]`);
  perm[n - 2] = n - 1;
  perm[n - 1] = n - 2;
  return tf.transpose(x, perm);
}

/**
 * op(A)·op(B) with op = ᵀ where asked (no gradient of its own: for forward and backward passes of the ops here).
 * The transposes are matMul flags where they cost nothing (cblas_sgemm on wasm, see products.ts), and explicit
 * `tf.transpose` calls where a flagged product is slower than a transpose and a plain one (XNNPACK on wasm).
 */
export function matMulT<T extends tf.Tensor>(a: tf.Tensor, b: tf.Tensor, transposeA = false, transposeB = false): T {
  if (transposeFlagsAreFree()) return tf.matMul<T>(a, b, transposeA, transposeB);
  return tf.tidy(() => tf.matMul<T>(transposeA ? transposeLast(a) : a, transposeB ? transposeLast(b) : b));
}

const matmulWithGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const a = args[0] as tf.Tensor;
  const b = args[1] as tf.Tensor;
  const save = args[2] as tf.GradSaveFunc;
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor, tf.Tensor];
      return [matMulT(dy, sb, false, true), matMulT(sa, dy, true, false)]; // dA = dy·Bᵀ, dB = Aᵀ·dy
    },
  };
});

const matmulConstBWithGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const a = args[0] as tf.Tensor;
  const b = args[1] as tf.Tensor;
  const save = args[2] as tf.GradSaveFunc;
  save([b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sb] = saved as [tf.Tensor];
      // b is a constant (e.g. a 0/1 selection matrix): its gradient is never used, skip the product.
      return [matMulT(dy, sb, false, true), tf.zerosLike(sb)];
    },
  };
});

function checkMatmulShapes(a: tf.Tensor, b: tf.Tensor): void {
  if (a.rank < 2 || a.rank !== b.rank) {
    throw new RangeError(
      `matmul needs operands of equal rank >= 2, got [${a.shape.join(', ')}] and [${b.shape.join(', ')}]`,
    );
  }
  if (a.shape[a.rank - 1] !== b.shape[b.rank - 2]) {
    throw new RangeError(`matmul inner dimensions differ: [${a.shape.join(', ')}] · [${b.shape.join(', ')}]`);
  }
}

/**
 * C = A·B for operands of equal rank (batched over leading axes), with gradient dA = dy·Bᵀ, dB = Aᵀ·dy (through
 * {@link matMulT}: flags or explicit transposes, whichever is faster on the backend).
 */
export function matmul<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  checkMatmulShapes(a, b);
  return matmulWithGrad(a, b) as T;
}

/** C = A·B where B is a constant: same as {@link matmul} but no gradient is computed for B. */
export function matmulConst<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  checkMatmulShapes(a, b);
  return matmulConstBWithGrad(a, b) as T;
}

const tiedHeadWithGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const x = args[0] as tf.Tensor2D; // [N, d]
  const table = args[1] as tf.Tensor2D; // [V, d]
  const save = args[2] as tf.GradSaveFunc;
  save([x, table]);
  return {
    value: matMulT(x, table, false, true), // [N, d]·[d, V] = [N, V]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, st] = saved as [tf.Tensor2D, tf.Tensor2D];
      // dx = dy·E needs no transpose. dE = dyᵀ·x; without free flags (xᵀ·dy)ᵀ: one [d, V] transpose, not two.
      const dE = transposeFlagsAreFree() ? tf.matMul(dy, sx, true, false) : tf.transpose(matMulT(sx, dy, true));
      return [tf.matMul(dy, st), dE];
    },
  };
});

/** Tied output head: logits = x·Eᵀ for x [N, d] and an embedding table E [V, d], with dx = dy·E and dE = dyᵀ·x. */
export function tiedHead(x: tf.Tensor2D, table: tf.Tensor2D): tf.Tensor2D {
  if (x.rank !== 2 || table.rank !== 2 || x.shape[1] !== table.shape[1]) {
    throw new RangeError(
      `tiedHead expects x [N, d] and table [V, d], got [${x.shape.join(', ')}] and [${table.shape.join(', ')}]`,
    );
  }
  return tiedHeadWithGrad(x, table) as tf.Tensor2D;
}

/** y = x·W + b for x [..., in], W [in, out] (internal layout), b [out]; leading axes are flattened. */
export function linear(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const inDim = w.shape[0];
  const outDim = w.shape[1] as number;
  const lead = x.shape.slice(0, -1);
  const x2 = tf.reshape(x, [-1, inDim]); // [N, in]
  const y2 = tf.add(matmul(x2, w), b); // [N, out]
  return tf.reshape(y2, [...lead, outDim]); // [..., out]
}

const layerNormWithGrad = (eps: number) =>
  tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = args[0] as tf.Tensor2D; // [N, d]
    const gamma = args[1] as tf.Tensor1D; // [d]
    const beta = args[2] as tf.Tensor1D; // [d]
    const save = args[3] as tf.GradSaveFunc;
    const [value, xhat, rstd] = tf.tidy((): [tf.Tensor2D, tf.Tensor, tf.Tensor] => {
      if (hasFusedKernel(FUSED.layerNorm)) {
        return tf.engine().runKernel<[tf.Tensor2D, tf.Tensor, tf.Tensor]>(FUSED.layerNorm, { x, gamma, beta }, { eps });
      }
      const mean = tf.mean(x, -1, true); // [N, 1]
      const xc = tf.sub(x, mean); // [N, d]
      const variance = tf.mean(tf.square(xc), -1, true); // [N, 1]
      const rstd = tf.rsqrt(tf.add(variance, eps)); // [N, 1]
      const xhat = tf.mul(xc, rstd); // [N, d]
      return [tf.add<tf.Tensor2D>(tf.mul(xhat, gamma), beta), xhat, rstd];
    });
    save([xhat, rstd, gamma]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sxhat, srstd, sgamma] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
        if (hasFusedKernel(FUSED.layerNormGrad)) {
          const inputs = { dy: tf.reshape(dy, sxhat.shape), xhat: sxhat, rstd: srstd, gamma: sgamma };
          return tf.engine().runKernel<tf.Tensor[]>(FUSED.layerNormGrad, inputs);
        }
        const g = tf.mul(dy, sgamma); // [N, d]
        const meanG = tf.mean(g, -1, true); // [N, 1]
        const meanGx = tf.mean(tf.mul(g, sxhat), -1, true); // [N, 1]
        // dx = rstd · (g − mean(g) − x̂ · mean(g ⊙ x̂))
        const dx = tf.mul(srstd, tf.sub(tf.sub(g, meanG), tf.mul(sxhat, meanGx)));
        const dGamma = tf.sum(tf.mul(dy, sxhat), 0); // [d]
        const dBeta = tf.sum(dy, 0); // [d]
        return [dx, dGamma, dBeta];
      },
    };
  });

const layerNormCache = new Map<number, ReturnType<typeof layerNormWithGrad>>();

/**
 * LayerNorm over the last axis: y = (x − μ)/sqrt(σ² + ε) · γ + β, with the closed-form gradient
 * dx = (g − mean(g) − x̂·mean(g⊙x̂))/sqrt(σ² + ε), g = dy⊙γ.
 */
export function layerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps = 1e-5): tf.Tensor {
  let fn = layerNormCache.get(eps);
  if (fn === undefined) {
    fn = layerNormWithGrad(eps);
    layerNormCache.set(eps, fn);
  }
  const d = x.shape[x.rank - 1] as number;
  const x2 = tf.reshape(x, [-1, d]); // [N, d]
  return tf.reshape(fn(x2, gamma, beta), x.shape);
}

const SQRT1_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/**
 * Whether GELU of x runs as the fused kernel: always where it is native; in JS up to 16,384 entries (a decoding step,
 * small batches), where the fixed cost of its 6 composed kernels dominates; above it wasm's vectorised Erf beats a
 * scalar JS loop (≈ 2× at 0.5M).
 */
function geluFused(x: tf.Tensor): boolean {
  return (x.size <= 16_384 || fusedKernelsAreNative()) && hasFusedKernel(FUSED.gelu);
}

const geluWithGrad = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const x = args[0] as tf.Tensor;
  const save = args[1] as tf.GradSaveFunc;
  const [value, cdf] = tf.tidy((): [tf.Tensor, tf.Tensor] => {
    if (geluFused(x)) return tf.engine().runKernel<[tf.Tensor, tf.Tensor]>(FUSED.gelu, { x });
    const cdf = tf.mul(0.5, tf.add(1, tf.erf(tf.mul(x, SQRT1_2)))); // Φ(x)
    return [tf.mul(x, cdf), cdf];
  });
  save([x, cdf]);
  return {
    value,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, scdf] = saved as [tf.Tensor, tf.Tensor];
      if (geluFused(sx)) return [tf.engine().runKernel<tf.Tensor>(FUSED.geluGrad, { dy, x: sx, cdf: scdf })];
      const pdf = tf.mul(INV_SQRT_2PI, tf.exp(tf.mul(-0.5, tf.square(sx)))); // φ(x)
      return [tf.mul(dy, tf.add(scdf, tf.mul(sx, pdf)))];
    },
  };
});

/** Exact GELU: x·Φ(x) = x·(1 + erf(x/√2))/2, gradient Φ(x) + x·φ(x). */
export function gelu<T extends tf.Tensor>(x: T): T {
  return geluWithGrad(x) as T;
}

export { dropout } from './dropout.js';

/**
 * Embedding lookup table[ids]: ids int32 [B, L], table [V, d] → [B, L, d]. The gradient is
 * tf.gather's (UnsortedSegmentSum), which this package registers for wasm (see backend/wasm-kernels.ts).
 */
export function embeddingLookup(table: tf.Tensor2D, ids: tf.Tensor2D): tf.Tensor3D {
  const [B, L] = ids.shape;
  const d = table.shape[1];
  const flat = tf.reshape(ids, [B * L]); // [B·L]
  return tf.reshape(tf.gather(table, flat), [B, L, d]); // [B, L, d]
}

/**
 * Inputs of one tf.addN call: webgpu binds each input and the output as a storage buffer, and WebGPU's default
 * maxStorageBuffersPerShaderStage (8, what tfjs-backend-webgpu's device gets) caps them; above it the pipeline is
 * invalid and the sum silently wrong.
 */
const ADD_N_INPUTS = 7;

/**
 * Σ_k x_k of same-shape tensors, as tf.addN in calls of at most 7 inputs, the running sum first in each call:
 * left to right as one addN on cpu and wasm, and valid on webgpu for any count. At least one tensor.
 */
export function sumTensors<T extends tf.Tensor>(xs: readonly T[]): T {
  if (xs.length === 0) throw new RangeError('sumTensors needs at least one tensor');
  return tf.tidy(() => {
    let sum = xs.length === 1 ? tf.clone(xs[0] as T) : tf.addN<T>(xs.slice(0, ADD_N_INPUTS));
    for (let k = ADD_N_INPUTS; k < xs.length; k += ADD_N_INPUTS - 1)
      sum = tf.addN<T>([sum, ...xs.slice(k, k + ADD_N_INPUTS - 1)]);
    return sum;
  });
}

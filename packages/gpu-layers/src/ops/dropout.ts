// Inverted dropout with a counter-based mask: entry i is kept where a hash of (i, seed) falls below the keep
// probability, so the mask is one pass over its entries (native on every core where the library is loaded, a JS
// loop elsewhere, the same bits on both) rather than tfjs's randomUniform, a JS generator called once per entry.
import * as tf from '@tensorflow/tfjs-core';

/** A native fill of {@link dropoutMaskInto}'s mask (wasm-native.ts sets it while its kernels are on). */
type MaskFill = (out: Float32Array, seed: number, threshold: number, scale: number) => void;
let nativeFill: MaskFill | undefined;

/** Called by wasm-native.ts: the native mask fill while its kernels are registered, undefined otherwise. */
export function setNativeDropoutMask(fill: MaskFill | undefined): void {
  nativeFill = fill;
}

/** lowbias32 (Wellons), a 32-bit hash: x ^= x≫16; x ·= 0x7feb352d; x ^= x≫15; x ·= 0x846ca68b; x ^= x≫16. */
export function hash32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * out[i] = 1/keep where lowbias32(i·0x9e3779b9 + seed) ≫ 8 < round(keep·2²⁴), else 0 (32-bit arithmetic): each entry
 * kept with probability keep (to 2⁻²⁴), independently of the others.
 */
export function dropoutMaskInto(out: Float32Array, keep: number, seed: number): void {
  if (!(keep > 0 && keep <= 1)) throw new RangeError(`dropout: the keep probability must be in (0, 1], got ${keep}`);
  const threshold = Math.round(keep * 2 ** 24);
  const scale = 1 / keep;
  if (nativeFill !== undefined && out.length > 0) {
    nativeFill(out, seed >>> 0, threshold, scale);
    return;
  }
  for (let i = 0; i < out.length; i++)
    out[i] = hash32((Math.imul(i, 0x9e3779b9) + seed) >>> 0) >>> 8 < threshold ? scale : 0;
}

/**
 * Inverted dropout: x ⊙ m with m_i = 1/(1 − rate) with probability 1 − rate, else 0. The seed is drawn from
 * Math.random, so a caller that seeds Math.random (training's withSeededRandom) gets the same mask again.
 */
export function dropout<T extends tf.Tensor>(x: T, rate: number, training: boolean): T {
  if (!training || rate <= 0) return x;
  if (!(rate < 1)) throw new RangeError(`dropout: rate must be in [0, 1), got ${rate}`);
  const mask = new Float32Array(x.size);
  dropoutMaskInto(mask, 1 - rate, Math.floor(Math.random() * 2 ** 32));
  return tf.tidy(() => tf.mul(x, tf.tensor(mask, x.shape, 'float32')));
}

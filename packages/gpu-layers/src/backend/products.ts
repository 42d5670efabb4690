// Which matrix-product path the active backend runs, for ops that choose between transpose flags and explicit
// transposes. Runtime-neutral (no Node modules): the Node-only BLAS set-up (wasm-blas.ts) sets it.
import * as tf from '@tensorflow/tfjs-core';

let nativeWasmProducts = false;

/** Set by wasm-blas.ts when its BatchMatMul / _FusedMatMul overrides are registered for 'wasm' (or removed). */
export function setNativeWasmProducts(on: boolean): void {
  nativeWasmProducts = on;
}

/**
 * Whether a `tf.matMul` with transposeA/transposeB flags costs what one on plain operands does on the active backend.
 * True on wasm with the cblas_sgemm products (a transpose is an argument of sgemm there). False on wasm with
 * XNNPACK's products, where a flagged product is ≈ 11× slower than an explicit `tf.transpose` followed by a plain one,
 * and on the other backends, whose flagged paths this package has not measured: they keep the explicit transposes.
 */
export function transposeFlagsAreFree(): boolean {
  return nativeWasmProducts && tf.getBackend() === 'wasm';
}

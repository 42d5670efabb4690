// Fused element-wise kernels for the wasm backend: LayerNorm, exact GELU and expressive attention's weights, forward
// and backward, each one pass of
// plain JS over views of the wasm heap instead of 6–9 tfjs kernels (each its own dispatch, allocation and pass over
// memory). ops.ts calls them where the active backend has them and composes the same formulas from tfjs ops
// elsewhere, so every backend computes the same function; test/fused-kernels.test.ts checks the two agree.
import * as tf from '@tensorflow/tfjs-core';

/** Kernel names (a prefix no tfjs kernel uses). */
export const FUSED = {
  layerNorm: 'GrassflowLayerNorm',
  layerNormGrad: 'GrassflowLayerNormGrad',
  gelu: 'GrassflowGelu',
  geluGrad: 'GrassflowGeluGrad',
  expressiveWeights: 'GrassflowExpressiveWeights',
  expressiveWeightsGrad: 'GrassflowExpressiveWeightsGrad',
  /** The mixer's Σ p̂ over offsets and its gradient (grassmann/pair-sum.ts): native only, no JS kernel. */
  pairSum: 'GrassflowPairSum',
  pairSumGrad: 'GrassflowPairSumGrad',
  /** Softmax and per-row NLL of the loss (loss/loss.ts) and the mean NLL's gradient: native only. */
  softmaxNll: 'GrassflowSoftmaxNll',
  softmaxNllGrad: 'GrassflowSoftmaxNllGrad',
  /** The mixer's blend gate m = g + α⊙(h − g), α = σ(z + b), and its gradient (grassmann/gate.ts): native only. */
  blendGate: 'GrassflowBlendGate',
  blendGateGrad: 'GrassflowBlendGateGrad',
} as const;

/** Whether the active backend has fused kernel `name` (the wasm backend once initBackend has set it up). */
export function hasFusedKernel(name: string): boolean {
  return fusedOn && tf.getKernel(name, tf.getBackend()) !== undefined;
}

/** GRASSFLOW_FUSED=off (or 0, false) starts with them bypassed: the suites run once that way (test:xnnpack). */
let fusedOn = !/^(off|0|false)$/i.test(
  (typeof process === 'undefined' ? undefined : process.env?.['GRASSFLOW_FUSED']) ?? '',
);

/** True while the fused kernels registered for 'wasm' are the native library's (wasm-native.ts). */
let fusedNative = false;

/** Whether the fused kernels run natively (on every core, vectorised): then they pay at every size. */
export function fusedKernelsAreNative(): boolean {
  return fusedNative;
}

/** Called by wasm-native.ts when it registers its kernels (true) or restores the JS ones (false). */
export function setFusedKernelsNative(on: boolean): void {
  fusedNative = on;
}

/** Use (true, the default) or bypass (false: the composed tfjs ops) the fused kernels; for tests and benchmarks. */
export function useFusedKernels(on: boolean): void {
  fusedOn = on;
}

/** What is used here of tfjs-backend-wasm's BackendWasm. */
export interface WasmHeapBackend {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
}

export interface KernelArgs {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}

/** Float32 views of tensors on the heap, derived after every output is allocated (a malloc may grow the heap). */
function views(backend: WasmHeapBackend, ts: readonly tf.TensorInfo[]): Float32Array[] {
  const buffer = backend.wasm.HEAPU8.buffer;
  return ts.map((t) => {
    const at = backend.dataIdMap.get(t.dataId)?.memoryOffset as number;
    return new Float32Array(
      buffer,
      at,
      t.shape.reduce((p, c) => p * c, 1),
    );
  });
}

export function input(args: KernelArgs, name: string): tf.TensorInfo {
  const t = args.inputs[name];
  if (t === undefined || t.dtype !== 'float32') throw new Error(`fused kernel: input ${name} must be a float32 tensor`);
  return t;
}

const shapeOf = (args: KernelArgs, name: string): number[] => input(args, name).shape;

/**
 * Each fused kernel's outputs (float32), by their shapes from its inputs and attrs: the one table that the JS kernels
 * here and the native ones (wasm-native.ts) allocate from, so that both give the same tensors.
 */
const OUTPUT_SHAPES: Readonly<Record<FusedKernelName, (args: KernelArgs) => number[][]>> = {
  [FUSED.layerNorm]: (a) => {
    const [N, d] = shapeOf(a, 'x') as [number, number];
    return [
      [N, d],
      [N, d],
      [N, 1],
    ]; // y, x̂, rstd
  },
  [FUSED.layerNormGrad]: (a) => {
    const [N, d] = shapeOf(a, 'dy') as [number, number];
    return [[N, d], [d], [d]]; // dx, dγ, dβ
  },
  [FUSED.gelu]: (a) => [shapeOf(a, 'x'), shapeOf(a, 'x')], // y, Φ(x)
  [FUSED.geluGrad]: (a) => [shapeOf(a, 'dy')],
  [FUSED.expressiveWeights]: (a) => [shapeOf(a, 'scores')],
  [FUSED.expressiveWeightsGrad]: (a) => [shapeOf(a, 'dy')],
  [FUSED.pairSum]: (a) => {
    const [B, L, r] = shapeOf(a, 'z') as [number, number, number];
    const O = (a.attrs?.['offsets'] as number[]).length;
    const C = (r * (r - 1)) / 2;
    return [
      [B, L, C],
      [B, O, L, C],
      [B, O, L, 1],
    ]; // Σ p̂, p̂ per offset, ‖p‖ per offset
  },
  [FUSED.pairSumGrad]: (a) => [shapeOf(a, 'z')],
  [FUSED.softmaxNll]: (a) => {
    const [N, V] = shapeOf(a, 'logits') as [number, number];
    return [[N], [N, V]]; // nll, softmax
  },
  [FUSED.softmaxNllGrad]: (a) => [shapeOf(a, 'probs')],
  [FUSED.blendGate]: (a) => [shapeOf(a, 'h'), shapeOf(a, 'h')], // m, α
  [FUSED.blendGateGrad]: (a) => [shapeOf(a, 'dm'), shapeOf(a, 'dm'), shapeOf(a, 'dm')], // dh, dg, dz
};

/** The outputs of fused kernel `name` for `args`, allocated on the wasm heap (views of the heap only after this). */
export function fusedOutputs(name: FusedKernelName, args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  return OUTPUT_SHAPES[name](args).map((shape) => backend.makeOutput(shape, 'float32'));
}

/** x [N, d], γ, β [d] → y = x̂·γ + β [N, d], x̂ = (x − μ)·rstd [N, d], rstd = 1/sqrt(σ² + ε) [N, 1]. */
function layerNormKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const x = input(args, 'x');
  const [N, d] = x.shape as [number, number];
  const eps = Number(args.attrs?.['eps']);
  const outs = fusedOutputs(FUSED.layerNorm, args);
  const [xs, gs, bs, ys, xh, rs] = views(backend, [x, input(args, 'gamma'), input(args, 'beta'), ...outs]) as [
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  for (let n = 0, o = 0; n < N; n++, o += d) {
    let sum = 0;
    for (let k = 0; k < d; k++) sum += xs[o + k] as number;
    const mean = sum / d;
    let sq = 0;
    for (let k = 0; k < d; k++) {
      const c = (xs[o + k] as number) - mean;
      sq += c * c;
    }
    const r = 1 / Math.sqrt(sq / d + eps);
    rs[n] = r;
    for (let k = 0; k < d; k++) {
      const h = ((xs[o + k] as number) - mean) * r;
      xh[o + k] = h;
      ys[o + k] = h * (gs[k] as number) + (bs[k] as number);
    }
  }
  return outs;
}

/**
 * dy, x̂ [N, d], rstd [N, 1], γ [d] → dx = rstd·(g − mean(g) − x̂·mean(g⊙x̂)) with g = dy⊙γ [N, d],
 * dγ = Σ_n dy⊙x̂, dβ = Σ_n dy [d].
 */
function layerNormGradKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const dy = input(args, 'dy');
  const [N, d] = dy.shape as [number, number];
  const outs = fusedOutputs(FUSED.layerNormGrad, args);
  const ins = [dy, input(args, 'xhat'), input(args, 'rstd'), input(args, 'gamma')];
  const [dys, xh, rs, gs, dx, dg, db] = views(backend, [...ins, ...outs]) as [
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  const accG = new Float64Array(d);
  const accB = new Float64Array(d);
  for (let n = 0, o = 0; n < N; n++, o += d) {
    let sg = 0;
    let sgx = 0;
    for (let k = 0; k < d; k++) {
      const e = dys[o + k] as number;
      const h = xh[o + k] as number;
      const g = e * (gs[k] as number);
      sg += g;
      sgx += g * h;
      accG[k] = (accG[k] as number) + e * h;
      accB[k] = (accB[k] as number) + e;
    }
    const meanG = sg / d;
    const meanGx = sgx / d;
    const r = rs[n] as number;
    for (let k = 0; k < d; k++) {
      const g = (dys[o + k] as number) * (gs[k] as number);
      dx[o + k] = r * (g - meanG - (xh[o + k] as number) * meanGx);
    }
  }
  dg.set(accG);
  db.set(accB);
  return outs;
}

/**
 * erf(x) by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7), the formula tfjs's own Erf kernels use, evaluated in
 * float64.
 */
function erf(x: number): number {
  const s = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1 - poly * Math.exp(-a * a));
}

/** x → y = x·Φ(x) and Φ(x) = (1 + erf(x/√2))/2, both of x's shape. */
function geluKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const x = input(args, 'x');
  const outs = fusedOutputs(FUSED.gelu, args);
  const [xs, ys, cdf] = views(backend, [x, ...outs]) as [Float32Array, Float32Array, Float32Array];
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i] as number;
    const c = 0.5 * (1 + erf(v * Math.SQRT1_2));
    cdf[i] = c;
    ys[i] = v * c;
  }
  return outs;
}

const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/** dy, x, Φ(x) → dx = dy·(Φ(x) + x·φ(x)). */
function geluGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const dy = input(args, 'dy');
  const [out] = fusedOutputs(FUSED.geluGrad, args) as [tf.TensorInfo];
  const [dys, xs, cdf, dx] = views(backend, [dy, input(args, 'x'), input(args, 'cdf'), out]) as [
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  for (let i = 0; i < dys.length; i++) {
    const v = xs[i] as number;
    dx[i] = (dys[i] as number) * ((cdf[i] as number) + v * INV_SQRT_2PI * Math.exp(-0.5 * v * v));
  }
  return out;
}

/** Attrs of the expressive-attention kernels: ε, and the causal limit (key j of query i allowed: j ≤ t0 + i). */
export function expressiveAttrs(args: KernelArgs): { eps: number; causal: boolean; t0: number } {
  const attrs = args.attrs ?? {};
  return { eps: Number(attrs['eps']), causal: attrs['causal'] === true, t0: Number(attrs['t0']) };
}

/** EA's unnormalised weight e = s²/(1 + s²). */
function expressive(s: number): number {
  const s2 = s * s;
  return s2 / (s2 + 1);
}

/**
 * Scaled scores s [BH, L, n] → EA's weights a = e/(Σ_j e + ε), e = s²/(1 + s²), one row per query; keys past the
 * causal limit get 0.
 */
function expressiveWeightsKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const scores = input(args, 'scores');
  const [BH, L, n] = scores.shape as [number, number, number];
  const { eps, causal, t0 } = expressiveAttrs(args);
  const [out] = fusedOutputs(FUSED.expressiveWeights, args) as [tf.TensorInfo];
  const [s, a] = views(backend, [scores, out]) as [Float32Array, Float32Array];
  for (let row = 0, o = 0; row < BH * L; row++, o += n) {
    const last = causal ? Math.min(n, t0 + (row % L) + 1) : n; // keys 0 … last − 1 are allowed
    let total = eps;
    for (let j = 0; j < last; j++) {
      const e = expressive(s[o + j] as number);
      a[o + j] = e;
      total += e;
    }
    const inv = 1 / total;
    for (let j = 0; j < last; j++) a[o + j] = (a[o + j] as number) * inv;
    a.fill(0, o + last, o + n); // the heap is not zeroed
  }
  return out;
}

/**
 * dy, s, a [BH, L, n] → ds = 2s/(1 + s²)² ⊙ (dy − Σ_j dy_j·a_j)/(Σ_j e + ε) per row [BH, L, n]; 0 past the causal
 * limit.
 */
function expressiveWeightsGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const dyInfo = input(args, 'dy');
  const [BH, L, n] = dyInfo.shape as [number, number, number];
  const { eps, causal, t0 } = expressiveAttrs(args);
  const [out] = fusedOutputs(FUSED.expressiveWeightsGrad, args) as [tf.TensorInfo];
  const [dy, s, a, ds] = views(backend, [dyInfo, input(args, 'scores'), input(args, 'weights'), out]) as [
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  for (let row = 0, o = 0; row < BH * L; row++, o += n) {
    const last = causal ? Math.min(n, t0 + (row % L) + 1) : n;
    let c = 0;
    let total = eps;
    for (let j = 0; j < last; j++) {
      c += (dy[o + j] as number) * (a[o + j] as number);
      total += expressive(s[o + j] as number);
    }
    const inv = 1 / total;
    for (let j = 0; j < last; j++) {
      const v = s[o + j] as number;
      const q = 1 + v * v;
      ds[o + j] = ((2 * v) / (q * q)) * ((dy[o + j] as number) - c) * inv;
    }
    ds.fill(0, o + last, o + n);
  }
  return out;
}

/** A fused kernel's name. */
export type FusedKernelName = (typeof FUSED)[keyof typeof FUSED];

/**
 * The JS kernels, by name: registered for 'wasm' below, and what wasm-native.ts falls back to. The names without one
 * (native only) take the composed tfjs ops there.
 */
export const JS_FUSED_KERNELS: Readonly<Partial<Record<FusedKernelName, tf.KernelFunc>>> = {
  [FUSED.layerNorm]: layerNormKernel,
  [FUSED.layerNormGrad]: layerNormGradKernel,
  [FUSED.gelu]: geluKernel,
  [FUSED.geluGrad]: geluGradKernel,
  [FUSED.expressiveWeights]: expressiveWeightsKernel,
  [FUSED.expressiveWeightsGrad]: expressiveWeightsGradKernel,
};

/** Register the fused kernels for 'wasm' (idempotent). */
export function registerWasmFusedKernels(): void {
  for (const [kernelName, kernelFunc] of Object.entries(JS_FUSED_KERNELS)) {
    if (tf.getKernel(kernelName, 'wasm') === undefined)
      tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc });
  }
}

// Native kernels for the 'wasm' backend under Node, from @grassflow/native-<os>-<cpu> (C, on every core, AVX-512F /
// AVX2 chosen when it loads), called through koffi on Float32Array views of the wasm heap as wasm-blas.ts calls sgemm:
// LayerNorm, exact GELU and expressive attention's weights (under the names of wasm-fused.ts's JS kernels, which stay
// the fallback where the package is not installed, and in the browser), the mixer's Plücker sum and blend gate and
// the loss's softmax and NLL (native only: the composed tfjs ops are their fallback), forward and backward; dropout's
// masks (the same bits as ops/dropout.ts's JS loop); and the optimizer's passes (nativeVectorKernels, for training's
// AdamW and global norm). GRASSFLOW_NATIVE: unset or 'auto' loads the package for this platform, 'off' keeps the JS
// path, a path is the library to load and must load.
import * as tf from '@tensorflow/tfjs-core';
import {
  expressiveAttrs,
  FUSED,
  fusedOutputs,
  input,
  JS_FUSED_KERNELS,
  setFusedKernelsNative,
  type FusedKernelName,
  type KernelArgs,
  type WasmHeapBackend,
} from './wasm-fused.js';
import { setNativeDropoutMask } from '../ops/dropout.js';

/** The library's ABI version this file binds (gf_version()). */
const ABI = 6;
const KOFFI = 'koffi';

/** What the fused kernels run on, for logs and benchmark lines. */
export interface NativeKernelsInfo {
  /** True when the fused kernels are the native library's. */
  active: boolean;
  /** One line: 'native avx512f, 2 threads' when active, else why not and how to enable them. */
  summary: string;
  /** The library file that was loaded. */
  library?: string;
  /**
   * One line to print once, set only where this platform has a native package that is missing or did not load (the
   * JS kernels run then, slower; nothing fails).
   */
  note?: string;
}

type F32 = Float32Array;
interface Native {
  layerNorm(x: F32, g: F32, b: F32, y: F32, xh: F32, r: F32, n: number, d: number, eps: number): void;
  layerNormGrad(dy: F32, xh: F32, r: F32, g: F32, dx: F32, dg: F32, db: F32, n: number, d: number): void;
  gelu(x: F32, y: F32, cdf: F32, n: number): void;
  geluGrad(dy: F32, x: F32, cdf: F32, dx: F32, n: number): void;
  weights(s: F32, a: F32, rows: number, l: number, n: number, eps: number, causal: number, t0: number): void;
  weightsGrad(
    dy: F32,
    s: F32,
    a: F32,
    ds: F32,
    rows: number,
    l: number,
    n: number,
    eps: number,
    c: number,
    t0: number,
  ): void;
  pairSum(
    z: F32,
    value: F32,
    pHat: F32,
    nrm: F32,
    b: number,
    l: number,
    r: number,
    offsets: Int32Array,
    o: number,
    eps: number,
    bidirectional: number,
  ): void;
  pairSumGrad(
    dy: F32,
    z: F32,
    pHat: F32,
    nrm: F32,
    dz: F32,
    b: number,
    l: number,
    r: number,
    offsets: Int32Array,
    o: number,
    eps: number,
    bidirectional: number,
  ): number;
  adamw(
    theta: F32,
    m: F32,
    v: F32,
    g: F32,
    out: F32,
    n: number,
    b1: number,
    b2: number,
    stepSize: number,
    invBc2: number,
    eps: number,
    keep: number,
    scale: number,
  ): void;
  sumSquares(x: F32, n: number): number;
  softmaxNll(x: F32, targets: Int32Array, p: F32, nll: F32, n: number, v: number): void;
  softmaxNllGrad(p: F32, targets: Int32Array, dy: F32, dx: F32, n: number, v: number): void;
  dropoutMask(out: F32, n: number, seed: number, threshold: number, scale: number): void;
  blendGate(h: F32, g: F32, z: F32, b: F32, m: F32, alpha: F32, n: number, d: number): void;
  blendGateGrad(dm: F32, h: F32, g: F32, alpha: F32, dh: F32, dg: F32, dz: F32, n: number): void;
  setThreads(n: number): number;
  isa: string;
  library: string;
}

interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => unknown };
}

let native: Native | undefined;
let info: NativeKernelsInfo = {
  active: false,
  summary: 'not set up (the wasm backend was not initialised under Node)',
};

/** What the wasm backend's fused kernels run on now (see {@link NativeKernelsInfo}). */
export function nativeKernelsInfo(): NativeKernelsInfo {
  return { ...info };
}

/** The package that ships the library for this platform, the esbuild pattern: '@grassflow/native-linux-x64'. */
export function nativePackageName(): string {
  return `@grassflow/native-${process.platform}-${process.arch}`;
}

/** The platforms (`${process.platform}-${process.arch}`) with a native package; elsewhere the JS kernels run. */
const NATIVE_PLATFORMS: readonly string[] = ['linux-x64'];

function bind(koffi: Koffi, library: string): Native {
  const lib = koffi.load(library);
  const version = (lib.func('int gf_version(void)') as () => number)();
  if (version !== ABI) throw new Error(`${library} has ABI version ${version}, this gpu-layers needs ${ABI}`);
  const f = <T>(signature: string) => lib.func(signature) as T;
  return {
    layerNorm: f(
      'void gf_layer_norm(const float *x, const float *gamma, const float *beta, float *y, float *xhat, ' +
        'float *rstd, int n, int d, float eps)',
    ),
    layerNormGrad: f(
      'void gf_layer_norm_grad(const float *dy, const float *xhat, const float *rstd, const float *gamma, ' +
        'float *dx, float *dgamma, float *dbeta, int n, int d)',
    ),
    gelu: f('void gf_gelu(const float *x, float *y, float *cdf, long n)'),
    geluGrad: f('void gf_gelu_grad(const float *dy, const float *x, const float *cdf, float *dx, long n)'),
    weights: f(
      'void gf_expressive_weights(const float *s, float *a, int rows, int l, int n, float eps, int causal, int t0)',
    ),
    weightsGrad: f(
      'void gf_expressive_weights_grad(const float *dy, const float *s, const float *a, float *ds, int rows, ' +
        'int l, int n, float eps, int causal, int t0)',
    ),
    pairSum: f(
      'void gf_pair_sum(const float *z, float *value, float *phat, float *nrm, int b, int l, int r, ' +
        'const int *offsets, int o, float eps, int bidirectional)',
    ),
    pairSumGrad: f(
      'int gf_pair_sum_grad(const float *dy, const float *z, const float *phat, const float *nrm, float *dz, ' +
        'int b, int l, int r, const int *offsets, int o, float eps, int bidirectional)',
    ),
    adamw: f(
      'void gf_adamw(const float *theta, float *m, float *v, const float *g, float *out, long n, double b1, ' +
        'double b2, double step_size, double inv_bc2, double eps, double keep, double scale)',
    ),
    sumSquares: f('double gf_sum_squares(const float *x, long n)'),
    softmaxNll: f('void gf_softmax_nll(const float *x, const int *targets, float *p, float *nll, int n, int v)'),
    softmaxNllGrad: f(
      'void gf_softmax_nll_grad(const float *p, const int *targets, const float *dy, float *dx, int n, int v)',
    ),
    dropoutMask: f('void gf_dropout_mask(float *out, long n, unsigned int seed, unsigned int threshold, float scale)'),
    blendGate: f(
      'void gf_blend_gate(const float *h, const float *g, const float *z, const float *b, float *m, float *alpha, ' +
        'int n, int d)',
    ),
    blendGateGrad: f(
      'void gf_blend_gate_grad(const float *dm, const float *h, const float *g, const float *alpha, float *dh, ' +
        'float *dg, float *dz, long n)',
    ),
    setThreads: f('int gf_set_threads(int n)'),
    isa: (lib.func('const char *gf_isa(void)') as () => string)(),
    library,
  };
}

/** The library's path inside the platform package, or why it is not there. */
async function packagedLibrary(): Promise<{ path?: string; why?: string }> {
  const name = nativePackageName();
  try {
    const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as { libraryPath?: string };
    if (typeof mod.libraryPath !== 'string') return { why: `${name} exports no libraryPath` };
    return { path: mod.libraryPath };
  } catch (err) {
    return { why: `${name} is not installed (${(err as Error).message.split('\n')[0]})` };
  }
}

/**
 * Load the native library once and register its kernels for 'wasm' with `threads` threads (the wasm pool's count);
 * where it is not available, keep the JS kernels and say why in the summary. Call after the wasm backend is set up.
 */
export async function setUpWasmNative(threads: number): Promise<NativeKernelsInfo> {
  const asked = process.env['GRASSFLOW_NATIVE'];
  const explicit = asked !== undefined && asked !== '' && !/^auto$/i.test(asked);
  if (explicit && /^(off|0|false|none|js)$/i.test(asked)) {
    useNativeKernels(false);
    info = { active: false, summary: 'off (GRASSFLOW_NATIVE=off): JS fused kernels' };
    return nativeKernelsInfo();
  }
  if (native === undefined) {
    const platform = `${process.platform}-${process.arch}`;
    if (!explicit && !NATIVE_PLATFORMS.includes(platform)) {
      info = { active: false, summary: `JS fused kernels (no native kernels for ${platform})` };
      return nativeKernelsInfo();
    }
    const found = explicit ? { path: asked } : await packagedLibrary();
    const fail = (why: string): NativeKernelsInfo => {
      if (explicit) throw new Error(`GRASSFLOW_NATIVE=${asked}: ${why}`);
      const summary = `JS fused kernels: ${why}`;
      info = {
        active: false,
        summary,
        note: `grassflow: ${summary}; npm install ${nativePackageName()} enables native`,
      };
      return nativeKernelsInfo();
    };
    if (found.path === undefined) return fail(found.why ?? 'no library');
    let koffi: Koffi;
    try {
      const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ KOFFI)) as { default?: Koffi } & Koffi;
      koffi = mod.default ?? mod;
    } catch (err) {
      return fail(`the optional dependency koffi is not installed (${(err as Error).message.split('\n')[0]})`);
    }
    try {
      native = bind(koffi, found.path);
    } catch (err) {
      return fail(`${found.path} did not load (${(err as Error).message.split('\n')[0]})`);
    }
  }
  const got = native.setThreads(threads);
  info = {
    active: true,
    summary: `native ${native.isa}, ${got} thread${got === 1 ? '' : 's'}`,
    library: native.library,
  };
  useNativeKernels(true);
  return nativeKernelsInfo();
}

/** AdamW's constants for one parameter (see {@link NativeVectorKernels.adamw}). */
export interface AdamWConstants {
  beta1: number;
  beta2: number;
  /** η / (1 − β₁ᵗ) */
  stepSize: number;
  /** 1 / (1 − β₂ᵗ) */
  invBc2: number;
  epsilon: number;
  /** 1 − ηλ where the parameter decays, else 1 */
  keep: number;
  /** the gradient's factor (clipping's) */
  scale: number;
}

/** The optimizer's passes over float32 storage, native (every core, AVX-512F / AVX2), for training's AdamW. */
export interface NativeVectorKernels {
  /**
   * One AdamW update over a parameter's storage in float64, float32 stores: m, v in place, θ' into `out` (θ read
   * only); the arrays have one length.
   */
  adamw(
    theta: Float32Array,
    m: Float32Array,
    v: Float32Array,
    g: Float32Array,
    out: Float32Array,
    c: AdamWConstants,
  ): void;
  /** Σ x², summed in float64. */
  sumSquares(x: Float32Array): number;
}

/**
 * The native optimizer passes while the native kernels are on (see {@link nativeKernelsInfo}), else undefined (the
 * caller runs its JS loop). They work on any Float32Array: the wasm heap's views or the cpu backend's arrays.
 */
export function nativeVectorKernels(): NativeVectorKernels | undefined {
  if (native === undefined || !info.active) return undefined;
  const lib = native;
  return {
    adamw: (theta, m, v, g, out, c) => {
      const n = theta.length;
      if (m.length !== n || v.length !== n || g.length !== n || out.length !== n)
        throw new RangeError(`adamw: arrays of ${n}, ${m.length}, ${v.length}, ${g.length}, ${out.length} elements`);
      if (n > 0) lib.adamw(theta, m, v, g, out, n, c.beta1, c.beta2, c.stepSize, c.invBc2, c.epsilon, c.keep, c.scale);
    },
    sumSquares: (x) => (x.length === 0 ? 0 : lib.sumSquares(x, x.length)),
  };
}

/** Heap views: the whole heap from each tensor's offset on (koffi passes a typed array's own memory). */
function at(backend: WasmHeapBackend, heap: Float32Array, t: tf.TensorInfo): Float32Array {
  return heap.subarray((backend.dataIdMap.get(t.dataId)?.memoryOffset as number) >>> 2);
}

/** An int32 tensor's heap view, as {@link at}. */
function atInt(backend: WasmHeapBackend, t: tf.TensorInfo): Int32Array {
  const heap = new Int32Array(backend.wasm.HEAPU8.buffer);
  return heap.subarray((backend.dataIdMap.get(t.dataId)?.memoryOffset as number) >>> 2);
}

function heapOf(backend: WasmHeapBackend): Float32Array {
  return new Float32Array(backend.wasm.HEAPU8.buffer); // after makeOutput: a grown heap has a new buffer
}

function layerNormKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const x = input(args, 'x');
  const [N, d] = x.shape as [number, number];
  const outs = fusedOutputs(FUSED.layerNorm, args);
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  const [y, xhat, rstd] = outs as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo];
  const [gamma, beta] = [input(args, 'gamma'), input(args, 'beta')];
  if (N * d > 0)
    (native as Native).layerNorm(v(x), v(gamma), v(beta), v(y), v(xhat), v(rstd), N, d, Number(args.attrs?.['eps']));
  return outs;
}

function layerNormGradKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const dy = input(args, 'dy');
  const [N, d] = dy.shape as [number, number];
  const outs = fusedOutputs(FUSED.layerNormGrad, args) as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  const [xhat, rstd, gamma] = [input(args, 'xhat'), input(args, 'rstd'), input(args, 'gamma')];
  if (d > 0)
    (native as Native).layerNormGrad(v(dy), v(xhat), v(rstd), v(gamma), v(outs[0]), v(outs[1]), v(outs[2]), N, d);
  return outs;
}

function geluKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const x = input(args, 'x');
  const outs = fusedOutputs(FUSED.gelu, args) as [tf.TensorInfo, tf.TensorInfo];
  const h = heapOf(backend);
  const n = tf.util.sizeFromShape(x.shape);
  if (n > 0) (native as Native).gelu(at(backend, h, x), at(backend, h, outs[0]), at(backend, h, outs[1]), n);
  return outs;
}

function geluGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const dy = input(args, 'dy');
  const [out] = fusedOutputs(FUSED.geluGrad, args) as [tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  const n = tf.util.sizeFromShape(dy.shape);
  if (n > 0) (native as Native).geluGrad(v(dy), v(input(args, 'x')), v(input(args, 'cdf')), v(out), n);
  return out;
}

function expressiveWeightsKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const scores = input(args, 'scores');
  const [BH, L, n] = scores.shape as [number, number, number];
  const { eps, causal, t0 } = expressiveAttrs(args);
  const [out] = fusedOutputs(FUSED.expressiveWeights, args) as [tf.TensorInfo];
  const h = heapOf(backend);
  if (BH * L * n > 0)
    (native as Native).weights(at(backend, h, scores), at(backend, h, out), BH * L, L, n, eps, causal ? 1 : 0, t0);
  return out;
}

function expressiveWeightsGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const dy = input(args, 'dy');
  const [BH, L, n] = dy.shape as [number, number, number];
  const { eps, causal, t0 } = expressiveAttrs(args);
  const [out] = fusedOutputs(FUSED.expressiveWeightsGrad, args) as [tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  if (BH * L * n > 0)
    (native as Native).weightsGrad(
      v(dy),
      v(input(args, 'scores')),
      v(input(args, 'weights')),
      v(out),
      BH * L,
      L,
      n,
      eps,
      causal ? 1 : 0,
      t0,
    );
  return out;
}

/** Attrs of the pair-sum kernels: the live offsets (each < L), ε and the direction. */
function pairSumAttrs(args: KernelArgs): { offsets: Int32Array; eps: number; bidirectional: number } {
  const attrs = args.attrs ?? {};
  return {
    offsets: Int32Array.from(attrs['offsets'] as number[]),
    eps: Number(attrs['eps']),
    bidirectional: attrs['bidirectional'] === true ? 1 : 0,
  };
}

function pairSumKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const z = input(args, 'z');
  const [B, L, r] = z.shape as [number, number, number];
  const { offsets, eps, bidirectional } = pairSumAttrs(args);
  const O = offsets.length;
  const C = (r * (r - 1)) / 2;
  const outs = fusedOutputs(FUSED.pairSum, args) as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  if (B * L * O * C > 0)
    (native as Native).pairSum(v(z), v(outs[0]), v(outs[1]), v(outs[2]), B, L, r, offsets, O, eps, bidirectional);
  return outs;
}

function pairSumGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const z = input(args, 'z');
  const [B, L, r] = z.shape as [number, number, number];
  const { offsets, eps, bidirectional } = pairSumAttrs(args);
  const [out] = fusedOutputs(FUSED.pairSumGrad, args) as [tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  const [dy, pHat, nrm] = [input(args, 'dy'), input(args, 'pHat'), input(args, 'nrm')];
  if (B * L * r > 0) {
    const o = offsets.length;
    const rc = (native as Native).pairSumGrad(
      v(dy),
      v(z),
      v(pHat),
      v(nrm),
      v(out),
      B,
      L,
      r,
      offsets,
      o,
      eps,
      bidirectional,
    );
    if (rc !== 0) throw new Error(`native pair-sum gradient: no memory for its [${B}, ${o}, ${L}, C] scratch`);
  }
  return out;
}

/** int32 input `name`. */
function intInput(args: KernelArgs, name: string): tf.TensorInfo {
  const t = args.inputs[name];
  if (t === undefined || t.dtype !== 'int32') throw new Error(`fused kernel: input ${name} must be an int32 tensor`);
  return t;
}

function softmaxNllKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const logits = input(args, 'logits');
  const targets = intInput(args, 'targets');
  const [N, V] = logits.shape as [number, number];
  const outs = fusedOutputs(FUSED.softmaxNll, args) as [tf.TensorInfo, tf.TensorInfo];
  const h = heapOf(backend);
  if (N * V > 0)
    (native as Native).softmaxNll(
      at(backend, h, logits),
      atInt(backend, targets),
      at(backend, h, outs[1]),
      at(backend, h, outs[0]),
      N,
      V,
    );
  return outs;
}

function softmaxNllGradKernel(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmHeapBackend;
  const probs = input(args, 'probs');
  const [N, V] = probs.shape as [number, number];
  const [out] = fusedOutputs(FUSED.softmaxNllGrad, args) as [tf.TensorInfo];
  const h = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, h, t);
  if (N * V > 0)
    (native as Native).softmaxNllGrad(
      v(probs),
      atInt(backend, intInput(args, 'targets')),
      v(input(args, 'dy')),
      v(out),
      N,
      V,
    );
  return out;
}

/** h, g, z [N, d], b [d] → m = g + α⊙(h − g), α = σ(z + b) [N, d]. */
function blendGateKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const hIn = input(args, 'h');
  const [N, d] = hIn.shape as [number, number];
  const outs = fusedOutputs(FUSED.blendGate, args) as [tf.TensorInfo, tf.TensorInfo];
  const heap = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, heap, t);
  const [g, z, b] = ['g', 'z', 'b'].map((name) => v(input(args, name))) as [F32, F32, F32];
  if (N * d > 0) (native as Native).blendGate(v(hIn), g, z, b, v(outs[0]), v(outs[1]), N, d);
  return outs;
}

/** dm, h, g, α [N, d] → dh = dm⊙α, dg = dm⊙(1 − α), dz = dm⊙(h − g)⊙α⊙(1 − α) [N, d]. */
function blendGateGradKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmHeapBackend;
  const dm = input(args, 'dm');
  const outs = fusedOutputs(FUSED.blendGateGrad, args) as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo];
  const heap = heapOf(backend);
  const v = (t: tf.TensorInfo) => at(backend, heap, t);
  const [h, g, alpha] = ['h', 'g', 'alpha'].map((name) => v(input(args, name))) as [F32, F32, F32];
  const n = dm.shape.reduce((p, c) => p * c, 1);
  if (n > 0) (native as Native).blendGateGrad(v(dm), h, g, alpha, v(outs[0]), v(outs[1]), v(outs[2]), n);
  return outs;
}

const NATIVE_KERNELS: Readonly<Record<FusedKernelName, tf.KernelFunc>> = {
  [FUSED.layerNorm]: layerNormKernel,
  [FUSED.layerNormGrad]: layerNormGradKernel,
  [FUSED.gelu]: geluKernel,
  [FUSED.geluGrad]: geluGradKernel,
  [FUSED.expressiveWeights]: expressiveWeightsKernel,
  [FUSED.expressiveWeightsGrad]: expressiveWeightsGradKernel,
  [FUSED.pairSum]: pairSumKernel,
  [FUSED.pairSumGrad]: pairSumGradKernel,
  [FUSED.softmaxNll]: softmaxNllKernel,
  [FUSED.softmaxNllGrad]: softmaxNllGradKernel,
  [FUSED.blendGate]: blendGateKernel,
  [FUSED.blendGateGrad]: blendGateGradKernel,
};

/**
 * Register the native (true) or the JS (false) fused kernels for 'wasm'. True needs initBackend (setUpWasmNative) to have
 * loaded the library. For tests and benchmarks that compare both paths in one process.
 */
export function useNativeKernels(on: boolean): void {
  if (on && native === undefined)
    throw new Error(`useNativeKernels(true): no native library is loaded (${info.summary})`);
  // a name without a JS kernel is left unregistered: the composed tfjs ops run for it (hasFusedKernel is false)
  const table: Readonly<Partial<Record<FusedKernelName, tf.KernelFunc>>> = on ? NATIVE_KERNELS : JS_FUSED_KERNELS;
  for (const kernelName of Object.values(FUSED)) {
    if (tf.getKernel(kernelName, 'wasm') !== undefined) tf.unregisterKernel(kernelName, 'wasm');
    const kernelFunc = table[kernelName];
    if (kernelFunc !== undefined) tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc });
  }
  setFusedKernelsNative(on);
  const lib = native;
  setNativeDropoutMask(
    on && lib !== undefined
      ? (out, seed, threshold, scale) => lib.dropoutMask(out, out.length, seed, threshold, scale)
      : undefined,
  );
  if (native !== undefined)
    info = on
      ? { ...info, active: true }
      : { active: false, summary: 'off (useNativeKernels(false)): JS fused kernels', library: native.library };
}

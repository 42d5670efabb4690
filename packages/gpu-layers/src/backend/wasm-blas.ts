// Native matrix products for the 'wasm' backend under Node: BatchMatMul and _FusedMatMul call OpenBLAS's cblas_sgemm
// through koffi (an FFI with prebuilt binaries), on Float32Array views of the tensors in the wasm heap: no copy in or
// out, and a transpose is an sgemm argument rather than a pass over memory. Every other kernel stays tfjs-backend-wasm's.
//
// Why: XNNPACK's wasm SIMD products (128-bit lanes, no FMA) run at ≈ 28 GFLOP/s a core; OpenBLAS's native kernels at
// 105–147 on the same core (docs/benchmarks.md). The views are derived inside each call, after the output is
// allocated: when the heap grows, the old ArrayBuffer is detached and every view of it reads nothing.
import * as tf from '@tensorflow/tfjs-core';
import { betterOpenblasCore, cpuFeatures, vectorWidthOf } from './openblas-core.js';
import { setNativeWasmProducts } from './products.js';

/** The one line that installs OpenBLAS on Debian and Ubuntu (Fedora: openblas-threads; macOS: brew install openblas). */
export const BLAS_INSTALL = 'apt-get install libopenblas0-pthread';

/**
 * The line that installs koffi, the FFI of the native products (an optional peer dependency: nothing else loads it).
 * Its prebuilt binary needs no build script, so pnpm may deny it.
 */
export const KOFFI_INSTALL = "npm install koffi@3.3.4 (pnpm: pnpm add koffi@3.3.4 '--allow-build=!koffi')";

/** What the wasm backend's matrix products run on, for logs, benchmark lines and run provenance. */
export interface BlasInfo {
  /** True when BatchMatMul and _FusedMatMul call cblas_sgemm. */
  active: boolean;
  /** One line: 'openblas 0.3.21 SkylakeX, 2 threads' when active, else why not and how to enable it. */
  summary: string;
  /** The library file or name that was loaded. */
  library?: string;
  /** Its version, from openblas_get_config ('0.3.21'), when it is OpenBLAS. */
  version?: string;
  /** The CPU kernels OpenBLAS runs ('Haswell', 'SkylakeX': openblas_get_corename), when it reports them. */
  core?: string;
  /**
   * One line, present when grassflow chose the kernels: what OpenBLAS detected on this CPU, what runs instead and how
   * to choose yourself; or why the better kernels were not kept.
   */
  coreNote?: string;
  /** OpenBLAS's thread count as set here. */
  threads?: number;
}

/** cblas_sgemm and OpenBLAS's thread controls, as koffi binds them. */
interface Blas {
  sgemm: (
    order: number,
    transA: number,
    transB: number,
    m: number,
    n: number,
    k: number,
    alpha: number,
    a: Float32Array,
    lda: number,
    b: Float32Array,
    ldb: number,
    beta: number,
    c: Float32Array,
    ldc: number,
  ) => void;
  sgemv: (
    order: number,
    trans: number,
    m: number,
    n: number,
    alpha: number,
    a: Float32Array,
    lda: number,
    x: Float32Array,
    incx: number,
    beta: number,
    y: Float32Array,
    incy: number,
  ) => void;
  setThreads?: (n: number) => void;
  getThreads?: () => number;
  library: string;
  config?: string;
  /** openblas_get_corename(): the kernels it loaded ('Prescott', 'SkylakeX'). */
  core?: string;
  /** Closes the library (dlclose): loaded again, OpenBLAS reads OPENBLAS_CORETYPE again. */
  unload: () => void;
}

/** What is used here of koffi's module. */
interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => unknown; unload(): void };
}

/** What is used here of tfjs-backend-wasm's BackendWasm (its class is not exported with these members typed). */
interface WasmBackendLike {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  disposeData(dataId: object, force?: boolean): boolean;
}

type KernelArgs = { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap };

const ROW_MAJOR = 101;
const NO_TRANS = 111;
const TRANS = 112;
const KOFFI = 'koffi';

/** Library names tried in order when GRASSFLOW_BLAS names none (Debian/Ubuntu/Fedora, Homebrew, MSYS2/vcpkg). */
const CANDIDATES: Record<string, string[]> = {
  linux: ['libopenblas.so.0', 'libopenblas.so', 'libopenblasp.so.0'],
  darwin: [
    'libopenblas.dylib',
    '/opt/homebrew/opt/openblas/lib/libopenblas.dylib',
    '/usr/local/opt/openblas/lib/libopenblas.dylib',
  ],
  win32: ['libopenblas.dll', 'openblas.dll'],
};

let blas: Blas | undefined;
let coreNote: string | undefined;
let info: BlasInfo = { active: false, summary: 'not set up (the wasm backend was not initialised under Node)' };
/** The kernels replaced here, as tfjs-backend-wasm registered them (fallbacks, and what `useNativeProducts(false)` restores). */
const OVERRIDDEN = ['BatchMatMul', '_FusedMatMul', 'Sum', 'Mean'] as const;
let originals: Record<(typeof OVERRIDDEN)[number], tf.KernelConfig> | undefined;

/** What the wasm backend's matrix products run on now (see {@link BlasInfo}). */
export function blasInfo(): BlasInfo {
  return { ...info };
}

function envOf(name: string): string | undefined {
  const v = typeof process !== 'undefined' ? process.env[name] : undefined;
  return v === undefined || v === '' ? undefined : v;
}

/** 'OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64' → its version and core. */
export function parseOpenblasConfig(config: string): { version?: string; core?: string } {
  const version = /OpenBLAS\s+(\d+\.\d+\.\d+)/i.exec(config)?.[1];
  const words = config.split(/\s+/).slice(2);
  const core = words.find((w) => /^[A-Z][A-Za-z0-9]+$/.test(w) && !/^(NO_|USE_|MAX_|DYNAMIC)/.test(w));
  return { ...(version === undefined ? {} : { version }), ...(core === undefined ? {} : { core }) };
}

async function loadKoffi(): Promise<Koffi> {
  const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ KOFFI)) as { default?: Koffi } & Koffi;
  return mod.default ?? mod;
}

function bind(koffi: Koffi, library: string): Blas {
  const lib = koffi.load(library);
  const sgemm = lib.func(
    'void cblas_sgemm(int order, int transA, int transB, int m, int n, int k, float alpha, ' +
      'const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)',
  ) as Blas['sgemm'];
  const sgemv = lib.func(
    'void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda, ' +
      'const float *x, int incx, float beta, float *y, int incy)',
  ) as Blas['sgemv'];
  const optional = <F>(signature: string): F | undefined => {
    try {
      return lib.func(signature) as F;
    } catch {
      return undefined; // not OpenBLAS (another CBLAS): no thread control, no config string
    }
  };
  const getConfig = optional<() => string>('const char *openblas_get_config(void)');
  const getCore = optional<() => string>('const char *openblas_get_corename(void)');
  return {
    sgemm,
    sgemv,
    setThreads: optional<(n: number) => void>('void openblas_set_num_threads(int n)'),
    getThreads: optional<() => number>('int openblas_get_num_threads(void)'),
    library,
    ...(getConfig === undefined ? {} : { config: getConfig() }),
    ...(getCore === undefined ? {} : { core: getCore() }),
    unload: () => lib.unload(),
  };
}

/** For tests: the first load runs under OPENBLAS_CORETYPE=core, taken as OpenBLAS's own detection. */
let simulatedDetection: string | undefined;

/**
 * Make the next first load of OpenBLAS in this process look as if OpenBLAS had detected `core` on this CPU (a
 * generic 'Prescott', say), so that the kernel choice below can be tested on any machine. Call before initBackend.
 * @public (for the tests, which call it in a child process)
 */
export function simulateOpenblasDetection(core: string): void {
  if (blas !== undefined) throw new Error('simulateOpenblasDetection: OpenBLAS is already loaded in this process');
  simulatedDetection = core;
}

/** Sets (or, with undefined, removes) an environment variable. */
function setEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/**
 * Load the library, and where OpenBLAS chose kernels without AVX2 on a CPU that has AVX2 or AVX-512F (an OpenBLAS
 * older than the CPU), load it again under the better OPENBLAS_CORETYPE (openblas-core.ts), kept only when its
 * products equal a float64 reference. A user's OPENBLAS_CORETYPE always wins, and GRASSFLOW_BLAS_CORE=off keeps
 * OpenBLAS's own choice. OpenBLAS reads the variable when it loads; it is restored afterwards, so that child processes
 * make their own choice.
 */
function bindChoosingCore(koffi: Koffi, library: string): { lib: Blas; note?: string } {
  const userCore = envOf('OPENBLAS_CORETYPE');
  if (simulatedDetection !== undefined) setEnv('OPENBLAS_CORETYPE', simulatedDetection);
  let lib: Blas;
  try {
    lib = bind(koffi, library);
  } finally {
    setEnv('OPENBLAS_CORETYPE', userCore);
  }
  const detected = lib.core;
  const userChose = userCore !== undefined && simulatedDetection === undefined;
  if (detected === undefined || userChose || /^off$/i.test(envOf('GRASSFLOW_BLAS_CORE') ?? '')) return { lib };
  const cpu = cpuFeatures();
  const target = cpu === undefined ? undefined : betterOpenblasCore(detected, cpu);
  if (cpu === undefined || target === undefined) return { lib };
  const where = `OpenBLAS detected ${detected} on this ${cpu.model} (${vectorWidthOf(cpu)})`;
  lib.unload();
  let chosen: Blas | undefined;
  let why: string | undefined;
  try {
    setEnv('OPENBLAS_CORETYPE', target);
    chosen = bind(koffi, library);
    why =
      chosen.core?.toLowerCase() !== target.toLowerCase()
        ? `it loaded ${chosen.core ?? 'an unnamed core'} instead`
        : sgemmMismatch(chosen);
  } catch (err) {
    why = `loading it failed: ${(err as Error).message.split('\n')[0]}`;
  } finally {
    setEnv('OPENBLAS_CORETYPE', userCore);
  }
  if (chosen !== undefined && why === undefined)
    return {
      lib: chosen,
      note:
        `${where}; grassflow runs its ${target} kernels instead ` +
        `(set OPENBLAS_CORETYPE to choose, or GRASSFLOW_BLAS_CORE=off to keep the detection)`,
    };
  chosen?.unload();
  if (simulatedDetection !== undefined) setEnv('OPENBLAS_CORETYPE', simulatedDetection);
  try {
    lib = bind(koffi, library);
  } finally {
    setEnv('OPENBLAS_CORETYPE', userCore);
  }
  return { lib, note: `${where}; its ${target} kernels were not kept (${why ?? 'unknown'}): ${detected} runs` };
}

/** Shapes the models' products take (projections, weight gradients, the tied head) and odd sizes for edge kernels. */
const CHECK_SHAPES: ReadonlyArray<{ m: number; k: number; n: number; ta: boolean; tb: boolean }> = [
  { m: 128, k: 64, n: 256, ta: false, tb: false },
  { m: 96, k: 128, n: 64, ta: false, tb: true },
  { m: 64, k: 160, n: 80, ta: true, tb: false },
  { m: 37, k: 19, n: 53, ta: true, tb: true },
  { m: 1, k: 64, n: 257, ta: false, tb: true },
];

/**
 * Why this library's sgemm and sgemv do not equal a float64 reference on {@link CHECK_SHAPES} (relative error
 * above 1e-4 of the products' scale), or undefined when they do. Kernels built for another CPU are wrong by far more.
 */
function sgemmMismatch(lib: Blas): string | undefined {
  let seed = 12345;
  const random = (n: number) =>
    Float32Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1);
  for (const { m, k, n, ta, tb } of CHECK_SHAPES) {
    const a = random(m * k);
    const b = random(k * n);
    const c = new Float32Array(m * n);
    lib.sgemm(
      ROW_MAJOR,
      ta ? TRANS : NO_TRANS,
      tb ? TRANS : NO_TRANS,
      m,
      n,
      k,
      1,
      a,
      ta ? m : k,
      b,
      tb ? k : n,
      0,
      c,
      n,
    );
    let worst = 0;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let sum = 0;
        let scale = 0;
        for (let p = 0; p < k; p++) {
          const x = (a[ta ? p * m + i : i * k + p] as number) * (b[tb ? j * k + p : p * n + j] as number);
          sum += x;
          scale += Math.abs(x);
        }
        worst = Math.max(worst, Math.abs((c[i * n + j] as number) - sum) / (scale + 1e-30));
      }
    if (!(worst <= 1e-4))
      return `sgemm ${m}×${k}×${n}${ta ? ' Aᵀ' : ''}${tb ? ' Bᵀ' : ''} off by ${worst.toExponential(1)}`;
  }
  const x = random(64);
  const y = new Float32Array(96);
  const a = random(96 * 64);
  lib.sgemv(ROW_MAJOR, NO_TRANS, 96, 64, 1, a, 64, x, 1, 0, y, 1);
  for (let i = 0; i < 96; i++) {
    let sum = 0;
    let scale = 0;
    for (let p = 0; p < 64; p++) {
      sum += (a[i * 64 + p] as number) * (x[p] as number);
      scale += Math.abs((a[i * 64 + p] as number) * (x[p] as number));
    }
    if (!(Math.abs((y[i] as number) - sum) <= 1e-4 * scale + 1e-30)) return `sgemv row ${i} off`;
  }
  return undefined;
}

/**
 * Default OpenBLAS threads: every core the wasm pool has. The two pools take turns (a product runs on OpenBLAS's, the
 * element-wise kernels on XNNPACK's, never both at once), so each may use every core; docs/benchmarks.md has the
 * measurement (1 + 1, 2 + 1, 1 + 2 and 2 + 2 on 2 cores).
 */
function blasThreads(wasmThreads: number): number {
  const env = envOf('GRASSFLOW_BLAS_THREADS');
  if (env === undefined) return wasmThreads;
  const n = Number(env);
  if (!Number.isInteger(n) || n < 1 || String(n) !== env.trim())
    throw new RangeError(`GRASSFLOW_BLAS_THREADS must be an integer >= 1, got '${env}'`);
  return n;
}

/**
 * Find and bind OpenBLAS once (GRASSFLOW_BLAS: unset or 'auto' searches the usual names, 'off' keeps XNNPACK's
 * products, anything else is the library to load and must load). Then register the BatchMatMul and _FusedMatMul
 * overrides for 'wasm' — call after the wasm backend is initialised, so that the kernels it falls back to (other
 * dtypes, an activation tfjs has no kernel for) have been set up. Returns what {@link blasInfo} returns.
 */
export async function setUpWasmBlas(wasmThreads: number): Promise<BlasInfo> {
  const asked = envOf('GRASSFLOW_BLAS');
  if (asked !== undefined && /^(off|0|false|none|xnnpack)$/i.test(asked)) {
    useNativeProducts(false);
    info = { active: false, summary: 'off (GRASSFLOW_BLAS=off): XNNPACK products' };
    return blasInfo();
  }
  if (blas === undefined) {
    // OpenBLAS's idle threads spin for 2^28 cycles (≈ 0.1 s) before they sleep by default, on the cores XNNPACK's
    // pool needs for the element-wise kernels that follow each product. Read by OpenBLAS when it loads.
    if (typeof process !== 'undefined') process.env['OPENBLAS_THREAD_TIMEOUT'] ??= '4';
    let koffi: Koffi;
    try {
      koffi = await loadKoffi();
    } catch (err) {
      const why = `the optional peer dependency koffi is not installed (${(err as Error).message.split('\n')[0]})`;
      if (asked !== undefined && !/^auto$/i.test(asked)) throw new Error(`GRASSFLOW_BLAS=${asked}: ${why}`);
      info = {
        active: false,
        summary: `XNNPACK products: ${why}; for native ones: ${KOFFI_INSTALL}, and ${BLAS_INSTALL}`,
      };
      return blasInfo();
    }
    const names =
      asked !== undefined && !/^auto$/i.test(asked)
        ? [asked]
        : (CANDIDATES[typeof process !== 'undefined' ? process.platform : ''] ?? []);
    const errors: string[] = [];
    for (const name of names) {
      try {
        const loaded = bindChoosingCore(koffi, name);
        blas = loaded.lib;
        coreNote = loaded.note;
        break;
      } catch (err) {
        errors.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    if (blas === undefined) {
      if (asked !== undefined && !/^auto$/i.test(asked))
        throw new Error(`GRASSFLOW_BLAS=${asked} could not be loaded as a CBLAS library: ${errors.join('; ')}`);
      info = { active: false, summary: `XNNPACK products: no OpenBLAS found; ${BLAS_INSTALL} enables native products` };
      return blasInfo();
    }
  }
  const threads = blasThreads(wasmThreads);
  blas.setThreads?.(threads);
  const got = blas.getThreads?.() ?? threads;
  const parsed = blas.config === undefined ? {} : parseOpenblasConfig(blas.config);
  const core = blas.core ?? parsed.core;
  const name = blas.config === undefined ? blas.library : 'openblas';
  const version = parsed.version === undefined ? '' : ` ${parsed.version}`;
  info = {
    active: true,
    summary: `${name}${version}${core === undefined ? '' : ` ${core}`}, ${got} thread${got === 1 ? '' : 's'}`,
    library: blas.library,
    ...parsed,
    ...(core === undefined ? {} : { core }),
    ...(coreNote === undefined ? {} : { coreNote }),
    threads: got,
  };
  useNativeProducts(true);
  return blasInfo();
}

/**
 * Register (true) or remove (false) the cblas_sgemm BatchMatMul and _FusedMatMul for 'wasm'; false restores
 * tfjs-backend-wasm's XNNPACK kernels. True needs `setUpWasmBlas` to have found a library. For tests and
 * benchmarks that compare both paths in one process.
 */
export function useNativeProducts(on: boolean): void {
  if (originals === undefined) {
    const found = OVERRIDDEN.map((name) => tf.getKernel(name, 'wasm'));
    if (found.some((k) => k === undefined)) {
      if (on) throw new Error("useNativeProducts: @tensorflow/tfjs-backend-wasm's kernels are not registered");
      return;
    }
    originals = Object.fromEntries(OVERRIDDEN.map((name, i) => [name, found[i]])) as typeof originals & object;
  }
  if (on && blas === undefined) throw new Error(`useNativeProducts(true): no BLAS library is loaded (${info.summary})`);
  const ours: Record<(typeof OVERRIDDEN)[number], tf.KernelFunc> = {
    BatchMatMul: blasBatchMatMul,
    _FusedMatMul: blasFusedMatMul,
    Sum: (args) => blasReduce(args, 'Sum'),
    Mean: (args) => blasReduce(args, 'Mean'),
  };
  for (const name of OVERRIDDEN) {
    tf.unregisterKernel(name, 'wasm');
    tf.registerKernel(on ? { kernelName: name, backendName: 'wasm', kernelFunc: ours[name] } : originals[name]);
  }
  setNativeWasmProducts(on);
  if (blas !== undefined && info.library !== undefined)
    info = { ...info, active: on, ...(on ? {} : { summary: `off (useNativeProducts(false)): XNNPACK products` }) };
}

function size(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/**
 * C = op(A)·op(B) over broadcast leading axes, written into a new output: one sgemm per output matrix, or one for the
 * whole batch when B is shared and A is not transposed ([batch·m, k]·[k, n] is the same product, and one large call
 * keeps OpenBLAS's threads busier than many small ones).
 */
function sgemmProduct(
  backend: WasmBackendLike,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  transposeA: boolean,
  transposeB: boolean,
): tf.TensorInfo {
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = (transposeA ? a.shape[ra - 1] : a.shape[ra - 2]) as number;
  const kA = (transposeA ? a.shape[ra - 2] : a.shape[ra - 1]) as number;
  const kB = (transposeB ? b.shape[rb - 1] : b.shape[rb - 2]) as number;
  const n = (transposeB ? b.shape[rb - 2] : b.shape[rb - 1]) as number;
  if (kA !== kB)
    throw new Error(
      `Error in matMul: inner shapes (${kA}) and (${kB}) of Tensors with shapes ${a.shape.join(',')} and ${b.shape.join(',')} and ` +
        `transposeA=${transposeA} and transposeB=${transposeB} must match.`,
    );
  const batchA = a.shape.slice(0, -2);
  const batchB = b.shape.slice(0, -2);
  const batchOut = tf.backend_util.assertAndGetBroadcastShape(batchA, batchB);
  const out = backend.makeOutput([...batchOut, m, n], 'float32');
  const count = size(batchOut);
  if (count * m * n === 0) return out;
  // Views after makeOutput: its malloc may have grown (and so replaced) the heap's buffer.
  const heap = new Float32Array(backend.wasm.HEAPU8.buffer);
  const offset = (t: tf.TensorInfo) => (backend.dataIdMap.get(t.dataId)?.memoryOffset as number) >>> 2;
  const c0 = offset(out);
  if (kA === 0) {
    heap.fill(0, c0, c0 + count * m * n);
    return out;
  }
  const a0 = offset(a);
  const b0 = offset(b);
  const lda = transposeA ? m : kA;
  const ldb = transposeB ? kA : n;
  const ta = transposeA ? TRANS : NO_TRANS;
  const tb = transposeB ? TRANS : NO_TRANS;
  const sgemm = (blas as Blas).sgemm;
  const sizeA = m * kA;
  const sizeB = kA * n;
  const countA = size(batchA);
  const countB = size(batchB);
  if (countB === 1 && !transposeA && countA === count) {
    const rows = count * m;
    if (rows === 1) {
      // One row (a decoding step): y = op(B)ᵀ·a as sgemv. OpenBLAS 0.3.21's sgemm packs all of B for it (k·n floats,
      // 128K for the adaptive head's shortlist), which costs more than the product itself.
      const bRows = transposeB ? n : kA; // B as stored: [bRows, ldb]
      const bTrans = transposeB ? NO_TRANS : TRANS;
      (blas as Blas).sgemv(
        ROW_MAJOR,
        bTrans,
        bRows,
        ldb,
        1,
        heap.subarray(b0),
        ldb,
        heap.subarray(a0),
        1,
        0,
        heap.subarray(c0),
        1,
      );
      return out;
    }
    sgemm(ROW_MAJOR, ta, tb, rows, n, kA, 1, heap.subarray(a0), lda, heap.subarray(b0), ldb, 0, heap.subarray(c0), n);
    return out;
  }
  // Index of each output matrix's A and B under broadcasting (leading axes aligned from the right).
  const rank = batchOut.length;
  const stridesOf = (shape: readonly number[]) => {
    const strides = new Array<number>(rank).fill(0);
    let s = 1;
    for (let i = shape.length - 1, j = rank - 1; i >= 0; i--, j--) {
      strides[j] = shape[i] === 1 ? 0 : s;
      s *= shape[i] as number;
    }
    return strides;
  };
  const strideA = stridesOf(batchA);
  const strideB = stridesOf(batchB);
  const index = new Array<number>(rank).fill(0);
  for (let i = 0; i < count; i++) {
    let ia = 0;
    let ib = 0;
    for (let j = 0; j < rank; j++) {
      ia += (index[j] as number) * (strideA[j] as number);
      ib += (index[j] as number) * (strideB[j] as number);
    }
    sgemm(
      ROW_MAJOR,
      ta,
      tb,
      m,
      n,
      kA,
      1,
      heap.subarray(a0 + ia * sizeA),
      lda,
      heap.subarray(b0 + ib * sizeB),
      ldb,
      0,
      heap.subarray(c0 + i * m * n),
      n,
    );
    for (let j = rank - 1; j >= 0; j--) {
      index[j] = (index[j] as number) + 1;
      if ((index[j] as number) < (batchOut[j] as number)) break;
      index[j] = 0;
    }
  }
  return out;
}

function blasBatchMatMul(args: KernelArgs): tf.TensorInfo {
  const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
  if (a.dtype !== 'float32' || b.dtype !== 'float32')
    return (originals as NonNullable<typeof originals>).BatchMatMul.kernelFunc(args as never) as tf.TensorInfo;
  return sgemmProduct(
    args.backend as WasmBackendLike,
    a,
    b,
    args.attrs?.['transposeA'] === true,
    args.attrs?.['transposeB'] === true,
  );
}

/** tfjs's fused activations and the wasm kernels that compute them. */
const ACTIVATION_KERNELS: Record<string, string> = {
  relu: 'Relu',
  relu6: 'Relu6',
  elu: 'Elu',
  sigmoid: 'Sigmoid',
  leakyrelu: 'LeakyRelu',
  prelu: 'Prelu',
};

function runWasmKernel(name: string, args: KernelArgs): tf.TensorInfo {
  const kernel = tf.getKernel(name, 'wasm');
  if (kernel === undefined) throw new Error(`_FusedMatMul: the wasm backend has no ${name} kernel`);
  return kernel.kernelFunc(args as never) as tf.TensorInfo;
}

/**
 * act(op(A)·op(B) + bias): the product through sgemm, a rank-1 bias (or a scalar) added row by row in the same
 * buffer, the activation by tfjs-backend-wasm's own kernel for it.
 */
function blasFusedMatMul(args: KernelArgs): tf.TensorInfo {
  const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
  const backend = args.backend as WasmBackendLike;
  const activation = (args.attrs?.['activation'] as string | undefined) ?? 'linear';
  const biasSize = bias === undefined ? 0 : size(bias.shape);
  const n = a === undefined ? 0 : ((args.attrs?.['transposeB'] === true ? b?.shape.at(-2) : b?.shape.at(-1)) ?? 0);
  const unsupported =
    a === undefined ||
    b === undefined ||
    a.dtype !== 'float32' ||
    b.dtype !== 'float32' ||
    (bias !== undefined && (bias.dtype !== 'float32' || bias.shape.length > 1 || (biasSize !== 1 && biasSize !== n))) ||
    (activation !== 'linear' && ACTIVATION_KERNELS[activation] === undefined);
  if (unsupported)
    return (originals as NonNullable<typeof originals>)._FusedMatMul.kernelFunc(args as never) as tf.TensorInfo;
  const out = sgemmProduct(backend, a, b, args.attrs?.['transposeA'] === true, args.attrs?.['transposeB'] === true);
  const total = size(out.shape);
  if (bias !== undefined && total > 0) {
    const heap = new Float32Array(backend.wasm.HEAPU8.buffer);
    const c0 = (backend.dataIdMap.get(out.dataId)?.memoryOffset as number) >>> 2;
    const b0 = (backend.dataIdMap.get(bias.dataId)?.memoryOffset as number) >>> 2;
    if (biasSize === 1) {
      const v = heap[b0] as number;
      for (let i = c0; i < c0 + total; i++) heap[i] = (heap[i] as number) + v;
    } else {
      for (let row = c0; row < c0 + total; row += n)
        for (let j = 0; j < n; j++) heap[row + j] = (heap[row + j] as number) + (heap[b0 + j] as number);
    }
  }
  if (activation === 'linear') return out;
  const kernel = ACTIVATION_KERNELS[activation] as string;
  const activated =
    activation === 'prelu'
      ? runWasmKernel(kernel, { inputs: { x: out, alpha: preluActivationWeights }, backend })
      : runWasmKernel(kernel, {
          inputs: { x: out },
          backend,
          attrs: activation === 'leakyrelu' ? { alpha: Number(args.attrs?.['leakyreluAlpha'] ?? 0.2) } : {},
        });
  backend.disposeData(out.dataId);
  return activated;
}

/** A vector of ones for the reductions, grown as needed (outside the wasm heap: sgemv reads it through koffi). */
let ones = new Float32Array(0);

function onesOf(n: number): Float32Array {
  if (ones.length < n) ones = new Float32Array(Math.max(n, 2 * ones.length)).fill(1);
  return ones;
}

/**
 * Σ (or the mean) over a contiguous block of axes, x viewed as [A, R, I] with R the reduced block: out = X·1 when the
 * block is innermost (I = 1), 1ᵀ·X_a for each a otherwise: matrix-vector products that OpenBLAS runs at memory speed.
 * tfjs-backend-wasm transposes x first whenever the axes are not innermost (≈ 16× slower for a sum over rows, as in
 * every bias and LayerNorm gradient). Other dtypes and non-contiguous axes take tfjs-backend-wasm's kernel.
 */
function blasReduce(args: KernelArgs, kind: 'Sum' | 'Mean'): tf.TensorInfo {
  const x = args.inputs['x'] as tf.TensorInfo;
  const axis = args.attrs?.['axis'] as number | number[] | null | undefined;
  const axes = (axis == null ? x.shape.map((_, k) => k) : tf.util.parseAxisParam(axis, x.shape)).sort((p, q) => p - q);
  const first = axes[0] ?? 0;
  const contiguous = axes.every((a, i) => a === first + i);
  const stock = (originals as NonNullable<typeof originals>)[kind];
  if (x.dtype !== 'float32' || axes.length === 0 || !contiguous || size(x.shape) === 0)
    return stock.kernelFunc(args as never) as tf.TensorInfo;
  const last = first + axes.length;
  const A = size(x.shape.slice(0, first));
  const R = size(x.shape.slice(first, last));
  const I = size(x.shape.slice(last));
  const keep = args.attrs?.['keepDims'] === true;
  const shape = keep
    ? x.shape.map((s, k) => (k >= first && k < last ? 1 : s))
    : [...x.shape.slice(0, first), ...x.shape.slice(last)];
  const backend = args.backend as WasmBackendLike;
  const out = backend.makeOutput(shape, 'float32');
  const heap = new Float32Array(backend.wasm.HEAPU8.buffer); // after makeOutput (a grown heap has a new buffer)
  const x0 = (backend.dataIdMap.get(x.dataId)?.memoryOffset as number) >>> 2;
  const y0 = (backend.dataIdMap.get(out.dataId)?.memoryOffset as number) >>> 2;
  const alpha = kind === 'Mean' ? 1 / R : 1;
  const sgemv = (blas as Blas).sgemv;
  const v = onesOf(R);
  if (I === 1) {
    sgemv(ROW_MAJOR, NO_TRANS, A, R, alpha, heap.subarray(x0), R, v, 1, 0, heap.subarray(y0), 1);
  } else {
    for (let a = 0; a < A; a++)
      sgemv(ROW_MAJOR, TRANS, R, I, alpha, heap.subarray(x0 + a * R * I), I, v, 1, 0, heap.subarray(y0 + a * I), 1);
  }
  return out;
}

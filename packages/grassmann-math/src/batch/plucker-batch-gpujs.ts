// pluckerBatch on gpu.js kernels: cached kernels per (gpu.js mode, r, rows), run over fixed-size chunks.
// gpu.js is an optional peer dependency (with its dependencies, ~90 MB that the default 'ts' backend never uses): it
// is loaded on demand by loadGpuJs(), and only its types are imported statically (they stay out of our .d.ts).
import type { GPU as GpuJsGpu, IKernelRunShortcut } from 'gpu.js';
import { pairIndexArrays } from '../combinatorics.js';
import type { BatchArray } from './batch-input.js';

/** The version range of the optional peer dependency gpu.js, in the install line that errors print. */
const GPU_JS_INSTALL = 'npm install gpu.js@2.24.1';

/**
 * Thrown when the 'gpujs' backend is asked for and gpu.js is not available: `reason` 'not-installed' (install
 * gpu.js), 'not-loaded' (call `await loadGpuJs()` once before the synchronous pluckerBatch) or
 * 'failed-to-load' (it is installed but its module threw; the message carries gpu.js's error).
 */
export class GpuJsUnavailableError extends Error {
  override readonly name = 'GpuJsUnavailableError';
  readonly reason: 'not-installed' | 'not-loaded' | 'failed-to-load';

  constructor(reason: GpuJsUnavailableError['reason'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

let gpuJsClass: typeof GpuJsGpu | undefined;

/**
 * Loads gpu.js (an optional peer dependency) for pluckerBatch's 'gpujs' backend; resolves once it is ready, and at
 * once on later calls. Rejects with a GpuJsUnavailableError naming the package to install when gpu.js is absent.
 * An async step because ES modules load asynchronously, while pluckerBatch stays synchronous.
 */
export async function loadGpuJs(): Promise<void> {
  if (gpuJsClass !== undefined) return;
  let mod: { GPU?: typeof GpuJsGpu; default?: { GPU?: typeof GpuJsGpu } };
  try {
    mod = await import('gpu.js');
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const missing =
      (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && String(e.message).includes('gpu.js');
    throw missing
      ? new GpuJsUnavailableError(
          'not-installed',
          `pluckerBatch's 'gpujs' backend needs gpu.js, an optional peer dependency that is not installed: ` +
            `run \`${GPU_JS_INSTALL}\` (the default backend 'ts' needs nothing)`,
          { cause: err },
        )
      : new GpuJsUnavailableError('failed-to-load', `gpu.js is installed but failed to load: ${e.message}`, {
          cause: err,
        });
  }
  // gpu.js is CommonJS: Node's ESM import finds GPU as a named export, some bundlers only on the default export.
  const loaded = mod.GPU ?? mod.default?.GPU;
  if (loaded === undefined) throw new GpuJsUnavailableError('failed-to-load', 'gpu.js loaded but exports no GPU');
  gpuJsClass = loaded;
}

/** The GPU class of gpu.js, or the error that says to call loadGpuJs() first. */
function requireGpuJs(): typeof GpuJsGpu {
  if (gpuJsClass !== undefined) return gpuJsClass;
  throw new GpuJsUnavailableError(
    'not-loaded',
    "pluckerBatch's 'gpujs' backend needs gpu.js loaded first: `await loadGpuJs()` once (gpu.js is an optional peer " +
      `dependency: \`${GPU_JS_INSTALL}\`)`,
  );
}

/**
 * gpu.js modes usable with the synchronous pluckerBatch. 'gpu' (default) auto-selects
 * headlessgl → webgl2 → webgl → webasm → cpu; in Node without the `gl` package that is 'webasm'
 * (WebAssembly + SIMD on the CPU). 'webgpu' and 'async' are excluded: their kernels return Promises.
 */
export type GpuJsMode = 'gpu' | 'webgl' | 'webgl2' | 'headlessgl' | 'webasm' | 'cpu';

/**
 * Output cells per kernel call: 2^18 floats (1 MiB). gpu.js returns a freshly allocated copy of the
 * output on every call; fresh buffers of many MiB pay page faults each time (16 MiB chunks were several
 * times slower per value than 1 MiB chunks in ad-hoc runs), and ≤ 2^24 keeps every index exact on
 * float-only GL backends.
 */
const CHUNK_CELLS = 1 << 18;

/**
 * Thread (x, y) = (pair q, row n) of a chunk; constants I[q], J[q] hold the pair (i, j).
 * A string, so bundlers and coverage tools cannot rewrite the source gpu.js transpiles.
 */
const KERNEL_SOURCE = `function (a, b) {
  const o = this.thread.y * this.constants.r;
  const i = this.constants.I[this.thread.x];
  const j = this.constants.J[this.thread.x];
  return a[o + i] * b[o + j] - a[o + j] * b[o + i];
}`;

/** Fewest rows a kernel is built for (smaller batches are padded up to it). */
const MIN_ROWS = 64;

interface KernelEntry {
  readonly kernel: IKernelRunShortcut;
  /** Rows per call; the kernel's output is [P, rows] (x = pair, y = row). */
  readonly rows: number;
  /** Zero-padded staging for the last, partial chunk (and for Float64 input of the tail). */
  readonly padA: Float32Array;
  readonly padB: Float32Array;
}

const gpus = new Map<GpuJsMode, GpuJsGpu>();
const kernels = new Map<string, KernelEntry>();
let lastMode: string | null = null;

/**
 * Rows per kernel call for a batch of `remaining` rows: the full chunk, or for a smaller batch (or
 * the tail) the next power of two ≥ remaining (at least MIN_ROWS). Padding wastes < 2× work, and
 * at most log2(chunk / MIN_ROWS) + 1 kernels exist per (mode, r).
 */
function rowsFor(r: number, remaining: number): number {
  const P = (r * (r - 1)) / 2;
  const chunkRows = Math.max(1, Math.floor(CHUNK_CELLS / P));
  if (remaining >= chunkRows) return chunkRows;
  let rows = MIN_ROWS;
  while (rows < remaining) rows *= 2;
  return Math.min(rows, chunkRows);
}

function kernelFor(mode: GpuJsMode, r: number, rows: number): KernelEntry {
  const key = `${mode}:${r}:${rows}`;
  const hit = kernels.get(key);
  if (hit !== undefined) return hit;
  let gpu = gpus.get(mode);
  if (gpu === undefined) {
    gpu = new (requireGpuJs())({ mode });
    gpus.set(mode, gpu);
  }
  const P = (r * (r - 1)) / 2;
  const { I, J } = pairIndexArrays(r);
  const kernel = gpu.createKernel(KERNEL_SOURCE, {
    output: [P, rows],
    constants: { r, I: Float32Array.from(I), J: Float32Array.from(J) },
    precision: 'single',
    tactic: 'precision',
  });
  const entry: KernelEntry = { kernel, rows, padA: new Float32Array(rows * r), padB: new Float32Array(rows * r) };
  kernels.set(key, entry);
  return entry;
}

/** The flat [rows, P] view of a 2D kernel result (one buffer), or a copy if rows are not contiguous. */
function flatten(result: unknown, used: number, P: number, dst: Float32Array, dstOffset: number): void {
  const rowsOut = result as Float32Array[];
  const first = rowsOut[0]!;
  const last = rowsOut[used - 1]!;
  if (last.buffer === first.buffer && last.byteOffset === first.byteOffset + (used - 1) * P * 4) {
    dst.set(new Float32Array(first.buffer, first.byteOffset, used * P), dstOffset);
    return;
  }
  for (let n = 0; n < used; n++) dst.set(rowsOut[n]!.subarray(0, P), dstOffset + n * P);
}

/** Same contract as pluckerBatchTsInto, computed by gpu.js in float32. No checks. */
export function pluckerBatchGpuJsInto(
  zPrev: BatchArray,
  zCur: BatchArray,
  N: number,
  r: number,
  out: Float32Array,
  mode: GpuJsMode,
): void {
  requireGpuJs(); // before the N = 0 shortcut: the backend is unavailable whatever the batch
  if (N === 0) return;
  const P = (r * (r - 1)) / 2;
  let kernel: IKernelRunShortcut | null = null;
  for (let start = 0; start < N;) {
    const entry = kernelFor(mode, r, rowsFor(r, N - start));
    const { rows, padA, padB } = entry;
    kernel = entry.kernel;
    const used = Math.min(rows, N - start);
    let a: BatchArray = zPrev.subarray(start * r, (start + used) * r);
    let b: BatchArray = zCur.subarray(start * r, (start + used) * r);
    if (used < rows || !(a instanceof Float32Array) || !(b instanceof Float32Array)) {
      // The kernel's argument size and type are fixed: stage as float32, zero rows padding the tail.
      padA.set(a);
      padB.set(b);
      padA.fill(0, used * r);
      padB.fill(0, used * r);
      a = padA;
      b = padB;
    }
    const result = kernel(a, b);
    flatten(result, used, P, out, start * P);
    start += used;
  }
  const inner = kernel!.kernel as unknown as { constructor: { mode?: string } };
  lastMode = inner.constructor.mode ?? null;
}

/**
 * The gpu.js backend that ran the most recent gpu.js pluckerBatch call ('webasm', 'headlessgl',
 * 'webgl2', 'cpu', …), or null before the first one.
 */
export function gpuJsBackendMode(): string | null {
  return lastMode;
}

/** Destroys every cached gpu.js kernel and GPU instance (they are rebuilt on the next call). */
export async function releaseGpuJsKernels(): Promise<void> {
  const all = [...gpus.values()];
  kernels.clear();
  gpus.clear();
  lastMode = null;
  await Promise.all(all.map((g) => g.destroy()));
}

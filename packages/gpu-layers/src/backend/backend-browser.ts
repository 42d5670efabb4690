// Backend selection in a browser (the package's "browser" entry): webgpu (a real adapter) → wasm → cpu, or one by
// name. It says which it chose and why; the wasm files' location is an option, and wasm runs threads where the page
// is cross-origin isolated. No Node backend (tfjs-node, Dawn, the Node thread set-up) is referenced here.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import {
  firstLoadable,
  BackendUnavailableError,
  WASM_FILES,
  wasmThreadsNote,
  type BackendInfo,
  type WasmFileName,
} from './backend-info.js';
import type { WebgpuAdapterInfo } from './webgpu-node.js';
import { registerWasmKernelOverrides, registerWasmTrainingKernels } from './wasm-kernels.js';

/** Backends a browser can select, in automatic order. */
export const BROWSER_BACKEND_NAMES = ['webgpu', 'wasm', 'cpu'] as const;
export type BrowserBackendName = (typeof BROWSER_BACKEND_NAMES)[number];

export interface BrowserInitBackendOptions {
  /** Force one backend; default: the first of webgpu (a real adapter only), wasm, cpu that loads. */
  backend?: BrowserBackendName;
  /**
   * Where the page serves tfjs-backend-wasm's .wasm files: a folder URL ending in '/' (e.g. '/wasm/') or one URL
   * per file. Default: next to the bundled script, which only works if the build copied them there.
   */
  wasmPaths?: string | Readonly<Record<WasmFileName, string>>;
  /**
   * wasm: threads of the XNNPACK pool (default: navigator.hardwareConcurrency, at most 8). More than one needs a
   * cross-origin isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp).
   */
  threads?: number;
  /**
   * webgpu: loads @tensorflow/tfjs-backend-webgpu, e.g. `() => import('@tensorflow/tfjs-backend-webgpu')`, so that
   * the bundler includes it only where asked for. Without it webgpu is skipped (automatic) or refused (by name).
   */
  loadWebgpu?: () => Promise<unknown>;
}

/** What was selected in the browser: the Node report, plus one sentence of why this backend. */
export interface BrowserBackendInfo extends BackendInfo {
  name: BrowserBackendName;
  /** Why this backend (and, for wasm, this many threads), e.g. 'wasm, SIMD, 4 threads: no WebGPU adapter; …'. */
  reason: string;
}

interface BrowserGlobals {
  navigator?: {
    gpu?: { requestAdapter(): Promise<GpuAdapterLike | null> };
    hardwareConcurrency?: number;
  };
  crossOriginIsolated?: boolean;
}
interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; description?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
}

const ISOLATION_FIX =
  'serve the page with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: ' +
  'require-corp to get threads';

async function loadWebgpu(automatic: boolean, options: BrowserInitBackendOptions): Promise<Partial<BackendInfo>> {
  const gpu = (globalThis as BrowserGlobals).navigator?.gpu;
  if (gpu === undefined) {
    throw new BackendUnavailableError(
      'webgpu',
      'this browser offers no WebGPU (navigator.gpu is undefined; Chromium has it on https:// or localhost pages, with a GPU it supports)',
    );
  }
  let adapter: GpuAdapterLike | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (err) {
    throw new BackendUnavailableError('webgpu', `navigator.gpu.requestAdapter() failed: ${(err as Error).message}`);
  }
  if (adapter === null) throw new BackendUnavailableError('webgpu', 'navigator.gpu.requestAdapter() found no adapter');
  const info: WebgpuAdapterInfo = {
    vendor: adapter.info?.vendor ?? '',
    architecture: adapter.info?.architecture ?? '',
    description: adapter.info?.description ?? '',
    fallback: adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false,
  };
  if (automatic && info.fallback) {
    throw new BackendUnavailableError(
      'webgpu',
      `the only WebGPU adapter (${info.vendor || 'unnamed'}) is a software fallback: used only when asked for by name`,
    );
  }
  if (options.loadWebgpu === undefined) {
    throw new BackendUnavailableError(
      'webgpu',
      "an adapter exists, but no WebGPU backend was given: pass loadWebgpu: () => import('@tensorflow/tfjs-backend-webgpu')",
    );
  }
  await options.loadWebgpu();
  if (tf.findBackendFactory('webgpu') === null || tf.findBackendFactory('webgpu') === undefined) {
    throw new BackendUnavailableError(
      'webgpu',
      'loadWebgpu() ran but registered no webgpu backend with this tfjs-core',
    );
  }
  if (!(await tf.setBackend('webgpu'))) {
    throw new BackendUnavailableError('webgpu', 'the webgpu backend failed to initialise (see the warning above)');
  }
  return { adapter: info };
}

let wasmConfigured = false;

/**
 * Runs `start` (the wasm backend's initialisation) while `navigator.hardwareConcurrency` reads twice the cores.
 * tfjs-backend-wasm 4.22's C side caps its thread pool at half of emscripten_num_logical_cores(), which is
 * navigator.hardwareConcurrency in a browser: on a 2-core machine a cross-origin isolated page got one thread
 * whatever setThreadsCount asked for. The same correction as under Node (wasm-node-threads.ts), where the wasm
 * import is replaced; here the property is shadowed on the navigator object and removed again right after.
 */
async function withDoubledCoreCount<T>(isolated: boolean, start: () => Promise<T>): Promise<T> {
  const nav = (globalThis as { navigator?: object }).navigator;
  const cores = (nav as { hardwareConcurrency?: number } | undefined)?.hardwareConcurrency;
  if (!isolated || nav === undefined || typeof cores !== 'number' || Object.hasOwn(nav, 'hardwareConcurrency'))
    return start();
  Object.defineProperty(nav, 'hardwareConcurrency', { configurable: true, get: () => 2 * cores });
  try {
    return await start();
  } finally {
    delete (nav as { hardwareConcurrency?: number }).hardwareConcurrency;
  }
}

async function loadWasm(options: BrowserInitBackendOptions): Promise<Partial<BackendInfo> & { why: string }> {
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  registerWasmTrainingKernels();
  const isolated = (globalThis as BrowserGlobals).crossOriginIsolated === true;
  const cores = (globalThis as BrowserGlobals).navigator?.hardwareConcurrency ?? 1;
  const threads = options.threads ?? Math.max(1, Math.min(8, cores));
  if (!Number.isInteger(threads) || threads < 1)
    throw new RangeError(`threads must be an integer >= 1, got ${threads}`);
  if (!wasmConfigured) {
    // tfjs-backend-wasm reads both once, at its first initialisation; setting them again afterwards throws.
    if (options.wasmPaths !== undefined) wasm.setWasmPaths(options.wasmPaths);
    wasm.setThreadsCount(threads);
    wasmConfigured = true;
  }
  const where =
    options.wasmPaths === undefined
      ? 'next to the bundled script'
      : typeof options.wasmPaths === 'string'
        ? `under ${options.wasmPaths}`
        : 'at the URLs given in wasmPaths';
  if (!(await withDoubledCoreCount(isolated, () => tf.setBackend('wasm')))) {
    throw new BackendUnavailableError(
      'wasm',
      `tfjs-backend-wasm did not start: its .wasm files (${WASM_FILES.join(', ')}) were not found ${where}; copy ` +
        'them from node_modules/@tensorflow/tfjs-backend-wasm/dist/ into the site and pass their folder as wasmPaths',
    );
  }
  registerWasmKernelOverrides();
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true;
  const got = wasm.getThreadsCount();
  const unavailable = isolated ? undefined : `the page is not cross-origin isolated; ${ISOLATION_FIX}`;
  const threadsNote = wasmThreadsNote(threads, got, unavailable);
  const why = isolated
    ? `${got} thread${got === 1 ? '' : 's'}: the page is cross-origin isolated`
    : `1 thread: the page is not cross-origin isolated (${ISOLATION_FIX})`;
  return { simd, threads: got, ...(threadsNote === undefined ? {} : { threadsNote }), why };
}

function reasonOf(name: BrowserBackendName, extra: Partial<BackendInfo> & { why?: string }, skipped: string): string {
  const head =
    name === 'webgpu'
      ? `webgpu on ${[extra.adapter?.vendor, extra.adapter?.architecture].filter((s) => s).join(' ') || 'an unnamed adapter'}`
      : name === 'wasm'
        ? `wasm${extra.simd === true ? ', SIMD' : ''}, ${extra.why ?? ''}`
        : 'cpu (plain JavaScript, the slowest)';
  return skipped === '' ? head : `${head}; skipped ${skipped}`;
}

/**
 * Selects and initialises a backend in a browser. Forced (`options.backend`): that one or a
 * {@link BackendUnavailableError} saying why and what to do. Automatic: the first of webgpu (a real adapter, with
 * `loadWebgpu`), wasm, cpu that loads; `reason` says which and why, `skipped` why the others did not.
 */
export async function initBackend(options: BrowserInitBackendOptions = {}): Promise<BrowserBackendInfo> {
  const forced = options.backend;
  if (forced !== undefined && !(BROWSER_BACKEND_NAMES as readonly string[]).includes(forced)) {
    throw new BackendUnavailableError(
      forced,
      `backend '${String(forced)}' does not run in a browser; choose one of ${BROWSER_BACKEND_NAMES.join(', ')}`,
    );
  }
  const candidates = forced !== undefined ? [forced] : [...BROWSER_BACKEND_NAMES];
  return firstLoadable(candidates, forced !== undefined, async (name, skipped) => {
    let extra: Partial<BackendInfo> & { why?: string } = {};
    if (name === 'webgpu') extra = await loadWebgpu(forced === undefined, options);
    else if (name === 'wasm') extra = await loadWasm(options);
    else if (!(await tf.setBackend('cpu')))
      throw new BackendUnavailableError('cpu', "backend 'cpu' failed to initialise");
    await tf.ready();
    const { why: _why, ...info } = extra;
    const skippedText = skipped.map((s) => `${s.name} (${s.reason})`).join(', ');
    return {
      ...info,
      name,
      tfBackend: tf.getBackend(),
      tfjsCore: tf.version_core,
      skipped,
      reason: reasonOf(name, extra, skippedText),
    };
  });
}

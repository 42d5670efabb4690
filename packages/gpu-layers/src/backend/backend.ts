// Backend selection: tfjs-node-gpu (CUDA) → webgpu (a real GPU) → tfjs-node → wasm (SIMD) → cpu, or one by name.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { registerWasmKernelOverrides, registerWasmTrainingKernels } from './wasm-kernels.js';
import { nodeWasmThreadsUnavailable, setUpNodeWasmThreads } from './wasm-node-threads.js';
import { setUpWasmBlas } from './wasm-blas.js';
import { setUpWasmNative } from './wasm-native.js';
import {
  isModuleNotFound,
  describeAdapter,
  NO_ADAPTER,
  probeWebgpuAdapter,
  releaseNavigatorGpu,
  requestWebgpuAdapter,
  WEBGPU_INSTALL,
  type WebgpuAdapterInfo,
} from './webgpu-node.js';
import {
  firstLoadable,
  BACKEND_NAMES,
  BackendUnavailableError,
  wasmThreadsNote,
  type BackendInfo,
  type BackendName,
} from './backend-info.js';

export { BACKEND_NAMES, BackendUnavailableError, wasmThreadsNote, type BackendInfo, type BackendName };

export interface InitBackendOptions {
  /** Force one backend; default: GRASSFLOW_BACKEND, else the first that loads in BACKEND_NAMES order. */
  backend?: BackendName;
  /**
   * wasm only: threads of the XNNPACK thread pool (default: GRASSFLOW_WASM_THREADS, else every core, at most 8).
   * Under Node, initBackend starts tfjs-backend-wasm's threaded SIMD build itself (see wasm-node-threads.ts).
   */
  threads?: number;
}

const NODE_MODULES: Record<'tensorflow-gpu' | 'tensorflow', string> = {
  'tensorflow-gpu': '@tensorflow/tfjs-node-gpu',
  tensorflow: '@tensorflow/tfjs-node',
};

/**
 * tfjs-node(-gpu) is CommonJS and depends on its own copy of @tensorflow/tfjs(-core). Importing it
 * registers the 'tensorflow' backend and its kernels in tfjs-core's engine and kernel registry, which
 * tfjs-core keeps on globalThis (`_tfengine`, `kernelRegistry`) and so shares between copies: the
 * backend becomes usable from this package's tf instance too. We check that it did (an incompatible
 * copy that keeps a private engine would not) rather than assume it.
 */
async function loadNode(name: 'tensorflow-gpu' | 'tensorflow'): Promise<void> {
  const specifier = NODE_MODULES[name];
  let mod: { version?: Record<string, string> };
  // When tfjs-node-gpu failed after registering its kernels, tfjs-node re-registers the same kernel
  // names for 'tensorflow' and tfjs-core warns once per kernel (~150 lines): drop exactly those lines.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (
      typeof args[0] === 'string' &&
      /^The kernel '\w+' for backend 'tensorflow' is already registered$/.test(args[0])
    )
      return;
    warn(...args);
  };
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as { version?: Record<string, string> };
  } catch (err) {
    if (isModuleNotFound(err, specifier)) {
      throw new BackendUnavailableError(
        name,
        `backend '${name}' needs ${specifier}, which is not installed: run \`npm install ${specifier}@4.22.0\`` +
          (name === 'tensorflow-gpu'
            ? ' (Linux x64 with CUDA 11.2 + cuDNN 8.1; its install downloads libtensorflow)'
            : ' (its install downloads libtensorflow)'),
      );
    }
    throw new BackendUnavailableError(
      name,
      `backend '${name}': ${specifier} is installed but failed to load (usually its native libtensorflow was not downloaded at install, e.g. offline; ` +
        `reinstall it with network access or run \`npm rebuild ${specifier}\`): ${(err as Error).message}`,
    );
  } finally {
    console.warn = warn;
  }
  if (tf.findBackendFactory('tensorflow') === null || tf.findBackendFactory('tensorflow') === undefined) {
    const theirs = mod.version?.['tfjs-core'] ?? 'unknown';
    throw new BackendUnavailableError(
      name,
      `${specifier} loaded, but its 'tensorflow' backend is not visible to this package's tfjs-core ${tf.version_core} ` +
        `(it uses tfjs-core ${theirs}); install matching versions (4.22.0) so that they share one engine`,
    );
  }
  if (!(await tf.setBackend('tensorflow'))) {
    throw new BackendUnavailableError(name, `${specifier} loaded, but its 'tensorflow' backend failed to initialise`);
  }
}

let warnedThreads = false;
let notedBlasCore = false;
let notedNative = false;

async function loadWasm(threads: number | undefined): Promise<{
  simd: boolean;
  threads: number;
  threadsNote?: string;
  blas: string;
  blasNote?: string;
  native: string;
}> {
  let wasm: typeof import('@tensorflow/tfjs-backend-wasm');
  try {
    wasm = await import('@tensorflow/tfjs-backend-wasm');
  } catch (err) {
    throw new BackendUnavailableError(
      'wasm',
      `backend 'wasm' needs @tensorflow/tfjs-backend-wasm@4.22.0: ${(err as Error).message}`,
    );
  }
  registerWasmTrainingKernels();
  await setUpNodeWasmThreads(wasm);
  const envThreads = typeof process !== 'undefined' ? process.env['GRASSFLOW_WASM_THREADS'] : undefined;
  if (threads === undefined && envThreads !== undefined && envThreads !== '') {
    threads = Number(envThreads);
    if (!Number.isInteger(threads) || threads < 1)
      throw new RangeError(`GRASSFLOW_WASM_THREADS must be an integer >= 1, got '${envThreads}'`);
  }
  if (threads !== undefined) {
    if (!Number.isInteger(threads) || threads < 1)
      throw new RangeError(`threads must be an integer >= 1, got ${threads}`);
    wasm.setThreadsCount(threads);
  }
  if (!(await tf.setBackend('wasm')))
    throw new BackendUnavailableError('wasm', "backend 'wasm' failed to initialise (see the warning above)");
  registerWasmKernelOverrides();
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true;
  const got = wasm.getThreadsCount();
  const { summary: blas, coreNote: blasNote } = await setUpWasmBlas(got);
  if (blasNote !== undefined && !notedBlasCore) console.warn(blasNote); // once per process, as the threads note
  notedBlasCore = true;
  const { summary: native, note: nativeNote } = await setUpWasmNative(got);
  if (nativeNote !== undefined && !notedNative) console.warn(nativeNote); // once per process
  notedNative = true;
  const note = { native, ...(blasNote === undefined ? {} : { blasNote }) };
  const threadsNote = wasmThreadsNote(threads, got, nodeWasmThreadsUnavailable());
  if (threadsNote === undefined) return { simd, threads: got, blas, ...note };
  if (!warnedThreads) console.warn(threadsNote); // once per process: initBackend may be called again
  warnedThreads = true;
  return { simd, threads: got, threadsNote, blas, ...note };
}

const WEBGPU_BACKEND = '@tensorflow/tfjs-backend-webgpu';

/** Under Node, with no navigator.gpu yet (a browser's, or one set by the caller, is used as it is). */
function isNodeWithoutGpu(): boolean {
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string' && nav?.gpu === undefined;
}

/**
 * tfjs-backend-webgpu on navigator.gpu (under Node: Dawn's binding, see webgpu-node.ts). Its module registers the
 * backend only if navigator.gpu exists when it loads, so the adapter is found first. `automatic`: a fallback
 * (software) adapter is refused, and navigator.gpu dropped again, so that the next backend is tried.
 * Gradients need nothing here: they are registered by tfjs-layers' bundle, for every backend.
 */
async function loadWebgpu(automatic: boolean): Promise<{ adapter: WebgpuAdapterInfo }> {
  const refuseSoftware = (a: WebgpuAdapterInfo): BackendUnavailableError =>
    new BackendUnavailableError(
      'webgpu',
      `backend 'webgpu': the only adapter is a software one, ${describeAdapter({ ...a, fallback: false })}, ` +
        'which is used only when asked for by name (--backend webgpu, GRASSFLOW_BACKEND=webgpu)',
    );
  // Automatic selection under Node asks a probe process first: where the only adapter is a software one (any machine
  // with Mesa installed) Dawn is then never loaded here, and its two limit warnings on stderr are not shown.
  if (automatic && isNodeWithoutGpu()) {
    let probed: WebgpuAdapterInfo | null;
    try {
      probed = await probeWebgpuAdapter();
    } catch (err) {
      throw new BackendUnavailableError('webgpu', `backend 'webgpu': ${(err as Error).message}`);
    }
    if (probed === null) throw new BackendUnavailableError('webgpu', `backend 'webgpu': ${NO_ADAPTER}`);
    if (probed.fallback) throw refuseSoftware(probed);
  }
  let adapter: WebgpuAdapterInfo;
  try {
    adapter = await requestWebgpuAdapter();
  } catch (err) {
    throw new BackendUnavailableError('webgpu', `backend 'webgpu': ${(err as Error).message}`);
  }
  const named = describeAdapter({ ...adapter, fallback: false });
  if (automatic && adapter.fallback) {
    releaseNavigatorGpu();
    throw refuseSoftware(adapter);
  }
  try {
    await import(/* @vite-ignore */ WEBGPU_BACKEND);
  } catch (err) {
    if (isModuleNotFound(err, WEBGPU_BACKEND))
      throw new BackendUnavailableError(
        'webgpu',
        `backend 'webgpu' needs ${WEBGPU_BACKEND}, which is not installed: run \`${WEBGPU_INSTALL}\``,
      );
    throw new BackendUnavailableError(
      'webgpu',
      `backend 'webgpu': ${WEBGPU_BACKEND} failed to load: ${(err as Error).message}`,
    );
  }
  if (tf.findBackendFactory('webgpu') === undefined || tf.findBackendFactory('webgpu') === null) {
    throw new BackendUnavailableError(
      'webgpu',
      `backend 'webgpu': ${WEBGPU_BACKEND} loaded before navigator.gpu existed and registered no backend; ` +
        `let initBackend load it (do not import it yourself first)`,
    );
  }
  if (!(await tf.setBackend('webgpu')))
    throw new BackendUnavailableError(
      'webgpu',
      `backend 'webgpu' failed to initialise on ${named} (see the warning above)`,
    );
  return { adapter };
}

async function load(name: BackendName, threads: number | undefined, automatic: boolean): Promise<Partial<BackendInfo>> {
  if (name === 'tensorflow-gpu' || name === 'tensorflow') {
    await loadNode(name);
    return {};
  }
  if (name === 'webgpu') return loadWebgpu(automatic);
  if (name === 'wasm') return loadWasm(threads);
  if (!(await tf.setBackend('cpu'))) throw new BackendUnavailableError('cpu', "backend 'cpu' failed to initialise");
  return {};
}

/**
 * Select and initialise a backend for this package's tf instance. Forced (option, else the
 * GRASSFLOW_BACKEND environment variable): that one or a {@link BackendUnavailableError} saying why.
 * Automatic: the first of tensorflow-gpu, webgpu (a real adapter only), tensorflow, wasm, cpu that loads.
 */
export async function initBackend(options: InitBackendOptions = {}): Promise<BackendInfo> {
  const env = typeof process !== 'undefined' ? process.env['GRASSFLOW_BACKEND'] : undefined;
  const forced = options.backend ?? (env !== undefined && env !== '' ? env : undefined);
  if (forced !== undefined && !(BACKEND_NAMES as readonly string[]).includes(forced)) {
    const source = options.backend !== undefined ? 'options.backend' : 'GRASSFLOW_BACKEND';
    throw new BackendUnavailableError(
      forced,
      `unknown backend '${forced}' (from ${source}); choose one of ${BACKEND_NAMES.join(', ')}`,
    );
  }
  const candidates = forced !== undefined ? [forced as BackendName] : [...BACKEND_NAMES];
  return firstLoadable(candidates, forced !== undefined, async (name, skipped) => {
    const extra = await load(name, options.threads, forced === undefined);
    await tf.ready();
    return { name, tfBackend: tf.getBackend(), tfjsCore: tf.version_core, skipped, ...extra };
  });
}

let ensuring: Promise<unknown> | undefined;

/**
 * Sets a backend up as `initBackend()` does when none is set up yet; one the caller chose (initBackend,
 * tf.setBackend) is kept. What loaders call, so that tfjs never falls back to its own default (and its banner).
 */
export async function ensureBackend(): Promise<void> {
  if (tf.engine().backendName != null) return;
  ensuring ??= initBackend().finally(() => (ensuring = undefined));
  await ensuring;
}

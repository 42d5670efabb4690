// Under Node: the 'wasm' backend on tfjs-backend-wasm 4.22's threaded SIMD build, set up at run time from the
// package's own files (wasm-out/), so an npm install gets XNNPACK's thread pool without a patched node_modules.
import * as tf from '@tensorflow/tfjs-core';

type WasmPackage = typeof import('@tensorflow/tfjs-backend-wasm');
type BackendWasmModule = ConstructorParameters<WasmPackage['BackendWasm']>[0];

/** The emscripten glue of the threaded SIMD build (CommonJS, `module.exports` = the factory). */
const GLUE = '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js';
/** Its worker script, shipped as a CommonJS module that exports the script's text as `wasmWorkerContents`. */
const WORKER = '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.worker.js';
const NODE_FS = 'node:fs/promises';
const NODE_OS = 'node:os';

/** A pthread's Node worker, as emscripten's PThread pool holds it. */
interface PoolWorker {
  ref(): void;
  terminate(): unknown;
}

/** What is used here of the emscripten Module the glue's factory resolves to. */
interface ThreadedModule {
  cwrap(name: string, returnType: string | null, argTypes: string[]): (...args: number[]) => unknown;
  PThread: { unusedWorkers: PoolWorker[]; getNewWorker(): PoolWorker | undefined };
  tfjs?: unknown;
}

/** wasm imports by module name, and what WebAssembly.instantiate resolves to (lib ES2022 has no wasm types). */
type WasmImports = Record<string, Record<string, unknown>>;
interface Instantiated {
  instance: object;
  module: object;
}
const { WebAssembly: webAssembly } = globalThis as unknown as {
  WebAssembly: { instantiate(binary: Uint8Array, imports: WasmImports): Promise<Instantiated> };
};

/** The emscripten Module settings given to the factory (emscripten's documented Module hooks). */
interface FactoryConfig {
  locateFile(path: string, prefix: string): string | URL;
  instantiateWasm(imports: WasmImports, receive: (instance: object, module: object) => void): object;
}

let setUp = false;
let unavailable: string | undefined;

/**
 * Why the threaded build is not in use under Node (too old a runtime, the 'wasm' backend initialised before
 * {@link setUpNodeWasmThreads}, or its start failed); undefined when it is in use, or outside Node, where
 * tfjs-backend-wasm decides on its own.
 */
export function nodeWasmThreadsUnavailable(): string | undefined {
  return unavailable;
}

/**
 * Under Node, replace the 'wasm' backend's factory (before the backend is initialised) with one that starts the
 * threaded SIMD build; once per process, and a no-op elsewhere. Stock tfjs-backend-wasm 4.22 never uses threads
 * under Node: its WASM_HAS_MULTITHREAD_SUPPORT flag is false there, its workers would start from `blob:` URLs that
 * Node's worker_threads cannot load, and the C side caps the pool at half of `os.cpus()`. The kernels stay the
 * package's own (they are registered for the backend name 'wasm'); only the emscripten module differs:
 * - the worker script runs from a `data:` URL (an ES module that first defines the `require` and `__filename`
 *   its CommonJS text expects), and workers load the main script from the package's real file, so nothing is
 *   written to disk;
 * - the wasm import `emscripten_num_logical_cores` reports 2 × os.cpus(), so the C side's cap (half of it) is
 *   every core, as the default and as the bound on `setThreadsCount`;
 * - pool workers do not hold the process open: emscripten refs a worker while its pthread runs, and XNNPACK's
 *   threads never end, so a script would never exit;
 * - the 8 workers emscripten pre-spawns beyond those XNNPACK took are terminated (≈ 8 MB of memory each, measured).
 * The glue also sets `globalThis.Worker` to worker_threads' Worker (emscripten's Node set-up); that stays, since
 * the pool creates its workers through it.
 * If the threaded module fails to start, the stock factory (one thread) is used, and the reason is kept for
 * `nodeWasmThreadsUnavailable`.
 */
export async function setUpNodeWasmThreads(wasm: WasmPackage): Promise<void> {
  if (setUp) return;
  setUp = true;
  if (typeof process === 'undefined' || typeof process.versions?.node !== 'string') return;
  if (typeof SharedArrayBuffer === 'undefined' || typeof Atomics === 'undefined') {
    unavailable = 'this Node has no SharedArrayBuffer/Atomics';
    return;
  }
  if (!(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'))) {
    unavailable = 'this Node has no wasm SIMD, and the threaded build is SIMD only';
    return;
  }
  // tf.findBackend would initialise a registered backend; the registry holds only initialised ones.
  if ('wasm' in tf.engine().registry) {
    unavailable = "the 'wasm' backend was initialised (tf.setBackend('wasm')) before initBackend could set up threads";
    return;
  }
  const stock = tf.findBackendFactory('wasm');
  if (stock == null) {
    unavailable = "@tensorflow/tfjs-backend-wasm registered no 'wasm' backend";
    return;
  }
  tf.removeBackend('wasm');
  tf.registerBackend(
    'wasm',
    async () => {
      try {
        return await startThreaded(wasm);
      } catch (err) {
        unavailable = `its threaded build failed to start (${(err as Error).message})`;
        return stock();
      }
    },
    2, // tfjs-backend-wasm's own priority
  );
}

async function startThreaded(wasm: WasmPackage): Promise<tf.KernelBackend> {
  // Specifiers in variables, and bundlers told to leave them: this runs under Node only, and a browser bundle of
  // this package must not try to resolve Node's built-ins or the glue.
  const [glue, worker, fs, os] = await Promise.all([
    import(/* webpackIgnore: true */ /* @vite-ignore */ GLUE) as Promise<{
      default: (config: FactoryConfig) => Promise<ThreadedModule>;
    }>,
    import(/* webpackIgnore: true */ /* @vite-ignore */ WORKER) as Promise<{ wasmWorkerContents: string }>,
    import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS) as Promise<typeof import('node:fs/promises')>,
    import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_OS) as Promise<typeof import('node:os')>,
  ]);
  const before = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  const module = await new Promise<ThreadedModule>((resolve, reject) => {
    let wasmFile = '';
    const ready = glue.default({
      // prefix: the glue's folder (wasm-out/), where the .wasm binary lies beside it.
      locateFile(path, prefix) {
        if (path.endsWith('.worker.js')) return workerUrl(prefix + path, worker.wasmWorkerContents);
        if (path.endsWith('.wasm')) wasmFile = prefix + path;
        return prefix + path;
      },
      instantiateWasm(imports, receive) {
        const env = { ...imports['env'], emscripten_num_logical_cores: () => 2 * os.cpus().length };
        fs.readFile(wasmFile)
          .then((binary) => webAssembly.instantiate(binary, { ...imports, env }))
          .then((result) => receive(result.instance, result.module))
          .catch(reject);
        return {}; // asynchronous instantiation: emscripten waits for receive
      },
    });
    // The glue's Node set-up (synchronous, so nothing else ran meanwhile) adds process listeners that rethrow
    // every uncaught exception and rejection: Node's own behaviour, except that Node then prints the glue's
    // one 55 kB minified line as the place of the error. Removed again, leaving the user's process as it was.
    for (const l of process.listeners('uncaughtException'))
      if (!before.exception.includes(l)) process.removeListener('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection'))
      if (!before.rejection.includes(l)) process.removeListener('unhandledRejection', l);
    ready.then(resolve, reject);
  });
  const pool = module.PThread;
  const getNewWorker = pool.getNewWorker.bind(pool);
  pool.getNewWorker = () => {
    const w = getNewWorker();
    if (w !== undefined) w.ref = () => {}; // emscripten calls worker.ref() when the pthread starts
    return w;
  };
  // The calls tfjs-backend-wasm's init() binds, under the names BackendWasm uses.
  module.tfjs = {
    init: module.cwrap('init', null, []),
    initWithThreadsCount: module.cwrap('init_with_threads_count', null, ['number']),
    getThreadsCount: module.cwrap('get_threads_count', 'number', []),
    registerTensor: module.cwrap('register_tensor', null, ['number', 'number', 'number']),
    disposeData: module.cwrap('dispose_data', null, ['number']),
    dispose: module.cwrap('dispose', null, []),
  };
  const backend = new wasm.BackendWasm(module as unknown as BackendWasmModule); // creates XNNPACK's pthreads
  for (const w of pool.unusedWorkers.splice(0)) void w.terminate();
  return backend;
}

/**
 * The worker script as an ES module in a `data:` URL. Its text comes from a template literal in which the `\n`
 * escapes of its string literals became newlines; they are escaped again, as tfjs-backend-wasm does for its Blob.
 */
function workerUrl(workerPath: string, contents: string): URL {
  const path = JSON.stringify(workerPath);
  const prelude =
    `import { createRequire } from 'node:module'; ` +
    `globalThis.require = createRequire(${path}); globalThis.__filename = ${path};\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(prelude + contents.replace(/\n/g, '\\n'))}`);
}

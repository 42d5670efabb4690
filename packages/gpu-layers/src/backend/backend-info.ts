// What a backend selection reports, shared by the Node (backend.ts) and browser (backend-browser.ts) selections.
import type { WebgpuAdapterInfo } from './webgpu-node.js';

/**
 * Backends this package can select, in automatic order. 'webgpu' is taken automatically only on a real
 * (non-fallback) adapter; a software one (Mesa's lavapipe) only when asked for by name.
 */
export const BACKEND_NAMES = ['tensorflow-gpu', 'webgpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** What was selected, for apps to print. */
export interface BackendInfo {
  /** This package's name of the backend. */
  name: BackendName;
  /** The tfjs backend now active (tf.getBackend()): 'tensorflow', 'webgpu', 'wasm' or 'cpu'. */
  tfBackend: string;
  /** webgpu: the adapter (fallback: a software one such as lavapipe, correct but slow). */
  adapter?: WebgpuAdapterInfo;
  /** wasm: whether the SIMD binary is in use. */
  simd?: boolean;
  /** wasm: threads in use. */
  threads?: number;
  /** wasm: why fewer threads run than were asked for (also printed once as a warning); absent when all run. */
  threadsNote?: string;
  /**
   * wasm under Node: what its matrix products run on, 'openblas 0.3.21 SkylakeX, 2 threads' (cblas_sgemm, see
   * wasm-blas.ts), or why they stay XNNPACK's with the line that enables the native ones
   * (`apt-get install libopenblas0-pthread`).
   */
  blas?: string;
  /** wasm under Node: one line when grassflow chose OpenBLAS's kernels over its own detection (also printed once). */
  blasNote?: string;
  /**
   * wasm under Node: what the fused LayerNorm, GELU and attention-weight kernels run on, 'native avx512f, 2 threads'
   * (@grassflow/native-linux-x64, see wasm-native.ts), or why they stay JS with the package that enables them.
   */
  native?: string;
  /** tfjs-core version of the layers' tf instance. */
  tfjsCore: string;
  /** Backends tried before this one and why each did not load (automatic selection only). */
  skipped: Array<{ name: BackendName; reason: string }>;
}

/** A backend that was asked for and cannot be used; the message says why and what to do. */
export class BackendUnavailableError extends Error {
  constructor(
    readonly backend: string,
    message: string,
  ) {
    super(message);
    this.name = 'BackendUnavailableError';
  }
}

/**
 * Why a thread pool of `got` threads runs where `requested` were asked for; undefined when nothing was asked for
 * or all run. `unavailable`: why the threaded build is not in use (see `nodeWasmThreadsUnavailable`); it is
 * the reason when one thread runs. Otherwise the pool is capped at the machine's cores (at most 8).
 */
export function wasmThreadsNote(requested: number | undefined, got: number, unavailable?: string): string | undefined {
  if (requested === undefined || got >= requested) return undefined;
  const why =
    got === 1 && unavailable !== undefined
      ? `@tensorflow/tfjs-backend-wasm runs single-threaded here: ${unavailable}`
      : 'the thread pool is capped at the cores of this machine (at most 8)';
  return `wasm runs ${got} thread${got === 1 ? '' : 's'} where ${requested} were asked for: ${why}`;
}

/** The three binaries of @tensorflow/tfjs-backend-wasm 4.22 (in its dist/ folder); a page serves all three. */
export const WASM_FILES = [
  'tfjs-backend-wasm.wasm',
  'tfjs-backend-wasm-simd.wasm',
  'tfjs-backend-wasm-threaded-simd.wasm',
] as const;
export type WasmFileName = (typeof WASM_FILES)[number];

/**
 * The first candidate `load` initialises, with the reasons of those it skipped. `forced` (one candidate, asked for by
 * name): its failure is thrown as it is. Errors other than {@link BackendUnavailableError} are always thrown.
 */
export async function firstLoadable<N extends BackendName, T>(
  candidates: readonly N[],
  forced: boolean,
  load: (name: N, skipped: Array<{ name: N; reason: string }>) => Promise<T>,
): Promise<T> {
  const skipped: Array<{ name: N; reason: string }> = [];
  for (const name of candidates) {
    try {
      return await load(name, skipped);
    } catch (err) {
      if (forced || !(err instanceof BackendUnavailableError)) throw err;
      skipped.push({ name, reason: err.message });
    }
  }
  throw new BackendUnavailableError(
    'cpu',
    `no backend could be loaded: ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`,
  );
}

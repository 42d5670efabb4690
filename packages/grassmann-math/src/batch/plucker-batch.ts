// pluckerBatch: Plücker coordinates of N pairs of vectors, the neural layer's computation, on two backends.
import { pluckerBatchGpuJsInto, type GpuJsMode } from './plucker-batch-gpujs.js';
import { pluckerBatchTsInto } from './plucker-batch-ts.js';
import { checkBatch, type BatchArray } from './batch-input.js';
import { GrassmannInputError, describe } from '../errors.js';

const GPU_MODES: readonly GpuJsMode[] = ['gpu', 'webgl', 'webgl2', 'headlessgl', 'webasm', 'cpu'];

/**
 * 'ts': plain TypeScript loop. 'gpujs': gpu.js kernel (GPU where available, else WebAssembly/CPU), after
 * `await loadGpuJs()` (gpu.js is an optional peer dependency).
 */
export type PluckerBatchBackend = 'ts' | 'gpujs';

/**
 * Default backend of pluckerBatch: 'ts', the faster of the two in `pnpm --filter
 * @grassflow/grassmann-math bench` on the reference machine (Node 20, 2 CPU cores, no GPU: gpu.js
 * ran as 'webasm'); see the README for the table.
 */
export const DEFAULT_PLUCKER_BATCH_BACKEND: PluckerBatchBackend = 'ts';

export interface PluckerBatchOptions {
  /** Which implementation runs; default DEFAULT_PLUCKER_BATCH_BACKEND. */
  readonly backend?: PluckerBatchBackend;
  /** gpu.js mode for backend 'gpujs'; default 'gpu' (auto-select). */
  readonly gpuMode?: GpuJsMode;
  /** Write into this buffer (length ≥ N·r(r−1)/2) instead of allocating; the result is a view of it. */
  readonly out?: Float32Array;
  /** Scan the inputs for NaN/±Infinity and throw GrassmannInputError (default true; one read pass). */
  readonly checkFinite?: boolean;
}

/**
 * Plücker coordinates of N pairs, as in the causal Grassmann mixing layer:
 *   out[n, q] = zPrev[n, i] · zCur[n, j] − zPrev[n, j] · zCur[n, i],  q = index of (i, j), i < j,
 * pairs in lexicographic order (0,1), (0,2), …, (r−2,r−1). Layouts are row-major:
 * zPrev, zCur: [N, r] (Float32Array or Float64Array) → out: [N, r(r−1)/2] Float32Array.
 * Backend 'ts' computes each value in float64 and rounds once; 'gpujs' computes in float32
 * (tested to agree within 1e-6 relative to |zPrev_i zCur_j| + |zPrev_j zCur_i|) and needs `await loadGpuJs()` first,
 * else it throws a GpuJsUnavailableError.
 */
export function pluckerBatch(
  zPrev: BatchArray,
  zCur: BatchArray,
  N: number,
  r: number,
  options: PluckerBatchOptions = {},
): Float32Array {
  const { backend = DEFAULT_PLUCKER_BATCH_BACKEND, gpuMode = 'gpu', out, checkFinite = true } = options;
  const P = checkBatch('pluckerBatch', zPrev, zCur, N, r, out, checkFinite);
  const target = out === undefined ? new Float32Array(N * P) : out.subarray(0, N * P);
  if (backend === 'ts') {
    pluckerBatchTsInto(zPrev, zCur, N, r, target);
  } else if (backend === 'gpujs') {
    if (!GPU_MODES.includes(gpuMode)) {
      throw new GrassmannInputError(
        'pluckerBatch',
        'options.gpuMode',
        `one of ${GPU_MODES.join(', ')}`,
        describe(gpuMode),
      );
    }
    pluckerBatchGpuJsInto(zPrev, zCur, N, r, target, gpuMode);
  } else {
    throw new GrassmannInputError('pluckerBatch', 'options.backend', "'ts' or 'gpujs'", describe(backend));
  }
  return target;
}

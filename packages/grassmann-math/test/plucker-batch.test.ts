import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GPU } from 'gpu.js';
import {
  DEFAULT_PLUCKER_BATCH_BACKEND,
  gpuJsBackendMode,
  loadGpuJs,
  plucker,
  pluckerBatch,
  releaseGpuJsKernels,
} from '@grassflow/grassmann-math';

/** Deterministic uniform values in [-1, 1) (mulberry32), so failures reproduce. */
function randomArray(length: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/**
 * |x − y| ≤ tol · (|a_i b_j| + |a_j b_i|) for every coordinate: relative to the size of the two
 * products, the scale of float32 rounding in the difference.
 */
function expectBatchAgree(
  x: Float32Array,
  y: Float32Array,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  N: number,
  r: number,
  tol: number,
): void {
  expect(x.length).toBe(y.length);
  let o = 0;
  for (let n = 0; n < N; n++) {
    for (let i = 0; i < r; i++) {
      for (let j = i + 1; j < r; j++) {
        const s = Math.abs(a[n * r + i]! * b[n * r + j]!) + Math.abs(a[n * r + j]! * b[n * r + i]!);
        if (!(Math.abs(x[o]! - y[o]!) <= tol * s + 1e-30)) {
          throw new Error(`row ${n}, pair (${i},${j}): ${x[o]} vs ${y[o]}, scale ${s}`);
        }
        o++;
      }
    }
  }
}

beforeAll(loadGpuJs); // gpu.js is an optional peer dependency, loaded on demand (gpujs-optional.test.ts)

afterAll(async () => {
  await releaseGpuJsKernels();
});

describe('pluckerBatch: out[n, (i,j)] = zPrev[n,i] zCur[n,j] − zPrev[n,j] zCur[n,i]', () => {
  it('row n of the TS batch = plucker(zPrev[n], zCur[n]) rounded to float32', () => {
    const N = 37;
    const r = 9;
    const a = randomArray(N * r, 1);
    const b = randomArray(N * r, 2);
    const out = pluckerBatch(a, b, N, r, { backend: 'ts' });
    expect(out.length).toBe(N * 36);
    for (let n = 0; n < N; n++) {
      const ref = Float32Array.from(plucker(a.subarray(n * r, n * r + r), b.subarray(n * r, n * r + r)));
      expect(Array.from(out.subarray(n * 36, n * 36 + 36))).toEqual(Array.from(ref));
    }
  });

  it('TS and gpu.js backends agree to 1e-6 relative (r = 2, 3, 8, 32, 64; N spanning several kernel chunks plus a tail)', () => {
    const cases: [number, number][] = [
      [5, 2],
      [1001, 3],
      [20011, 8],
      [1203, 32],
      [397, 64],
    ];
    for (const [N, r] of cases) {
      const a = randomArray(N * r, 10 + r);
      const b = randomArray(N * r, 20 + r);
      const ts = pluckerBatch(a, b, N, r, { backend: 'ts' });
      const gj = pluckerBatch(a, b, N, r, { backend: 'gpujs' });
      expectBatchAgree(ts, gj, a, b, N, r, 1e-6);
    }
    expect(['webasm', 'headlessgl', 'webgl', 'webgl2', 'cpu']).toContain(gpuJsBackendMode());
  });

  it('float64 input and a caller-supplied out buffer give the same values as float32 input on both backends', () => {
    const N = 500;
    const r = 16;
    const a = randomArray(N * r, 3);
    const b = randomArray(N * r, 4);
    const P = (r * (r - 1)) / 2;
    for (const backend of ['ts', 'gpujs'] as const) {
      const ref = pluckerBatch(a, b, N, r, { backend });
      const buf = new Float32Array(N * P + 5).fill(7);
      const res = pluckerBatch(Float64Array.from(a), Float64Array.from(b), N, r, { backend, out: buf });
      expect(res.buffer).toBe(buf.buffer);
      expect(res.length).toBe(N * P);
      expect(Array.from(res)).toEqual(Array.from(ref));
      expect(buf[N * P]).toBe(7); // nothing written past N·P
    }
  });

  it('parallel pair (zCur = 2·zPrev) gives exactly 0 (the pitfall of pairing a vector with itself), N = 0 gives []', () => {
    const a = randomArray(40, 5);
    const b = a.map((x) => 2 * x);
    for (const backend of ['ts', 'gpujs'] as const) {
      expect(pluckerBatch(a, b, 5, 8, { backend }).every((x) => x === 0)).toBe(true);
      expect(pluckerBatch(new Float32Array(0), new Float32Array(0), 0, 8, { backend }).length).toBe(0);
    }
  });

  it('gpu.js kernels are built once per (mode, r, rows) and reused across calls and chunks', async () => {
    await releaseGpuJsKernels();
    const spy = vi.spyOn(GPU.prototype, 'createKernel');
    try {
      const a = randomArray(30000 * 8, 8);
      const b = randomArray(30000 * 8, 9);
      // r = 8: chunks of 9362 rows (2^18 outputs / 28); 30000 = 3 full chunks + a tail padded to 2048.
      for (let t = 0; t < 3; t++) pluckerBatch(a, b, 30000, 8, { backend: 'gpujs' });
      expect(spy).toHaveBeenCalledTimes(2);
      pluckerBatch(a.subarray(0, 800), b.subarray(0, 800), 100, 8, { backend: 'gpujs' }); // 128 rows: new
      pluckerBatch(a.subarray(0, 808), b.subarray(0, 808), 101, 8, { backend: 'gpujs' }); // 128 rows: cached
      expect(spy).toHaveBeenCalledTimes(3);
      pluckerBatch(a.subarray(0, 1600), b.subarray(0, 1600), 100, 16, { backend: 'gpujs' }); // new r
      expect(spy).toHaveBeenCalledTimes(4);
    } finally {
      spy.mockRestore();
    }
  });

  it(`default backend is '${DEFAULT_PLUCKER_BATCH_BACKEND}' (the faster one in bench/)`, () => {
    const a = randomArray(64, 6);
    const b = randomArray(64, 7);
    expect(Array.from(pluckerBatch(a, b, 8, 8))).toEqual(
      Array.from(pluckerBatch(a, b, 8, 8, { backend: DEFAULT_PLUCKER_BATCH_BACKEND })),
    );
  });
});

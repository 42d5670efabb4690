// Throughput of pluckerBatch, TS vs gpu.js, at N = 1e3, 1e5, 1e6 and r = 8, 32, 64.
// Run: pnpm --filter @grassflow/grassmann-math bench (or from the package: node --import tsx
// bench/plucker-batch.bench.ts)
// Env: BENCH_OUTPUT_BUDGET_MB (default 1024): cells whose [N, r(r−1)/2] float32 output is larger are
// streamed through a reused 64 MiB output buffer in chunks instead of one allocation.
import os from 'node:os';
import {
  gpuJsBackendMode,
  loadGpuJs,
  pluckerBatch,
  releaseGpuJsKernels,
  type PluckerBatchBackend,
} from '../src/index.js';

const NS = [1_000, 100_000, 1_000_000];
const RS = [8, 32, 64];
const BACKENDS: PluckerBatchBackend[] = ['ts', 'gpujs'];
const OUTPUT_BUDGET_BYTES = Number(process.env.BENCH_OUTPUT_BUDGET_MB ?? 1024) * 2 ** 20;
const CHUNK_BYTES = 64 * 2 ** 20;
const MIN_REPS = 3;
const MIN_SECONDS = 0.5;
const MAX_SECONDS = 3;

/** Uniform values in [-1, 1) from a fixed seed (mulberry32). */
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

interface Cell {
  N: number;
  r: number;
  backend: PluckerBatchBackend;
  /** Median wall-clock seconds per pass. */
  seconds: number;
  /** Median CPU seconds (user + system, this process) per pass: less sensitive to a shared machine. */
  cpuSeconds: number;
  reps: number;
  chunked: boolean;
}

/** One full pass over N pairs: a single call, or chunk by chunk into one reused buffer. */
function pass(
  a: Float32Array,
  b: Float32Array,
  N: number,
  r: number,
  backend: PluckerBatchBackend,
  out: Float32Array,
  chunkRows: number,
): void {
  for (let s = 0; s < N; s += chunkRows) {
    const rows = Math.min(chunkRows, N - s);
    pluckerBatch(a.subarray(s * r, (s + rows) * r), b.subarray(s * r, (s + rows) * r), rows, r, {
      backend,
      out,
      checkFinite: false,
    });
  }
}

function measure(a: Float32Array, b: Float32Array, N: number, r: number, backend: PluckerBatchBackend): Cell {
  const P = (r * (r - 1)) / 2;
  const chunked = N * P * 4 > OUTPUT_BUDGET_BYTES;
  const chunkRows = chunked ? Math.max(1, Math.floor(CHUNK_BYTES / (P * 4))) : N;
  const out = new Float32Array(Math.min(N, chunkRows) * P).fill(0); // fill: fault the pages in before timing
  pass(a, b, Math.min(N, 10_000), r, backend, out, chunkRows); // warm-up: JIT, gpu.js kernel build
  const times: number[] = [];
  const cpuTimes: number[] = [];
  const start = performance.now();
  for (;;) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    pass(a, b, N, r, backend, out, chunkRows);
    times.push((performance.now() - t0) / 1000);
    const c1 = process.cpuUsage(c0);
    cpuTimes.push((c1.user + c1.system) / 1e6);
    const elapsed = (performance.now() - start) / 1000;
    if ((times.length >= MIN_REPS && elapsed >= MIN_SECONDS) || elapsed >= MAX_SECONDS) break;
  }
  const median = (xs: number[]): number => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return { N, r, backend, seconds: median(times), cpuSeconds: median(cpuTimes), reps: times.length, chunked };
}

const fmt = (x: number, digits = 3): string => x.toPrecision(digits);

async function main(): Promise<void> {
  await loadGpuJs(); // gpu.js: an optional peer dependency, a dev dependency here
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `pluckerBatch throughput — Node ${process.version}, ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`,
  );
  console.log(
    `median of ≥${MIN_REPS} runs (≥${MIN_SECONDS} s, at most ~${MAX_SECONDS} s per cell); inputs float32; checkFinite: false`,
  );
  console.log(
    `load average at start (1/5/15 min): ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')}`,
  );
  console.log(
    `output budget ${OUTPUT_BUDGET_BYTES / 2 ** 20} MiB: larger outputs are streamed in ${CHUNK_BYTES / 2 ** 20} MiB chunks ("chunked")`,
  );
  const cells: Cell[] = [];
  let gpuMode = 'not run';
  for (const r of RS) {
    const maxN = NS[NS.length - 1]!;
    const a = randomArray(maxN * r, 1 + r);
    const b = randomArray(maxN * r, 101 + r);
    for (const N of NS) {
      for (const backend of BACKENDS) {
        const P = (r * (r - 1)) / 2;
        const gib = (N * P * 4) / 2 ** 30;
        const cell = measure(a.subarray(0, N * r), b.subarray(0, N * r), N, r, backend);
        if (backend === 'gpujs') gpuMode = gpuJsBackendMode() ?? 'unknown';
        cells.push(cell);
        console.error(
          `  measured N=${N} r=${r} ${backend}: ${fmt(cell.seconds * 1000)} ms (${cell.reps} runs${cell.chunked ? `, chunked, ${gib.toFixed(2)} GiB output not kept` : ''})`,
        );
      }
    }
  }
  console.log(`gpu.js backend that ran: ${gpuMode}`);
  console.log(
    `load average at end (1/5/15 min): ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')}\n`,
  );
  console.log('| N | r | C(r,2) | backend | wall / pass | CPU / pass | Mpairs/s | output GB/s | in+out GB/s | note |');
  console.log('|---:|---:|---:|---|---:|---:|---:|---:|---:|---|');
  for (const c of cells) {
    const P = (c.r * (c.r - 1)) / 2;
    const pairsPerS = c.N / c.seconds;
    const outGB = (c.N * P * 4) / c.seconds / 1e9;
    const allGB = (c.N * (2 * c.r + P) * 4) / c.seconds / 1e9;
    const name = c.backend === 'gpujs' ? `gpujs (${gpuMode})` : 'ts';
    const dur = (x: number): string => (x >= 1 ? `${fmt(x)} s` : `${fmt(x * 1000)} ms`);
    const note = c.chunked ? `chunked: ${((c.N * P * 4) / 2 ** 30).toFixed(1)} GiB output streamed` : '';
    console.log(
      `| ${c.N.toExponential(0)} | ${c.r} | ${P} | ${name} | ${dur(c.seconds)} | ${dur(c.cpuSeconds)} | ${fmt(pairsPerS / 1e6)} | ${fmt(outGB)} | ${fmt(allGB)} | ${note} |`,
    );
  }
  console.log(
    '\nMpairs/s and GB/s are per wall-clock second. Speed-up of ts over gpujs (wall-time ratio; CPU-time ratio):',
  );
  for (const r of RS) {
    const row = NS.map((N) => {
      const t = cells.find((c) => c.N === N && c.r === r && c.backend === 'ts')!;
      const g = cells.find((c) => c.N === N && c.r === r && c.backend === 'gpujs')!;
      return `N=${N.toExponential(0)}: ${(g.seconds / t.seconds).toFixed(2)}× (CPU ${(g.cpuSeconds / t.cpuSeconds).toFixed(2)}×)`;
    });
    console.log(`  r=${r}: ${row.join(', ')}`);
  }
  await releaseGpuJsKernels();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

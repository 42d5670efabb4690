// `grassflow-lm bench --against pytorch`: the training-step benchmark and its PyTorch reference
// (bench/pytorch/bench_lm.py) back to back on one configuration, and the ratio of their throughputs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blasInfo, countParams, type ModelConfig } from '@grassflow/gpu-layers';
import {
  parseFlags,
  planCommand,
  UsageError,
  type CliCommand,
  type FlagSpecs,
  type ParsedFlags,
} from '@grassflow/training';
import { microBatchOf } from '../train/config.js';
import {
  BENCH_FLAGS,
  benchModelConfig,
  runTrainBench,
  wikiIds,
  type TrainBenchFlags,
  type TrainBenchResult,
} from './train.js';

/** Where the reference script lives, relative to the repository root. */
export const PYTORCH_SCRIPT = 'bench/pytorch/bench_lm.py';

/** The one line printed (exit code 2) when no interpreter can import torch. */
export const PYTORCH_MISSING =
  'PyTorch is needed for --against pytorch: apt-get install python3-torch libopenblas0-pthread (Debian/Ubuntu), ' +
  'or give --python PATH';

const AGAINST_FLAGS = {
  ...BENCH_FLAGS,
  python: {
    type: 'string',
    metavar: 'PATH',
    help: 'Python interpreter with torch (default: GRASSFLOW_PYTHON, else the first of python3, /usr/bin/python3 that imports torch)',
  },
  'pytorch-script': {
    type: 'string',
    metavar: 'FILE',
    help: `the reference script (default: ${PYTORCH_SCRIPT} of this repository)`,
  },
  rounds: {
    type: 'int',
    min: 1,
    default: 1,
    help: 'run both N times, alternating which goes first; compare the best run of each (a shared machine)',
  },
} as const satisfies FlagSpecs;

/** The JSON line of bench_lm.py: the fields of {@link TrainBenchResult} (backend 'pytorch') and its versions. */
export interface PytorchBenchResult extends TrainBenchResult {
  torch_version: string;
  /** The BLAS libraries the process loaded (Debian's reference libblas is ~20× slower than OpenBLAS), or null. */
  blas: string | null;
  /** openblas_get_corename() in that process ('SkylakeX'), or null where it is not OpenBLAS. */
  blas_core?: string | null;
  init_std: number;
  dtype: string;
}

/** The JSON line of `grassflow-lm bench --against pytorch`. */
export interface BenchComparison {
  against: 'pytorch';
  /** The configuration in words, e.g. "grassmann paper-6l (d 256, 6 layers, V 30,522), B 8, L 128". */
  configuration: string;
  /** grassflow tokens/s ÷ PyTorch tokens/s (> 1: grassflow is faster). */
  ratio: number;
  /** PyTorch CPU s/step ÷ grassflow CPU s/step (> 1: grassflow spends less CPU time per step). */
  cpu_ratio: number;
  /** 1-minute load average before the first and after the second benchmark. */
  loadavg_before: number;
  loadavg_after: number;
  python: string;
  /** With --rounds N > 1: the best (highest tokens/s) of each side's N runs; else the one run. */
  grassflow: TrainBenchResult;
  pytorch: PytorchBenchResult;
  /** With --rounds N > 1: every round, in the order run (odd rounds grassflow first, even ones PyTorch first). */
  rounds?: RoundSummary[];
}

/** One round of --rounds: both throughputs, CPU time and the load around it. */
export interface RoundSummary {
  first: 'grassflow' | 'pytorch';
  grassflow_tokens_per_s: number;
  pytorch_tokens_per_s: number;
  ratio: number;
  grassflow_cpu_sec_per_step: number;
  pytorch_cpu_sec_per_step: number;
  loadavg_before: number;
  loadavg_after: number;
}

/** The run with the highest throughput (on a shared machine the least disturbed one). */
export function bestRun<T extends TrainBenchResult>(runs: readonly T[]): T {
  if (runs.length === 0) throw new RangeError('bestRun needs at least one run');
  return runs.reduce((a, b) => (b.train_tokens_per_s > a.train_tokens_per_s ? b : a));
}

/** "grassmann paper-6l (d 256, 6 layers, V 30,522), B 8, L 128": the configuration of a comparison. */
export function describeConfiguration(config: ModelConfig, kind: string, presetName: string, batch: number): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${kind} ${presetName} (d ${config.dModel}, ${config.nLayers} layers, V ${n(config.vocabSize)}), B ${batch}, L ${config.maxLen}`;
}

/** The comparison of two results: ratios of throughput and of CPU time per step. */
export function compareResults(
  configuration: string,
  grassflow: TrainBenchResult,
  pytorch: PytorchBenchResult,
  load: { before: number; after: number },
  python: string,
): BenchComparison {
  return {
    against: 'pytorch',
    configuration,
    ratio: grassflow.train_tokens_per_s / pytorch.train_tokens_per_s,
    cpu_ratio: pytorch.cpu_sec_per_step / grassflow.cpu_sec_per_step,
    loadavg_before: load.before,
    loadavg_after: load.after,
    python,
    grassflow,
    pytorch,
  };
}

/** " (libopenblasp-r0.3.21.so)": the file names of the loaded BLAS libraries, or nothing when unknown. */
function blas(paths: string | null, core?: string | null): string {
  return paths === null
    ? ''
    : ` (${paths
        .split(', ')
        .map((p) => basename(p))
        .join(', ')}${core == null ? '' : ` ${core}`})`;
}

/** A Markdown table of a comparison (the form of docs/benchmarks.md), with a line on backends and threads above. */
export function formatComparison(c: BenchComparison): string {
  const g = c.grassflow;
  const p = c.pytorch;
  const tps = (x: number) => Math.round(x).toLocaleString('en-US');
  const backend = `${g.backend}${g.simd === null ? '' : g.simd ? ' SIMD' : ' no SIMD'}`;
  const row = (label: string, r: Omit<RoundSummary, 'first'>) =>
    `| ${label} | ${tps(r.grassflow_tokens_per_s)} | ${tps(r.pytorch_tokens_per_s)} | ${r.ratio.toFixed(2)} | ` +
    `${r.grassflow_cpu_sec_per_step.toFixed(2)} | ${r.pytorch_cpu_sec_per_step.toFixed(2)} | ` +
    `${r.loadavg_before.toFixed(2)} → ${r.loadavg_after.toFixed(2)} |`;
  const overall = {
    grassflow_tokens_per_s: g.train_tokens_per_s,
    pytorch_tokens_per_s: p.train_tokens_per_s,
    ratio: c.ratio,
    grassflow_cpu_sec_per_step: g.cpu_sec_per_step,
    pytorch_cpu_sec_per_step: p.cpu_sec_per_step,
    loadavg_before: c.loadavg_before,
    loadavg_after: c.loadavg_after,
  };
  const rounds = c.rounds ?? [];
  const lines = [
    `grassflow: ${backend}, ${g.threads} thread${g.threads === 1 ? '' : 's'}` +
      `${g.blas == null ? '' : ` (products: ${g.blas}${g.native == null ? '' : `; between them: ${g.native}`})`}, ` +
      `${g.loss} loss, ${g.head} head; ` +
      `PyTorch ${p.torch_version}${blas(p.blas, p.blas_core)}, ${p.threads} thread${p.threads === 1 ? '' : 's'}, ${p.dtype}; ` +
      `${g.params.toLocaleString('en-US')} params; ${g.steps} timed steps after ${g.warmup_steps} warm-up`,
    '',
    '| configuration | grassflow tokens/s | PyTorch tokens/s | ratio | grassflow CPU s/step | PyTorch CPU s/step | load before → after |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...(rounds.length > 1
      ? [
          ...rounds.map((r, k) => row(`${c.configuration}, round ${k + 1} (${r.first} first)`, r)),
          row(`${c.configuration}, best of ${rounds.length} each`, overall),
        ]
      : [row(c.configuration, overall)]),
  ];
  return lines.join('\n');
}

/**
 * How long `import torch` may take. A first import loads ~200 MB of Python and shared libraries; in one CI run on 2
 * cores busy with other jobs (load 10) the search found no torch where the same search a moment later did.
 */
const TORCH_IMPORT_MS = 300_000;

/** Whether `python` can import torch; the error text when not (ENOENT: no such interpreter; a timeout). */
function importsTorch(python: string): { ok: boolean; why: string } {
  const r = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8', timeout: TORCH_IMPORT_MS });
  if (r.error !== undefined) {
    const timedOut = (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    return {
      ok: false,
      why: `${python}: ${timedOut ? `import torch took over ${TORCH_IMPORT_MS / 1000} s` : r.error.message}`,
    };
  }
  if (r.status !== 0) {
    const last = r.stderr.trim().split('\n').pop() ?? '';
    return { ok: false, why: `${python}: ${last}` };
  }
  return { ok: true, why: '' };
}

/**
 * The first interpreter that imports torch: `given` (--python) alone when set, else GRASSFLOW_PYTHON, python3 and
 * /usr/bin/python3 (Debian's python3-torch installs for the system interpreter, which a pyenv or venv python3 on
 * PATH does not see). Returns the interpreter, or null and why each candidate failed.
 */
export function findTorchPython(given?: string): { python: string | null; tried: string[] } {
  const env = process.env['GRASSFLOW_PYTHON'];
  const candidates =
    given !== undefined ? [given] : [...(env === undefined || env === '' ? [] : [env]), 'python3', '/usr/bin/python3'];
  const tried: string[] = [];
  for (const python of [...new Set(candidates)]) {
    const r = importsTorch(python);
    if (r.ok) return { python, tried };
    tried.push(r.why);
  }
  return { python: null, tried };
}

/** bench/pytorch/bench_lm.py of the repository this file is in (searched upwards from src/ or dist/), or null. */
export function findPytorchScript(from = dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, PYTORCH_SCRIPT);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/** The arguments of bench_lm.py for the configuration grassflow benchmarks: its exact ModelConfig as JSON. */
export function pytorchArgs(f: TrainBenchFlags, config: ModelConfig, threads: number): string[] {
  return [
    '--config',
    JSON.stringify(config),
    '--batch',
    String(f.batch),
    '--steps',
    String(f.steps),
    '--warmup',
    String(f.warmup),
    '--seed',
    String(f.seed),
    '--threads',
    String(threads),
    '--label',
    f.preset,
    '--expect-params',
    String(countParams(config)),
  ];
}

/** The first ids of wiki.train that the steps use and the frequency order (rank → id), as int32 files in a temp folder. */
async function writeIdFiles(config: ModelConfig, f: TrainBenchFlags): Promise<{ ids: string; order: string }> {
  const n = (f.warmup + f.steps) * f.batch * (config.maxLen + 1);
  const { ids, order } = await wikiIds(n, config.vocabSize, f['data-dir']);
  const dir = mkdtempSync(join(tmpdir(), 'grassflow-bench-ids-'));
  const bytes = (a: Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength); // little-endian on x86/ARM
  writeFileSync(join(dir, 'ids.i32'), bytes(ids));
  writeFileSync(join(dir, 'order.i32'), bytes(Int32Array.from(order)));
  return { ids: join(dir, 'ids.i32'), order: join(dir, 'order.i32') };
}

/** Run the reference script; its stderr passes through, its stdout's last line is the JSON result. */
function runPytorch(python: string, script: string, args: readonly string[]): Promise<PytorchBenchResult> {
  // PyTorch's OpenBLAS on the kernels grassflow's runs (chosen by grassflow where OpenBLAS fell back to a generic
  // core), unless the user set OPENBLAS_CORETYPE for both
  const core = blasInfo().core;
  const env =
    core === undefined || (process.env['OPENBLAS_CORETYPE'] ?? '') !== ''
      ? process.env
      : { ...process.env, OPENBLAS_CORETYPE: core };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(python, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => (out += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) {
        reject(new Error(`${python} ${script} exited with code ${String(code)}${last === '' ? '' : `: ${last}`}`));
        return;
      }
      try {
        resolvePromise(JSON.parse(last) as PytorchBenchResult);
      } catch {
        reject(new Error(`${script} printed no JSON line (got ${JSON.stringify(last.slice(0, 200))})`));
      }
    });
  });
}

/** `bench --against pytorch`, resolved once from its flags. */
interface AgainstPlan {
  flags: ParsedFlags<typeof AGAINST_FLAGS>;
  /** The model both sides time. */
  config: ModelConfig;
}

/** The plan of `grassflow-lm bench --against pytorch ARGV`: flags parsed and checked once, before anything slow. */
function planAgainst(argv: readonly string[]): AgainstPlan {
  const f = parseFlags(argv, AGAINST_FLAGS);
  microBatchOf(f.batch, f['micro-batch']);
  const config = benchModelConfig(f);
  if ((config.head === 'adaptive') !== (f.ids === 'wiki')) {
    throw new UsageError(
      '--against pytorch times the tied head on synthetic ids, or the adaptive head (PyTorch: ' +
        'nn.AdaptiveLogSoftmaxWithLoss) on WikiText-2 ids: give both --head adaptive and --ids wiki, or neither',
      config.head === 'adaptive' ? 'ids' : 'head',
    );
  }
  return { flags: f, config };
}

/** Run the plan: grassflow's benchmark, then PyTorch's, then the table and JSON line. */
async function runAgainstPlan({ flags: f, config }: AgainstPlan): Promise<number> {
  const { python, tried } = findTorchPython(f.python);
  if (python === null) {
    process.stderr.write(`${PYTORCH_MISSING} (tried ${tried.join('; ')})\n`);
    return 2;
  }
  const script = f['pytorch-script'] === undefined ? findPytorchScript() : resolve(f['pytorch-script']);
  if (script === null || !existsSync(script)) {
    process.stderr.write(
      `the PyTorch reference script ${script ?? PYTORCH_SCRIPT} is missing: give --pytorch-script\n`,
    );
    return 2;
  }
  const configuration =
    describeConfiguration(config, f.model, f.preset, f.batch) + (config.head === 'adaptive' ? ', adaptive head' : '');
  // the adaptive head on real ids: PyTorch trains on the same first ids of wiki.train, its targets as frequency ranks
  const idFiles = f.ids === 'wiki' ? await writeIdFiles(config, f) : null;
  const extra = idFiles === null ? [] : ['--ids-file', idFiles.ids, '--order-file', idFiles.order];
  const before = loadavg()[0] ?? 0;
  const ours: TrainBenchResult[] = [];
  const theirs: PytorchBenchResult[] = [];
  const rounds: RoundSummary[] = [];
  for (let k = 0; k < f.rounds; k++) {
    const first = k % 2 === 0 ? 'grassflow' : 'pytorch';
    const load0 = loadavg()[0] ?? 0;
    // PyTorch gets grassflow's thread count: the first round's, or the flag's before any grassflow run
    const threads = ours[0]?.threads ?? f.threads ?? Math.min(8, availableParallelism());
    let g: TrainBenchResult;
    let p: PytorchBenchResult;
    if (first === 'grassflow') {
      g = await runTrainBench(f, config);
      p = await runPytorch(python, script, [...pytorchArgs(f, config, g.threads), ...extra]);
    } else {
      p = await runPytorch(python, script, [...pytorchArgs(f, config, threads), ...extra]);
      g = await runTrainBench(f, config);
    }
    ours.push(g);
    theirs.push(p);
    const r = compareResults(configuration, g, p, { before: load0, after: loadavg()[0] ?? 0 }, python);
    rounds.push({
      first,
      grassflow_tokens_per_s: g.train_tokens_per_s,
      pytorch_tokens_per_s: p.train_tokens_per_s,
      ratio: r.ratio,
      grassflow_cpu_sec_per_step: g.cpu_sec_per_step,
      pytorch_cpu_sec_per_step: p.cpu_sec_per_step,
      loadavg_before: r.loadavg_before,
      loadavg_after: r.loadavg_after,
    });
  }
  if (idFiles !== null) rmSync(dirname(idFiles.ids), { recursive: true, force: true });
  const after = loadavg()[0] ?? 0;
  const c: BenchComparison = {
    ...compareResults(configuration, bestRun(ours), bestRun(theirs), { before, after }, python),
    ...(f.rounds > 1 ? { rounds } : {}),
  };
  process.stdout.write(f.json ? `${JSON.stringify(c)}\n` : `${formatComparison(c)}\n\n${JSON.stringify(c)}\n`);
  return 0;
}

/** `grassflow-lm bench --against pytorch`: grassflow's benchmark, then PyTorch's, then the table and JSON line. */
export const againstPytorchCli: CliCommand = planCommand({
  usage:
    'grassflow-lm bench --against pytorch [--preset P] [--d-model N --layers N --vocab N] [--batch B] [--seq-len L] ' +
    '[--steps N] [--rounds N] [--json]',
  description:
    `Run the training-step benchmark and the PyTorch reference (${PYTORCH_SCRIPT}: the same model, N(0, 0.02) ` +
    'init, AdamW, clip 1.0, float32, the same threads) back to back on one configuration; print a table with both ' +
    'throughputs, their ratio (grassflow / PyTorch) and the load average, then a JSON line (only the JSON line with ' +
    '--json). Exit code 2 when no Python can import torch.',
  flags: AGAINST_FLAGS,
  help: 'the training-step benchmark beside PyTorch',
  plan: planAgainst,
  run: runAgainstPlan,
});

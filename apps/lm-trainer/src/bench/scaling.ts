// `grassflow-lm bench --scaling`: forward+backward time per token of Grassmann, DPA and EA blocks against L.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { BACKEND_NAMES } from '@grassflow/gpu-layers';
import {
  markdownTable,
  parseFlags,
  planCommand,
  prepareOutputFolder,
  startBackend,
  UsageError,
} from '@grassflow/training';
import type { CliCommand, FlagSpecs, ParsedFlags } from '@grassflow/training';
import { deviceLabel, type DeviceLabel } from './device-label.js';
import { timePoint, type ScalingStack } from './scaling-point.js';
import {
  crossoverOf,
  lastLRan,
  scalingTable,
  stackJson,
  writeScalingFiles,
  type ScalingPoint,
  type ScalingResult,
} from './scaling-report.js';
import { MODEL_FIELD_FLAGS, MODEL_KINDS, type ModelKind } from '../shared/model-options.js';

export const SCALING_FLAGS = {
  scaling: { type: 'boolean', help: 'this benchmark (time per token against L)' },
  models: {
    type: 'string',
    metavar: 'M,M,…',
    default: MODEL_KINDS.join(','),
    help: `model kinds to time, from ${MODEL_KINDS.join(', ')}`,
  },
  lengths: { type: 'int-list', min: 2, default: [128, 256, 512, 1024, 2048, 4096, 8192], help: 'sequence lengths L' },
  tokens: {
    type: 'int',
    min: 2,
    default: 8192,
    help: 'tokens per batch B·L, the same at every L (a multiple of every L)',
  },
  repeats: {
    type: 'int',
    min: 1,
    default: 3,
    help: 'timed passes per point (the median is reported), after one warm-up pass',
  },
  layers: { type: 'int', min: 1, default: 1, help: 'blocks in the timed stack (the same for every model)' },
  'd-model': { type: 'int', min: 4, default: 256, help: 'width d (d_ff = 4d)' },
  r: { type: 'int', min: 2, default: 32, help: 'Grassmann reduced width r' },
  offsets: {
    type: 'int-list',
    min: 1,
    default: [1],
    help: 'Grassmann offsets, one per layer, cycling (as train --offsets)',
  },
  heads: { ...MODEL_FIELD_FLAGS.heads, default: 4 },
  'keep-after-oom': {
    type: 'boolean',
    help: 'run longer L of a model after it ran out of memory (default: record them as OOM without running)',
  },
  backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend (default: the first that loads)' },
  json: { type: 'boolean', help: 'print the result as one JSON line instead of the table' },
  out: {
    type: 'string',
    metavar: 'DIR',
    default: 'runs/bench-scaling',
    help: 'folder for scaling.md, scaling.json, scaling.png, scaling.svg',
  },
  point: {
    type: 'string',
    metavar: 'MODEL:L',
    help: 'internal: time one point in this process and print it as one JSON line',
  },
} as const satisfies FlagSpecs;

/** What a `--point` process prints: its timing plus the backend it ran on (the parent adds the load average). */
interface PointLine extends Omit<ScalingPoint, 'load_1m'>, DeviceLabel {
  backend: string;
  simd: boolean | null;
  threads: number | null;
}

function parseModels(s: string): ModelKind[] {
  const names = s.split(',').map((x) => x.trim());
  for (const n of names) {
    if (!(MODEL_KINDS as readonly string[]).includes(n))
      throw new UsageError(`--models: unknown model '${n}'; choose from ${MODEL_KINDS.join(', ')}`, 'models');
  }
  if (new Set(names).size !== names.length) throw new UsageError(`--models lists a model twice: ${s}`, 'models');
  return names as ModelKind[];
}

/** A failed point's stderr → 'oom' when it says the process (or the wasm heap) ran out of memory. */
export function isOutOfMemory(stderr: string): boolean {
  return /memory access out of bounds|out of memory|Cannot enlarge memory|Aborted\(OOM\)|WebAssembly\.Memory\.grow|Array buffer allocation failed|Invalid typed array length|allocation failed/i.test(
    stderr,
  );
}

/**
 * Run one point in a child process (same Node flags and CLI script), so an out-of-memory abort ends only that point.
 */
function runPointProcess(
  argv: readonly string[],
  model: ModelKind,
  L: number,
): Promise<{ line?: PointLine; stderr: string; code: number | null; signal: NodeJS.Signals | null }> {
  const script = process.argv[1];
  if (script === undefined)
    throw new Error('bench --scaling: cannot find the CLI script to run each point in (process.argv[1] is empty)');
  const args = [...process.execArgv, script, 'bench', ...argv, '--point', `${model}:${L}`];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
    child.on('error', fail);
    child.on('close', (code, signal) => {
      const json = stdout
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('{'));
      done({
        line: code === 0 && json !== undefined ? (JSON.parse(json) as PointLine) : undefined,
        stderr,
        code,
        signal,
      });
    });
  });
}

function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /error|abort|memory/i.test(l) && l.length < 300);
  return lines[lines.length - 1] ?? stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
}

/** `bench --scaling`, resolved once from its flags: the whole sweep, or (--point, a child process) one point. */
type ScalingPlan =
  | { kind: 'point'; model: ModelKind; L: number; stack: ScalingStack; flags: ScalingFlags }
  | {
      kind: 'sweep';
      models: ModelKind[];
      stack: ScalingStack;
      /** Distinct, ascending; each divides --tokens. */
      lengths: number[];
      out: string;
      command: string;
      flags: ScalingFlags;
      /** The command's arguments, passed on to each point's process. */
      argv: readonly string[];
    };

type ScalingFlags = ParsedFlags<typeof SCALING_FLAGS>;

/** The plan of `grassflow-lm bench --scaling ARGV`: flags parsed and checked once. */
function planScaling(argv: readonly string[]): ScalingPlan {
  const f = parseFlags(argv, SCALING_FLAGS);
  const models = parseModels(f.models);
  const d = f['d-model'];
  if (d % f.heads !== 0) throw new UsageError(`--d-model ${d} must be divisible by --heads ${f.heads}`, 'd-model');
  const stack: ScalingStack = { d, dFF: 4 * d, layers: f.layers, r: f.r, offsets: f.offsets, nHeads: f.heads };
  if (f.point !== undefined) {
    const m = /^([\w-]+):(\d+)$/.exec(f.point);
    if (m === null || !(MODEL_KINDS as readonly string[]).includes(m[1] as string))
      throw new UsageError(
        `--point must be MODEL:L with MODEL one of ${MODEL_KINDS.join(', ')}, got '${f.point}'`,
        'point',
      );
    return { kind: 'point', model: m[1] as ModelKind, L: Number(m[2]), stack, flags: f };
  }
  const lengths = [...new Set(f.lengths)].sort((a, b) => a - b);
  for (const L of lengths) {
    if (f.tokens % L !== 0) {
      throw new UsageError(
        `--tokens ${f.tokens} must be a multiple of every L (B = tokens / L sequences per batch), but L ${L} does ` +
          `not divide it; e.g. --tokens ${Math.max(...lengths)}`,
        'tokens',
      );
    }
  }
  const command = ['grassflow-lm', 'bench', ...argv].join(' ');
  return { kind: 'sweep', models, stack, lengths, out: resolve(f.out), command, flags: f, argv };
}

/** `--point MODEL:L`: time one point here and print it as one JSON line. */
async function runPoint(plan: Extract<ScalingPlan, { kind: 'point' }>): Promise<number> {
  const { flags: f } = plan;
  const info = await startBackend(f.backend);
  const t = await timePoint(plan.model, plan.L, f.tokens, f.repeats, plan.stack);
  const line: PointLine = {
    model: t.model,
    L: t.L,
    B: t.B,
    status: 'ok',
    us_per_token: t.usPerToken,
    median_s: t.medianSeconds,
    seconds: t.seconds,
    peak_rss_mb: t.peakRssMb,
    backend: info.name,
    simd: info.simd ?? null,
    threads: info.threads ?? null,
    ...deviceLabel(info),
  };
  // exit at once: a threaded wasm backend's worker threads would keep this process alive
  await new Promise<void>((done) => process.stdout.write(`${JSON.stringify(line)}\n`, () => done()));
  process.exit(0);
}

/** Run a plan: one point, or every point in its own process; 1 if a point failed for a reason other than memory. */
async function runScalingPlan(plan: ScalingPlan): Promise<number> {
  if (plan.kind === 'point') return runPoint(plan);
  const { models, stack, lengths, out, command, flags: f, argv } = plan;
  prepareOutputFolder(out, { command: 'bench --scaling' }); // before the first point is timed
  const loadStart = loadavg()[0] as number;
  const points: ScalingPoint[] = [];
  const oomAt = new Map<ModelKind, number>();
  let backend: Pick<PointLine, 'backend' | 'simd' | 'threads' | 'adapter' | 'software_rendering'> | undefined;
  const total = lengths.length * models.length;
  const resultNow = (): ScalingResult => ({
    backend: backend?.backend ?? f.backend ?? 'unknown',
    simd: backend?.simd ?? null,
    threads: backend?.threads ?? null,
    adapter: backend?.adapter ?? null,
    software_rendering: backend?.software_rendering ?? false,
    stack: stackJson(stack),
    tokens_per_batch: f.tokens,
    repeats: f.repeats,
    command,
    cpus: cpus().length,
    load_avg: { start: loadStart, end: loadavg()[0] as number },
    points,
    last_l_ran: lastLRan(points, models),
    crossover: models.includes('grassmann')
      ? models.filter((m) => m !== 'grassmann').map((m) => crossoverOf(points, m))
      : [],
    files: {
      table: join(out, 'scaling.md'),
      json: join(out, 'scaling.json'),
      png: join(out, 'scaling.png'),
      svg: join(out, 'scaling.svg'),
    },
  });
  // L-major order: a change in the machine's load during the run hits all models at nearby L alike.
  for (const L of lengths) {
    for (const model of models) {
      const B = f.tokens / L;
      const n = points.length + 1;
      const firstOom = oomAt.get(model);
      if (firstOom !== undefined && !f['keep-after-oom']) {
        points.push({
          model,
          L,
          B,
          status: 'oom-skipped',
          us_per_token: null,
          median_s: null,
          seconds: [],
          peak_rss_mb: null,
          load_1m: loadavg()[0] as number,
          error: `L ${firstOom} ran out of memory`,
        });
        process.stderr.write(`[${n}/${total}] ${model} L ${L}: OOM (not run: L ${firstOom} ran out of memory)\n`);
        continue;
      }
      const r = await runPointProcess(argv, model, L);
      if (r.signal === 'SIGINT' || r.signal === 'SIGTERM') {
        process.stderr.write(
          `bench --scaling interrupted at ${model} L ${L}; ${out} holds the ${points.length} points before it\n`,
        );
        return r.signal === 'SIGTERM' ? 143 : 130;
      }
      if (r.line !== undefined) {
        const { backend: name, simd, threads, adapter, software_rendering, ...p } = r.line;
        backend ??= { backend: name, simd, threads, adapter, software_rendering };
        points.push({ ...p, load_1m: loadavg()[0] as number });
        process.stderr.write(
          `[${n}/${total}] ${model} L ${L} (B ${B}): ${(p.us_per_token as number).toFixed(1)} µs/token (passes ${p.seconds.map((s) => s.toFixed(2)).join(', ')} s), peak RSS ${p.peak_rss_mb} MB\n`,
        );
      } else {
        const oom = isOutOfMemory(r.stderr);
        if (oom) oomAt.set(model, L);
        const error = lastErrorLine(r.stderr) || `exit ${r.code ?? r.signal}`;
        points.push({
          model,
          L,
          B,
          status: oom ? 'oom' : 'error',
          us_per_token: null,
          median_s: null,
          seconds: [],
          peak_rss_mb: null,
          load_1m: loadavg()[0] as number,
          error,
        });
        process.stderr.write(`[${n}/${total}] ${model} L ${L} (B ${B}): ${oom ? 'OOM' : 'failed'}: ${error}\n`);
      }
      // after every measured point: an interrupted run keeps what it measured
      await writeScalingFiles(out, resultNow(), models);
    }
  }
  const result = resultNow();
  await writeScalingFiles(out, result, models);
  if (f.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(`${markdownTable(scalingTable(points, models))}\n\n`);
    for (const c of result.crossover) process.stdout.write(`crossover vs ${c.attention}: ${c.summary}\n`);
    process.stdout.write(`table: ${result.files.table}\nplot: ${result.files.png} (${result.files.svg})\n`);
  }
  return points.some((p) => p.status === 'error') ? 1 : 0;
}

/** `grassflow-lm bench --scaling`: time per token against L. */
export const scalingBenchCli: CliCommand = planCommand({
  usage: 'grassflow-lm bench --scaling [--lengths 128,256,… --tokens N --models M,M --repeats R --json --out DIR]',
  description:
    'Forward+backward time per token of a stack of blocks (default one block, d 256) against the sequence length L ' +
    'at a fixed number of tokens per batch, for Grassmann, DPA and EA; each point in its own process. Writes ' +
    'scaling.md (table), scaling.json and a log-log plot (scaling.png, scaling.svg) to --out, and states where ' +
    'Grassmann becomes faster per token than attention.',
  flags: SCALING_FLAGS,
  help: 'time per token against L',
  plan: planScaling,
  run: runScalingPlan,
});

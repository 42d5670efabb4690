// `grassflow-lm bench` (training throughput): time full optimizer steps exactly as `train` runs them.
import { loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import {
  countParams,
  createModel,
  frequencyOrder,
  initBackend,
  type BackendName,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import {
  createOptimizer,
  namedParameters,
  OPTIMIZER_FLAG_SPECS,
  optimizerConfigFrom,
  parseFlags,
} from '@grassflow/training';
import { planCommand, trainStep, UsageError, type FlagSpecs, type ParsedFlags } from '@grassflow/training';
import type { CliCommand } from '@grassflow/training';
import { LmTrainTask } from '@grassflow/training';
import { deviceLabel, SOFTWARE_RENDERING_NOTE } from './device-label.js';
import { dataDirOrThrow, loadSplitIds, loadTokenizer } from '../shared/corpus.js';
import { microBatchOf, seqLenOf } from '../train/config.js';
import {
  COMMON_TRAIN_FLAGS,
  MODEL_KINDS,
  modelConfigFrom,
  type CommonTrainFlags,
  type ModelKind,
} from '../shared/model-options.js';

/** BERT WordPiece vocabulary size: the benchmark's default V, so the head costs what it costs in `train`. */
const WORDPIECE_V = 30_522;

/** The flags of `grassflow-lm bench` (training step); `--against pytorch` takes them too (against-pytorch.ts). */
export const BENCH_FLAGS = {
  model: { type: 'string', choices: MODEL_KINDS, default: 'grassmann', help: 'model kind' },
  preset: COMMON_TRAIN_FLAGS.preset,
  layers: COMMON_TRAIN_FLAGS.layers,
  'd-model': COMMON_TRAIN_FLAGS['d-model'],
  r: COMMON_TRAIN_FLAGS.r,
  offsets: COMMON_TRAIN_FLAGS.offsets,
  'seq-len': COMMON_TRAIN_FLAGS['seq-len'],
  batch: { type: 'int', min: 1, default: 8, help: 'batch size B (sequences per step)' },
  'micro-batch': {
    type: 'int',
    min: 1,
    help: 'sequences per forward/backward pass; gradients accumulate over B / this (default: B)',
  },
  vocab: { type: 'int', min: 2, default: WORDPIECE_V, help: 'vocabulary size V (default: BERT WordPiece)' },
  dropout: COMMON_TRAIN_FLAGS.dropout,
  norm: COMMON_TRAIN_FLAGS.norm,
  head: COMMON_TRAIN_FLAGS.head,
  cutoffs: COMMON_TRAIN_FLAGS.cutoffs,
  ids: {
    type: 'string',
    choices: ['synthetic', 'wiki'],
    default: 'synthetic',
    help: "token ids: uniform pseudo-random, or WikiText-2's train split in WordPiece (needs the data; Zipfian, as an adaptive head meets in training)",
  },
  'data-dir': COMMON_TRAIN_FLAGS['data-dir'],
  steps: { type: 'int', min: 1, default: 5, help: 'timed optimizer steps' },
  warmup: {
    type: 'int',
    min: 0,
    default: 1,
    help: 'untimed steps first (wasm compiles and grows its heap on the first)',
  },
  seed: COMMON_TRAIN_FLAGS.seed,
  backend: COMMON_TRAIN_FLAGS.backend,
  threads: { type: 'int', min: 1, help: 'wasm: threads of its thread pool (default: every core)' },
  loss: {
    type: 'string',
    choices: ['chunked', 'full'],
    default: 'chunked',
    help: "LM head + loss: in row chunks (train's path) or on full [B·L, V] logits",
  },
  json: { type: 'boolean', help: 'print one JSON line instead of a table' },
  // Accepted so that `bench` can dispatch on them (bench.ts); they select the other benchmarks.
  scaling: { type: 'boolean', help: 'time per token against L instead (see --scaling --help)' },
  generate: { type: 'boolean', help: 'decoding speed instead (see --generate --help)' },
  against: {
    type: 'string',
    choices: ['pytorch'],
    help: 'also run the PyTorch reference (bench/pytorch/bench_lm.py) on this configuration; print the ratio',
  },
  profile: {
    type: 'boolean',
    help: 'where a step spends its time instead (phases, kernels, dispatch; see profile.ts)',
  },
} as const satisfies FlagSpecs;

/** Parsed flags of the training-step benchmark. */
export type TrainBenchFlags = ParsedFlags<typeof BENCH_FLAGS>;

/** The model config the benchmark builds from its flags: train's modelConfigFrom at bench's V. */
export function benchModelConfig(f: TrainBenchFlags): ModelConfig {
  const common = {
    ...f,
    lr: 5e-4,
    warmup: 0,
    'weight-decay': 0.01,
    clip: 1,
    'eval-every': 0,
    'log-every': 1,
    quiet: true,
    tokenizer: 'wordpiece',
  } as unknown as CommonTrainFlags;
  return modelConfigFrom(f.model as ModelKind, common, f.vocab, seqLenOf(f));
}

/** The one JSON line of `grassflow-lm bench --json`. */
export interface TrainBenchResult {
  model: ModelKind;
  preset: string;
  batch: number;
  /** Sequences per forward/backward pass (= batch unless gradients accumulate). */
  micro_batch: number;
  /** Sequence length L (= maxLen; the JSON key keeps its old name). */
  block: number;
  vocab: number;
  params: number;
  steps: number;
  warmup_steps: number;
  /** LM head + loss: 'chunked' (train's path) or 'full' logits. */
  loss: string;
  /** Output head: 'tied' or 'adaptive'. */
  head: string;
  /** Token ids the steps train on: 'synthetic' (uniform) or 'wiki' (WikiText-2 train, WordPiece). */
  ids: string;
  /** Tokens (B·L) per second over the timed steps: steps·B·L / Σ step seconds. */
  train_tokens_per_s: number;
  /** Mean seconds per full step (forward, loss, backward, clip, AdamW) over the timed steps. */
  sec_per_step: number;
  /** Fastest and slowest timed step, seconds. */
  sec_per_step_min: number;
  sec_per_step_max: number;
  /**
   * CPU seconds (user + system, every thread of the process) per timed step. With one thread it barely
   * depends on other processes, so it compares code changes on a loaded machine; with a pool it also counts
   * the pool's waiting.
   */
  cpu_sec_per_step: number;
  /** Loss of the last step (a sanity check: ≈ ln V at initialisation). */
  last_loss: number;
  backend: string;
  threads: number;
  simd: boolean | null;
  /** wasm: what its matrix products ran on ('openblas 0.3.21, 2 threads', or why XNNPACK's); null elsewhere. */
  blas: string | null;
  /** wasm under Node: what the kernels between products ran on ('native avx512f, 2 threads', or why JS); else null. */
  native?: string | null;
  /** webgpu: the adapter, one line (a software fallback such as lavapipe says so); null elsewhere. */
  adapter: string | null;
  /** A software (fallback) WebGPU adapter, e.g. lavapipe: CPU speed, not GPU numbers. */
  software_rendering: boolean;
  /** Peak resident set size of the process, MB (process.resourceUsage().maxRSS). */
  peak_rss_mb: number;
  /** wasm: size of the module's linear memory at the end, MB (it only grows, so this is its peak); null elsewhere. */
  wasm_heap_peak_mb: number | null;
  /** 1-minute load average at the start and end of the timed steps (other processes compete for the cores). */
  loadavg_start: number;
  loadavg_end: number;
}

/** Size of the wasm backend's linear memory in bytes, or null when the backend is not wasm. */
function wasmHeapBytes(): number | null {
  if (tf.getBackend() !== 'wasm') return null;
  const wasm = (tf.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } }).wasm;
  return wasm?.HEAPU8?.buffer.byteLength ?? null;
}

/** Deterministic pseudo-random token ids in [0, V): the step's cost does not depend on which tokens. */
export function syntheticIds(n: number, V: number, seed: number): Int32Array {
  const ids = new Int32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    ids[i] = (s >>> 0) % V;
  }
  return ids;
}

const MB = 1024 * 1024;

/**
 * The first n ids of WikiText-2's train split in WordPiece (repeated if it is shorter): real, Zipfian targets; and
 * the split's frequency order, as train gives an adaptive head.
 */
export async function wikiIds(n: number, V: number, dataDir: string | undefined) {
  if (V !== WORDPIECE_V) throw new UsageError(`--ids wiki needs --vocab ${WORDPIECE_V} (WordPiece), got ${V}`, 'vocab');
  const dir = dataDirOrThrow(dataDir);
  const train = await loadSplitIds('train', await loadTokenizer('wordpiece', dir), dir);
  const ids = Int32Array.from({ length: n }, (_, i) => train[i % train.length] as number);
  return { ids, order: frequencyOrder(train, V) };
}

/** train's optimizer at its default flags (lr 5e-4, weight decay 0.01, clip 1): the same AdamW set-up. */
/** train's default optimizer settings: what every timed step of bench and bench --profile uses. */
export const BENCH_OPTIMIZER = optimizerConfigFrom(parseFlags([], OPTIMIZER_FLAG_SPECS));

/**
 * The model, AdamW and task on synthetic ids that bench and bench --profile time: enough ids for `steps` fresh
 * batches of B × (L + 1) without wrapping, L = maxLen.
 */
export async function benchTask(
  config: ModelConfig,
  f: Pick<TrainBenchFlags, 'batch' | 'seed' | 'loss' | 'ids' | 'data-dir'> & { 'micro-batch'?: number | undefined },
  steps: number,
) {
  const [B, L] = [f.batch, config.maxLen];
  const n = (steps + 2) * B * (L + 1);
  const synthetic = (ids: Int32Array) => ({ ids, order: frequencyOrder(ids, config.vocabSize) });
  const { ids, order } =
    f.ids === 'wiki'
      ? await wikiIds(n, config.vocabSize, f['data-dir'])
      : synthetic(syntheticIds(n, config.vocabSize, f.seed));
  const model = createModel(config, { seed: f.seed });
  model.adaptiveHead?.setVocabOrder(order); // as train ranks its training split
  const optimizer = createOptimizer(namedParameters(model), BENCH_OPTIMIZER);
  const task = new LmTrainTask(model, ids, new Int32Array(0), {
    seqLen: L,
    batch: B,
    seed: f.seed,
    loss: f.loss as 'chunked' | 'full',
    ...(f['micro-batch'] === undefined ? {} : { microBatch: f['micro-batch'] }),
  });
  return { model, optimizer, task, B, L };
}

/** Run the benchmark on `config` (the flags' model unless given) and return its result (no printing). */
export async function runTrainBench(f: TrainBenchFlags, config = benchModelConfig(f)): Promise<TrainBenchResult> {
  const kind = f.model as ModelKind;
  const backend = await initBackend({
    ...(f.backend === undefined ? {} : { backend: f.backend as BackendName }),
    ...(f.threads === undefined ? {} : { threads: f.threads }),
  });
  const total = f.warmup + f.steps;
  if (config.head === 'adaptive' && f.ids === 'synthetic') {
    process.stderr.write(
      'bench: an adaptive head on uniform synthetic ids puts most targets in its costly tail clusters; real text does ' +
        'not (give --ids wiki for the speed training sees)\n',
    );
  }
  const { model, optimizer, task, B, L } = await benchTask(config, f, total);
  const times: number[] = [];
  let lastLoss = NaN;
  let load0 = 0;
  let cpuTimed = 0;
  try {
    for (let s = 0; s < total; s++) {
      if (s === f.warmup) load0 = loadavg()[0] ?? 0;
      const batch = task.nextBatch();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const step = { lr: BENCH_OPTIMIZER.lr, clipNorm: BENCH_OPTIMIZER.clip, randomSeed: f.seed + s, step: s + 1 };
      lastLoss = (await trainStep(batch.microLosses ?? batch.loss, optimizer, step)).loss; // awaits loss + norm: done
      const dt = (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      if (s >= f.warmup) {
        times.push(dt);
        cpuTimed += (c.user + c.system) / 1e6;
      }
    }
  } finally {
    optimizer.dispose();
    model.dispose();
  }
  const sum = times.reduce((a, b) => a + b, 0);
  const heap = wasmHeapBytes();
  return {
    model: kind,
    preset: f.preset,
    batch: B,
    micro_batch: f['micro-batch'] ?? B,
    block: L,
    vocab: config.vocabSize,
    params: countParams(config),
    steps: f.steps,
    warmup_steps: f.warmup,
    loss: f.loss,
    head: config.head ?? 'tied',
    ids: f.ids,
    train_tokens_per_s: (f.steps * B * L) / sum,
    sec_per_step: sum / f.steps,
    sec_per_step_min: Math.min(...times),
    sec_per_step_max: Math.max(...times),
    cpu_sec_per_step: cpuTimed / f.steps,
    last_loss: lastLoss,
    backend: backend.name,
    threads: backend.threads ?? 1,
    simd: backend.simd ?? null,
    blas: backend.blas ?? null,
    native: backend.native ?? null,
    ...deviceLabel(backend),
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    wasm_heap_peak_mb: heap === null ? null : heap / MB,
    loadavg_start: load0,
    loadavg_end: loadavg()[0] ?? 0,
  };
}

/** Human-readable form of a result: two aligned columns. */
export function formatTrainBench(r: TrainBenchResult): string {
  const rows: Array<[string, string]> = [
    ['model', `${r.model} (${r.preset}, ${r.params.toLocaleString('en-US')} params)`],
    [
      'batch × block',
      `${r.batch} × ${r.block} = ${r.batch * r.block} tokens/step${r.micro_batch < r.batch ? ` (micro-batches of ${r.micro_batch})` : ''}, V ${r.vocab}`,
    ],
    [
      'backend',
      r.adapter === null
        ? `${r.backend}${r.simd === null ? '' : r.simd ? ' SIMD' : ' no SIMD'}, ${r.threads} thread${r.threads === 1 ? '' : 's'}` +
          (r.blas === null ? '' : `; products: ${r.blas}`)
        : `${r.backend} on ${r.adapter}`,
    ],
    ['steps', `${r.steps} timed after ${r.warmup_steps} warm-up, ${r.loss} loss, ${r.head} head, ${r.ids} ids`],
    ['train tokens/s', `${r.train_tokens_per_s.toFixed(1)}${r.software_rendering ? ' (software rendering)' : ''}`],
    [
      's/step',
      `${r.sec_per_step.toFixed(3)} (min ${r.sec_per_step_min.toFixed(3)}, max ${r.sec_per_step_max.toFixed(3)})`,
    ],
    ['CPU s/step', `${r.cpu_sec_per_step.toFixed(3)} (all threads)`],
    ['last loss', r.last_loss.toFixed(4)],
    ['peak RSS', `${r.peak_rss_mb.toFixed(0)} MB`],
    ['wasm heap', r.wasm_heap_peak_mb === null ? '–' : `${r.wasm_heap_peak_mb.toFixed(0)} MB`],
    ['load average', `${r.loadavg_start.toFixed(2)} → ${r.loadavg_end.toFixed(2)}`],
  ];
  if (r.software_rendering) rows.unshift(['NOTE', SOFTWARE_RENDERING_NOTE]);
  const w = Math.max(...rows.map(([k]) => k.length)) + 2;
  return rows.map(([k, v]) => k.padEnd(w) + v).join('\n');
}

/** The training-step benchmark, resolved once from its flags. */
export interface TrainBenchPlan {
  flags: TrainBenchFlags;
  /** The model timed: train's modelConfigFrom at bench's V and L. */
  config: ModelConfig;
}

/** The plan of `grassflow-lm bench ARGV` (the training step): flags parsed and checked once, the model config built. */
export function planTrainBench(argv: readonly string[]): TrainBenchPlan {
  const f = parseFlags(argv, BENCH_FLAGS);
  if (f.scaling || f.generate || f.against !== undefined || f.profile)
    throw new UsageError(
      '--scaling, --generate, --against and --profile select the other benchmarks (bench dispatches them)',
      f.scaling ? 'scaling' : f.generate ? 'generate' : f.profile ? 'profile' : 'against',
    );
  microBatchOf(f.batch, f['micro-batch']); // the one check of --micro-batch against --batch (train's)
  return { flags: f, config: benchModelConfig(f) };
}

/** `grassflow-lm bench` without --scaling/--generate: full training steps, tokens/s and peak memory. */
export const trainBenchCli: CliCommand = planCommand({
  usage:
    'grassflow-lm bench --model grassmann|transformer-dpa|transformer-ea --preset P --steps N [--batch B] ' +
    '[--seq-len L] [--backend X] [--json]',
  description:
    'Time full training steps (forward, loss, backward, clip by global norm, AdamW: the code path of `train`) on ' +
    'synthetic token ids; print tokens/s, s/step and peak memory.',
  flags: BENCH_FLAGS,
  help: 'training throughput',
  plan: planTrainBench,
  run: async ({ flags: f, config }) => {
    const r = await runTrainBench(f, config);
    process.stdout.write(f.json ? `${JSON.stringify(r)}\n` : `${formatTrainBench(r)}\n`);
    return 0;
  },
});

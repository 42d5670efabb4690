// `grassflow-lm bench --generate`: decoding speed and state memory against context length, with the full-forward
// baseline.
import { loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import {
  createDecoder,
  createModel,
  describeAdapter,
  initBackend,
  PRESETS,
  sampleToken,
  type BackendName,
  type GrassmannLM,
  type ModelConfig,
  type PresetName,
  type TransformerLM,
} from '@grassflow/gpu-layers';
import {
  markdownTable,
  parseFlags,
  planCommand,
  TrainingRng,
  UsageError,
  type CliCommand,
  type FlagSpecs,
  type ParsedFlags,
} from '@grassflow/training';
import {
  COMMON_TRAIN_FLAGS,
  MODEL_KINDS,
  modelConfigFrom,
  type CommonTrainFlags,
  type ModelKind,
} from '../shared/model-options.js';
import { deviceLabel, SOFTWARE_RENDERING_NOTE } from './device-label.js';

const GENERATE_BENCH_FLAGS = {
  generate: { type: 'boolean', help: 'select this benchmark (required; bench dispatches on it)' },
  models: {
    type: 'string',
    metavar: 'M,M',
    default: 'grassmann,transformer-dpa',
    help: `model kinds, comma-separated (${MODEL_KINDS.join(', ')})`,
  },
  preset: COMMON_TRAIN_FLAGS.preset,
  layers: COMMON_TRAIN_FLAGS.layers,
  'd-model': COMMON_TRAIN_FLAGS['d-model'],
  r: COMMON_TRAIN_FLAGS.r,
  offsets: COMMON_TRAIN_FLAGS.offsets,
  block: {
    type: 'int',
    min: 2,
    help: "override: the positional table's length maxLen (raise it to see the trend at long contexts)",
  },
  norm: COMMON_TRAIN_FLAGS.norm,
  vocab: {
    type: 'int',
    min: 2,
    default: 30_522,
    help: 'vocabulary size V (default: BERT WordPiece, so the head costs what it costs in generate)',
  },
  contexts: { type: 'int-list', min: 3, help: 'context lengths (default: 16, 32, 64, … up to maxLen, and maxLen)' },
  batch: { type: 'int', min: 1, default: 1, help: 'sequences decoded side by side' },
  steps: { type: 'int', min: 1, default: 16, help: 'timed decoding steps, ending at the context length' },
  'baseline-runs': {
    type: 'int',
    min: 0,
    default: 3,
    help: 'timed full forward passes per context for the baseline (0: no baseline)',
  },
  seed: COMMON_TRAIN_FLAGS.seed,
  backend: COMMON_TRAIN_FLAGS.backend,
  threads: {
    type: 'int',
    min: 1,
    help: 'wasm: threads of its thread pool (default: every core; 1 is faster for one-token steps on a busy machine)',
  },
  json: { type: 'boolean', help: 'one JSON line per row instead of a table' },
  scaling: { type: 'boolean', help: 'the other benchmark (not with --generate)' },
} as const satisfies FlagSpecs;

type GenerateBenchFlags = ParsedFlags<typeof GENERATE_BENCH_FLAGS>;

/** One row: one model at one context length. */
export interface GenerateBenchRow {
  model: ModelKind;
  preset: string;
  /** The positional table's length (maxLen). */
  block: number;
  vocab: number;
  batch: number;
  /** Position reached after the timed steps (tokens held by the decoder). */
  context: number;
  /** Timed steps (the ones that end at `context`). */
  steps: number;
  /**
   * B / median step seconds; a step is decoder.step plus reading the logits [B, V] back. The median, not the mean: a
   * shared machine's interruptions hit single steps.
   */
  decode_tokens_per_s: number;
  /** median step milliseconds / B. */
  decode_ms_per_token: number;
  /**
   * Median CPU milliseconds (user + system, all threads) of a step / B: on a shared machine wall time includes
   * waiting for a core, CPU time much less so (with one wasm thread it is the work done).
   */
  decode_cpu_ms_per_token: number;
  /** decoder.stateBytes() at `context`: ring buffer (Grassmann) or key/value cache (Transformer). */
  state_bytes: number;
  state_kind: 'ring-buffer' | 'kv-cache';
  /**
   * Baseline: one full forward pass over the `context` tokens per generated token, the head applied to the
   * last position only (the old sampler also projected every position, so it was slower still): B / median
   * seconds. null with --baseline-runs 0.
   */
  full_forward_tokens_per_s: number | null;
  full_forward_ms_per_token: number | null;
  /** Median CPU milliseconds of one baseline pass / B. */
  full_forward_cpu_ms_per_token: number | null;
  /** decode_tokens_per_s / full_forward_tokens_per_s. */
  speedup: number | null;
  backend: string;
  threads: number;
  /** webgpu: the adapter, one line (a software fallback says so); null elsewhere. */
  adapter: string | null;
  /** A software (fallback) WebGPU adapter, e.g. lavapipe: CPU speed, not GPU numbers. */
  software_rendering: boolean;
  /** 1-minute load average when the row was measured (other processes compete for the cores). */
  loadavg: number;
}

/** Deterministic pseudo-random token ids in [0, V) (xorshift32): decoding cost does not depend on which tokens. */
function syntheticIds(n: number, V: number, seed: number): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % V;
  });
}

/** Default contexts: 16, 32, 64, … ≤ maxLen, then maxLen itself if it is not a power of two. */
export function defaultContexts(maxLen: number): number[] {
  const out: number[] = [];
  for (let c = 16; c <= maxLen; c *= 2) out.push(c);
  if (out[out.length - 1] !== maxLen) out.push(maxLen);
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * Wall and CPU seconds of `fn()`, which must read its result back (`await data()`; dataSync throws on webgpu under
 * Node) so that the work is done when it resolves.
 */
async function timed(fn: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

/** Read a tensor's values back (so that its work is done), then dispose of it. */
/** The sampling of `generate`'s defaults, timed with each decoding step. */
const SAMPLING = { temperature: 1, topK: 40 } as const;

async function readAndDispose(t: tf.Tensor): Promise<void> {
  try {
    await t.data();
  } finally {
    t.dispose();
  }
}

interface Measurement {
  /** Median wall and CPU seconds of one timed step. */
  decode: { wall: number; cpu: number };
  steps: number;
  stateBytes: number;
  /** Median wall and CPU seconds of one baseline pass (null without a baseline). */
  fullForward: { wall: number; cpu: number } | null;
}

/** Medians of wall and CPU seconds, separately. */
function medians(ts: Array<{ wall: number; cpu: number }>): { wall: number; cpu: number } {
  return { wall: median(ts.map((t) => t.wall)), cpu: median(ts.map((t) => t.cpu)) };
}

/**
 * Decode to `context`: prime context − steps − 1 tokens, one untimed step, then `steps` timed steps (each
 * reads its logits back); then the baseline, a full forward pass over the `context` tokens (median of `runs`
 * after one untimed pass).
 */
async function measure(
  model: GrassmannLM | TransformerLM,
  ids: number[][],
  context: number,
  stepsWanted: number,
  runs: number,
): Promise<Measurement> {
  const B = ids.length;
  const steps = Math.min(stepsWanted, context - 2);
  const primeLen = context - steps - 1;
  const column = (t: number) => ids.map((row) => row[t] as number);
  const decoder = createDecoder(model, { batch: B });
  const stepSeconds: Array<{ wall: number; cpu: number }> = [];
  let stateBytes = 0;
  try {
    const prompt = tf.tensor2d(
      ids.map((row) => row.slice(0, primeLen)),
      [B, primeLen],
      'int32',
    );
    await readAndDispose(decoder.prime(prompt));
    prompt.dispose();
    await readAndDispose(decoder.step(column(primeLen)));
    // a timed step is what generate does per token: the step, its logits read back, and a token sampled from each
    // row (top-k 40, T 1); the tokens fed are the ids' own (teacher forcing), so every run decodes the same sequence
    const V = model.config.vocabSize;
    const rng = new TrainingRng(1);
    for (let t = primeLen + 1; t < context; t++) {
      const tokens = column(t);
      stepSeconds.push(
        await timed(async () => {
          const logits = decoder.step(tokens); // [B, V]
          const rows = (await logits.data()) as Float32Array;
          logits.dispose();
          for (let b = 0; b < B; b++) sampleToken(rows.subarray(b * V, (b + 1) * V), SAMPLING, rng);
        }),
      );
    }
    stateBytes = decoder.stateBytes();
  } finally {
    decoder.dispose();
  }
  let fullForward: { wall: number; cpu: number } | null = null;
  if (runs > 0) {
    const ctx = tf.tensor2d(
      ids.map((row) => row.slice(0, context)),
      [B, context],
      'int32',
    );
    const d = model.config.dModel;
    const pass = () =>
      readAndDispose(
        tf.tidy(() => {
          const h = model.hidden(ctx); // [B, context, d]
          return model.logits(tf.slice(h, [0, context - 1, 0], [B, 1, d])); // [B, 1, V]
        }),
      );
    try {
      await pass();
      const passes: Array<{ wall: number; cpu: number }> = [];
      for (let k = 0; k < runs; k++) passes.push(await timed(pass));
      fullForward = medians(passes);
    } finally {
      ctx.dispose();
    }
  }
  return { decode: medians(stepSeconds), steps, stateBytes, fullForward };
}

/** `bench --generate`, resolved once from its flags. */
interface GenerateBenchPlan {
  flags: GenerateBenchFlags;
  /** The models, in --models order, and their configs (random weights). */
  kinds: ModelKind[];
  configs: ModelConfig[];
  /** The positional table of every model: --block, else the preset's. */
  maxLen: number;
  /** Context lengths measured, each at most maxLen. */
  contexts: number[];
}

/** The plan of `grassflow-lm bench --generate ARGV`: flags parsed and checked once, the model configs built. */
function planGenerateBench(argv: readonly string[]): GenerateBenchPlan {
  const f = parseFlags(argv, GENERATE_BENCH_FLAGS);
  if (!f.generate) throw new UsageError('this is the --generate benchmark: pass --generate', 'generate');
  if (f.scaling) throw new UsageError('give --scaling or --generate, not both', 'scaling');
  const kinds = f.models.split(',').map((m) => m.trim());
  for (const k of kinds) {
    if (!(MODEL_KINDS as readonly string[]).includes(k))
      throw new UsageError(`--models: unknown model kind '${k}'; choose from ${MODEL_KINDS.join(', ')}`, 'models');
  }
  const common = { ...f, dropout: undefined, tokenizer: 'wordpiece' } as unknown as CommonTrainFlags;
  // decoding has no training rows: this --block is the positional table itself, the preset's unless given
  const maxLen = f.block ?? PRESETS[f.preset as PresetName].maxLen;
  const configs = kinds.map((k) => modelConfigFrom(k as ModelKind, common, f.vocab, maxLen));
  const contexts = f.contexts ?? defaultContexts(maxLen);
  for (const c of contexts) {
    if (c > maxLen)
      throw new UsageError(
        `--contexts ${c} exceeds the positional table (maxLen = ${maxLen}); raise it with --block ${c}`,
        'contexts',
      );
  }
  return { flags: f, kinds: kinds as ModelKind[], configs, maxLen, contexts };
}

/** Measure every (model, context) row; `onRow` sees each row as soon as it is measured. */
async function runGenerateBench(
  plan: GenerateBenchPlan,
  onRow: (row: GenerateBenchRow) => void,
): Promise<GenerateBenchRow[]> {
  const { flags: f, kinds, configs, maxLen, contexts } = plan;
  const backend = await initBackend({
    ...(f.backend === undefined ? {} : { backend: f.backend as BackendName }),
    ...(f.threads === undefined ? {} : { threads: f.threads }),
  });
  process.stderr.write(
    `backend: ${backend.name}${backend.name === 'wasm' ? ` (${backend.simd === true ? 'SIMD' : 'no SIMD'}, ${backend.threads ?? 1} thread(s))` : ''}` +
      `${backend.adapter === undefined ? '' : ` on ${describeAdapter(backend.adapter)}`}, tfjs-core ${backend.tfjsCore}\n`,
  );
  const device = deviceLabel(backend);
  if (device.software_rendering) process.stderr.write(`bench: ${SOFTWARE_RENDERING_NOTE}\n`);
  const ids = Array.from({ length: f.batch }, (_, b) => syntheticIds(maxLen, f.vocab, f.seed * 7919 + b));
  const rows: GenerateBenchRow[] = [];
  for (const [i, config] of configs.entries()) {
    const kind = kinds[i] as ModelKind;
    const model = createModel(config, { seed: f.seed });
    try {
      await measure(model, ids, Math.min(maxLen, 8), 2, 1); // warm-up: first calls allocate and grow the wasm heap
      for (const context of contexts) {
        const m = await measure(model, ids, context, f.steps, f['baseline-runs']);
        const decodeTps = f.batch / m.decode.wall;
        const fullTps = m.fullForward === null ? null : f.batch / m.fullForward.wall;
        const row: GenerateBenchRow = {
          model: kind,
          preset: f.preset,
          block: maxLen,
          vocab: config.vocabSize,
          batch: f.batch,
          context,
          steps: m.steps,
          decode_tokens_per_s: decodeTps,
          decode_ms_per_token: (1000 * m.decode.wall) / f.batch,
          decode_cpu_ms_per_token: (1000 * m.decode.cpu) / f.batch,
          state_bytes: m.stateBytes,
          state_kind: config.kind === 'grassmann' ? 'ring-buffer' : 'kv-cache',
          full_forward_tokens_per_s: fullTps,
          full_forward_ms_per_token: m.fullForward === null ? null : (1000 * m.fullForward.wall) / f.batch,
          full_forward_cpu_ms_per_token: m.fullForward === null ? null : (1000 * m.fullForward.cpu) / f.batch,
          speedup: fullTps === null ? null : decodeTps / fullTps,
          backend: backend.name,
          threads: backend.threads ?? 1,
          ...device,
          loadavg: loadavg()[0] ?? 0,
        };
        rows.push(row);
        onRow(row);
      }
    } finally {
      model.dispose();
    }
  }
  return rows;
}

/** The rows as a markdown table (numbers rounded for reading; --json keeps them exact). */
export function formatGenerateBench(rows: readonly GenerateBenchRow[]): string {
  const r1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
  return markdownTable({
    columns: [
      'model',
      'context',
      'decode tokens/s',
      'ms/token',
      'CPU ms/token',
      'state bytes',
      'full forward tokens/s',
      'full forward CPU ms/token',
      'speedup',
    ],
    rows: rows.map((r) => [
      r.model,
      r.context,
      r1(r.decode_tokens_per_s),
      r1(r.decode_ms_per_token),
      r1(r.decode_cpu_ms_per_token),
      r.state_bytes,
      r1(r.full_forward_tokens_per_s),
      r1(r.full_forward_cpu_ms_per_token),
      r1(r.speedup),
    ]),
  });
}

/** Run a plan: the rows as they are measured (JSON lines with --json), then the table. */
async function runGenerateBenchPlan(plan: GenerateBenchPlan): Promise<number> {
  const f = plan.flags;
  const rows = await runGenerateBench(plan, (row) => {
    if (f.json) process.stdout.write(`${JSON.stringify(row)}\n`);
    else
      process.stderr.write(
        `${row.model} context ${row.context}: ${row.decode_tokens_per_s.toFixed(1)} tokens/s` +
          `${row.software_rendering ? ' (software rendering)' : ''}, ${row.state_bytes} state bytes\n`,
      );
  });
  if (!f.json) {
    const first = rows[0];
    if (first !== undefined)
      process.stdout.write(
        `${first.preset}, maxLen ${first.block}, V ${first.vocab}, batch ${first.batch}, ` +
          (first.adapter === null
            ? `${first.backend} (${first.threads} thread${first.threads === 1 ? '' : 's'})`
            : `${first.backend} on ${first.adapter}`) +
          `${first.software_rendering ? `\n${SOFTWARE_RENDERING_NOTE}` : ''}\n\n`,
      );
    process.stdout.write(`${formatGenerateBench(rows)}\n`);
  }
  return 0;
}

/**
 * `grassflow-lm bench --generate`: decoding tokens/s and state bytes against context length, with the full-forward
 * baseline.
 */
export const generateBenchCli: CliCommand = planCommand({
  usage:
    'grassflow-lm bench --generate [--models grassmann,transformer-dpa] [--preset P] [--block L] ' +
    '[--contexts 64,128,…] [--steps N] [--json]',
  description:
    'Incremental decoding on random weights and synthetic ids: per model and context length, tokens/s of decoder ' +
    'steps ending at that context, the state the decoder holds there (Grassmann: constant ring buffer; Transformer: ' +
    'key/value cache, linear in the context), and the baseline of one full forward pass over the context per token.',
  flags: GENERATE_BENCH_FLAGS,
  help: 'decoding speed and state memory',
  plan: planGenerateBench,
  run: runGenerateBenchPlan,
});

// Flags of `ladder`, its two size profiles (--quick and the full default), and the validated ladder config.
import { BACKEND_NAMES, offsetSchedule, preset, type ModelConfig } from '@grassflow/gpu-layers';
import { DatasetError, LAGGED_SUM_LAGS, SyntheticTask, type SyntheticFamily } from '@grassflow/datasets';
import { UsageError, type FlagSpecs, type ParsedFlags } from '@grassflow/training';
import type { OptimizerConfig } from '@grassflow/training';
import { MODEL_FIELD_FLAGS, MODEL_KINDS, type ModelKind } from '../shared/model-options.js';

export const LADDER_FAMILIES = ['lagged-sum', 'recall'] as const;

/**
 * Flags of `grassflow-lm ladder`. Sizes have no default here: they come from the profile (see {@link LADDER_PROFILES}).
 */
export const LADDER_FLAGS = {
  levels: { type: 'string', metavar: 'A..B|A,B,…', help: 'task levels: a range 1..4, a list 1,2,5 or one level' },
  family: {
    type: 'string',
    choices: LADDER_FAMILIES,
    default: 'lagged-sum',
    help: "task family: 'lagged-sum' (x_t = 1 + Σ x_{t−a} mod V, lags 1,3,7,17,33,…) or 'recall' (2^level key→value pairs)",
  },
  models: {
    type: 'string',
    metavar: 'M,M,…',
    default: MODEL_KINDS.join(','),
    help: `model kinds, comma separated (${MODEL_KINDS.join(', ')})`,
  },
  layers: MODEL_FIELD_FLAGS.layers,
  'd-model': MODEL_FIELD_FLAGS['d-model'],
  heads: MODEL_FIELD_FLAGS.heads,
  r: MODEL_FIELD_FLAGS.r,
  offsets: MODEL_FIELD_FLAGS.offsets,
  'seq-len': { type: 'int', min: 2, help: "sequence length L (inputs per row; the models' maxLen = L)" },
  vocab: {
    type: 'int',
    min: 2,
    help: 'vocabulary size V of the task (default: lagged-sum 4, so that sums of 3–5 terms are learnable in minutes; recall 64)',
  },
  steps: { type: 'int', min: 1, help: 'optimizer steps per run (same budget for every level, model and seed)' },
  batch: { type: 'int', min: 1, help: 'sequences per step B' },
  lr: { type: 'float', min: 0, exclusiveMin: true, help: 'peak learning rate (warmup, then cosine to lr/10)' },
  warmup: { type: 'int', min: 0, help: 'linear warmup steps (default: 10% of --steps)' },
  'weight-decay': { type: 'float', min: 0, default: 0.01, help: 'AdamW decoupled weight decay (matrices only)' },
  norm: {
    ...MODEL_FIELD_FLAGS.norm,
    default: 'pre',
    help: 'LayerNorm placement (pre-LN trains small models more reliably)',
  },
  seeds: {
    type: 'int',
    min: 1,
    help: 'seeds per level and model: S, S+1, … (init and data order; the same for every model)',
  },
  seed: { type: 'int', min: 0, max: 0x7ffffffe, default: 1, help: 'first seed S' },
  'eval-seqs': {
    type: 'int',
    min: 1,
    help: 'held-out sequences scored per run (the same ones for every model and seed)',
  },
  out: { type: 'string', metavar: 'DIR', help: 'run folder (default runs/ladder-<family>)' },
  quick: { type: 'boolean', help: 'the small profile: 3 levels × 3 models × 2 seeds in well under 15 min on 2 cores' },
  backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend (default: the first that loads)' },
  queue: {
    type: 'string',
    metavar: 'URL',
    help: 'run each rung as a job for `grassflow-lm worker` processes through Redis, redis://host:port/db (default GRASSFLOW_QUEUE; neither: in this process)',
  },
} as const satisfies FlagSpecs;

export type LadderFlags = ParsedFlags<typeof LADDER_FLAGS>;

/** Sizes a profile fixes unless a flag overrides them. */
export interface LadderProfile {
  levels: string;
  layers: number;
  dModel: number;
  heads: number;
  r: number;
  offsets: number[];
  seqLen: number;
  steps: number;
  batch: number;
  lr: number;
  seeds: number;
  evalSeqs: number;
  /** lagged-sum vocabulary (recall always defaults to 64: 32 keys, 32 values). */
  vocab: number;
}

/**
 * quick: sized (and measured, see README) to run 3 levels × 3 models × 2 seeds in under 15 minutes on a loaded 2-core
 * machine with wasm. Two layers with offsets [1, 2]: receptive field 1 + 2 = 3, so lagged-sum level 3 (lag 7) lies
 * beyond the Grassmann stack by construction. full: three layers with offsets [1, 2, 4] (receptive field 7) and
 * levels 1..5, so levels 4 and 5 (lags 17, 33) lie beyond it. V = 4 keeps sums of several terms learnable.
 */
export const LADDER_PROFILES: Record<'quick' | 'full', LadderProfile> = {
  quick: {
    levels: '1..3',
    layers: 2,
    dModel: 32,
    heads: 2,
    r: 8,
    offsets: [1, 2],
    seqLen: 32,
    steps: 400,
    batch: 32,
    lr: 3e-3,
    seeds: 2,
    evalSeqs: 256,
    vocab: 4,
  },
  full: {
    levels: '1..5',
    layers: 3,
    dModel: 64,
    heads: 4,
    r: 16,
    offsets: [1, 2, 4],
    seqLen: 64,
    steps: 1000,
    batch: 32,
    lr: 2e-3,
    seeds: 3,
    evalSeqs: 512,
    vocab: 4,
  },
};

/** Everything a ladder run needs, validated (config.json's `ladder`). */
export interface LadderConfig extends OptimizerConfig {
  profile: 'quick' | 'full';
  family: SyntheticFamily;
  levels: number[];
  models: ModelKind[];
  seeds: number[];
  vocabSize: number;
  /** L: inputs per row (the models' maxLen). */
  seqLen: number;
  steps: number;
  batch: number;
  evalSeqs: number;
  /** Seed of the held-out task: every training seed is < 2^31, so held-out sequences come from another stream. */
  evalSeed: number;
  /** Model config of each kind (vocabSize, maxLen = L, dropout 0). */
  modelConfigs: Record<string, ModelConfig>;
}

/** Held-out sequences: task seed 2^31 + 1, never a training seed (those are ≤ 2^31 − 1). */
export const EVAL_SEED = 0x80000001;

/** Levels from '1..4', '1,3,5' or '2' (ascending, distinct, integers ≥ 1). */
export function parseLevels(spec: string): number[] {
  const s = spec.trim();
  const bad = (why: string): UsageError =>
    new UsageError(`--levels '${spec}': ${why}; write a range 1..4, a list 1,2,5 or one level`, 'levels');
  let levels: number[];
  const range = /^(\d+)\s*\.\.\s*(\d+)$/.exec(s);
  if (range !== null) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    if (b < a) throw bad(`the range ends (${b}) before it starts (${a})`);
    levels = Array.from({ length: b - a + 1 }, (_, i) => a + i);
  } else {
    const parts = s.split(',').map((p) => p.trim());
    if (parts.some((p) => !/^\d+$/.test(p))) throw bad('not a level number');
    levels = parts.map(Number);
  }
  if (levels.some((l) => l < 1)) throw bad('levels start at 1');
  if (new Set(levels).size !== levels.length) throw bad('a level is repeated');
  return [...levels].sort((x, y) => x - y);
}

/** Model kinds from 'grassmann,transformer-ea' (known, distinct, in the order given). */
export function parseModels(spec: string): ModelKind[] {
  const parts = spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new UsageError(`--models needs at least one of ${MODEL_KINDS.join(', ')}`, 'models');
  for (const p of parts) {
    if (!(MODEL_KINDS as readonly string[]).includes(p))
      throw new UsageError(`--models: unknown model kind '${p}'; choose from ${MODEL_KINDS.join(', ')}`, 'models');
  }
  if (new Set(parts).size !== parts.length) throw new UsageError(`--models '${spec}' names a model twice`, 'models');
  return parts as ModelKind[];
}

/** The flag a DatasetError about a task setting is really about. */
function taskFlag(message: string): string {
  if (/vocabSize/.test(message)) return 'vocab';
  if (/seqLen/.test(message)) return 'seq-len';
  return 'levels';
}

/** Validate flags against the profile and the task family; throws UsageError naming the flag. */
export function ladderConfigFrom(f: LadderFlags): LadderConfig {
  const profileName = f.quick ? 'quick' : 'full';
  const p = LADDER_PROFILES[profileName];
  const family = f.family as SyntheticFamily;
  const levels = parseLevels(f.levels ?? p.levels);
  const models = parseModels(f.models);
  const seqLen = f['seq-len'] ?? p.seqLen;
  const vocabSize = f.vocab ?? (family === 'lagged-sum' ? p.vocab : 64);
  if (family === 'lagged-sum') {
    const top = levels[levels.length - 1] as number;
    if (top > LAGGED_SUM_LAGS.length)
      throw new UsageError(
        `--levels: lagged-sum has levels 1..${LAGGED_SUM_LAGS.length} (lags ${LAGGED_SUM_LAGS.join(', ')}), got ${top}`,
        'levels',
      );
  }
  for (const level of levels) {
    try {
      new SyntheticTask({ family, level, seqLen, vocabSize, seed: 0 });
    } catch (err) {
      if (err instanceof DatasetError)
        throw new UsageError(
          // The task names its option seqLen; the user wrote a flag.
          `--levels ${level} with --seq-len ${seqLen}, --vocab ${vocabSize}: ${err.message.replace(/\bseqLen\b/g, '--seq-len')}`,
          taskFlag(err.message),
        );
      throw err;
    }
  }
  const steps = f.steps ?? p.steps;
  const warmup = f.warmup ?? Math.max(1, Math.round(steps / 10));
  if (warmup > steps) throw new UsageError(`--warmup ${warmup} is more than --steps ${steps}`, 'warmup');
  const layers = f.layers ?? p.layers;
  const dModel = f['d-model'] ?? p.dModel;
  const heads = f.heads ?? p.heads;
  if (dModel % heads !== 0)
    throw new UsageError(
      `--d-model ${dModel} must be divisible by --heads ${heads}`,
      dModel === p.dModel ? 'heads' : 'd-model',
    );
  const r = f.r ?? p.r;
  const base: Partial<ModelConfig> = {
    vocabSize,
    dModel,
    nLayers: layers,
    dFF: 4 * dModel,
    maxLen: seqLen,
    r,
    offsets: offsetSchedule(f.offsets ?? p.offsets, layers, 'per-layer'),
    nHeads: heads,
    norm: f.norm as 'post' | 'pre',
    dropout: 0, // exact algorithmic rules: dropout only slows learning them
  };
  const modelConfigs: Record<string, ModelConfig> = {};
  for (const kind of models) {
    modelConfigs[kind] = preset('tiny', {
      ...base,
      kind: kind === 'grassmann' ? 'grassmann' : 'transformer',
      attention: kind === 'transformer-ea' ? 'ea' : 'dpa',
    });
  }
  const nSeeds = f.seeds ?? p.seeds;
  if (f.seed + nSeeds - 1 > 0x7fffffff)
    throw new UsageError(
      `--seed ${f.seed} + --seeds ${nSeeds} passes 2^31 − 1 (held-out data uses the seeds above)`,
      'seed',
    );
  const lr = f.lr ?? p.lr;
  return {
    profile: profileName,
    family,
    levels,
    models,
    seeds: Array.from({ length: nSeeds }, (_, i) => f.seed + i),
    vocabSize,
    seqLen,
    steps,
    batch: f.batch ?? p.batch,
    lr,
    minLr: lr / 10,
    warmup,
    weightDecay: f['weight-decay'],
    clip: 1.0,
    beta1: 0.9,
    beta2: 0.98,
    evalSeqs: f['eval-seqs'] ?? p.evalSeqs,
    evalSeed: EVAL_SEED,
    modelConfigs,
  };
}

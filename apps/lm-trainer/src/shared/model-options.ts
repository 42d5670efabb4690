// Flags of `train`/`compare`/`bench` and how they become a ModelConfig (once, in a plan); the training config they
// also give is train/config.ts's.
import {
  BACKEND_NAMES,
  MODEL_FIELDS,
  MODEL_OPTIONS,
  offsetSchedule,
  preset,
  PRESET_NAMES,
  PRESETS,
  type FullModelConfig,
  type ModelConfig,
  type ModelFieldName,
  type ModelOptionName,
  type PresetName,
} from '@grassflow/gpu-layers';
import { OPTIMIZER_FLAG_SPECS, UsageError, type FlagSpecs, type ParsedFlags } from '@grassflow/training';

export const MODEL_KINDS = ['grassmann', 'transformer-dpa', 'transformer-ea'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];
export { PRESET_NAMES }; // derived from gpu-layers' PRESETS table

/** --seq-len: sequence length L of the training rows (the model's positional table, maxLen, is made to hold it). */
export const SEQ_LEN_FLAG = {
  type: 'int',
  min: 2,
  // one step's memory and time grow with B·L; past 16,384 a single row outgrows wasm's 4 GB heap at paper sizes
  max: 16384,
  help: 'override: sequence length L, tokens per training row, at most 16,384 (sets maxLen, the positional table)',
} as const satisfies FlagSpecs[string];

type Fields = typeof MODEL_FIELDS;
type Options = typeof MODEL_OPTIONS;

/** The MODEL_FIELDS fields that have a flag of their own (dFF follows --d-model, maxLen --seq-len, …). */
type FlaggedField = { [N in ModelFieldName]: Fields[N] extends { flag: { name: string } } ? N : never }[ModelFieldName];

/** The flag of a MODEL_FIELDS field: an integer, a number, one of its values, or a list of integers >= 1. */
type FieldFlagOf<F> = F extends { type: 'int' }
  ? { type: 'int'; min: number; help: string }
  : F extends { type: 'number' }
    ? { type: 'float'; min: number; max?: number; help: string }
    : F extends { type: 'choice'; values: infer V extends readonly string[] }
      ? { type: 'string'; choices: V; help: string }
      : { type: 'int-list'; min: number; help: string };

/** One flag per MODEL_FIELDS field that has one (--d-model, --layers, --r, --offsets, --norm, --dropout). */
type FieldFlags = { [N in FlaggedField as Fields[N]['flag']['name']]: FieldFlagOf<Fields[N]> };

/**
 * The flags of the base model fields, from gpu-layers' MODEL_FIELDS (type, bounds, what it does): the table's own
 * bounds unless its flag names tighter ones. No default: an absent flag leaves the preset's value.
 */
export const MODEL_FIELD_FLAGS = Object.fromEntries(
  (Object.keys(MODEL_FIELDS) as ModelFieldName[]).flatMap((name) => {
    const field = MODEL_FIELDS[name];
    if (!('flag' in field)) return [];
    const flag: { name: string; help: string; min?: number; max?: number } = field.flag;
    const { help } = flag;
    const spec =
      field.type === 'int'
        ? { type: 'int', min: flag.min ?? field.min, help }
        : field.type === 'number'
          ? { type: 'float', min: flag.min ?? field.min, ...boundAbove(flag.max ?? field.max), help }
          : field.type === 'choice'
            ? { type: 'string', choices: field.values, help }
            : { type: 'int-list', min: 1, help };
    return [[flag.name, spec]];
  }),
) as FieldFlags;

function boundAbove(max: number | undefined): { max?: number } {
  return max === undefined ? {} : { max };
}

/** The flags of {@link MODEL_FIELD_FLAGS} as overrides of a preset, as train, compare and bench show them. */
const FIELD_OVERRIDE_FLAGS = Object.fromEntries(
  Object.entries(MODEL_FIELD_FLAGS).map(([name, spec]) => [name, { ...spec, help: `override: ${spec.help}` }]),
) as FieldFlags;

/** The flag of a MODEL_OPTIONS field: its values as choices, a switch, or a list of integers >= 1. */
type FlagOf<O> = O extends { type: 'choice'; values: infer V extends readonly string[] }
  ? { type: 'string'; choices: V; help: string }
  : O extends { type: 'boolean' }
    ? { type: 'boolean'; help: string }
    : { type: 'int-list'; min: number; help: string };

/** One flag per optional architecture field, named by the table (--gate, --mixer-norm, …), in table order. */
type ArchitectureFlags = { [N in ModelOptionName as Options[N]['flag']]: FlagOf<Options[N]> };

/** A default as --help shows it. */
const shownDefault = (d: string | boolean | readonly number[]) =>
  typeof d === 'boolean' ? (d ? 'on' : 'off') : typeof d === 'string' ? d : d.join(',');

/** A field's --help line from the table: what it does, then the model's default (by kind where it differs) and why. */
function optionHelp(o: Options[ModelOptionName]): string {
  const byKind = 'defaultFor' in o ? o.defaultFor : undefined;
  const shown =
    byKind === undefined
      ? shownDefault(o.default)
      : o.kinds.map((k) => `${k} ${shownDefault(byKind[k as keyof typeof byKind] ?? o.default)}`).join(', ');
  const ablation = 'ablation' in o ? ` (an ablation: ${o.ablation})` : '';
  return `${o.doc}; model default ${shown}: ${o.why}${ablation}`;
}

/**
 * --head, --cutoffs, --gate, --dropout-at, --mixer-norm, --ea-eps: derived from gpu-layers' MODEL_OPTIONS, where
 * each field is declared once. No default in the spec: an absent flag leaves the field out of the config.
 */
const ARCHITECTURE_FLAGS = Object.fromEntries(
  Object.values(MODEL_OPTIONS).map((o) => {
    const help = optionHelp(o);
    const spec =
      o.type === 'choice'
        ? { type: 'string', choices: o.values, help }
        : o.type === 'boolean'
          ? { type: 'boolean', help }
          : { type: 'int-list', min: 1, help };
    return [o.flag, spec];
  }),
) as ArchitectureFlags;

/** Flags shared by train and compare (everything but --model, --out, --resume). */
export const COMMON_TRAIN_FLAGS = {
  preset: { type: 'string', choices: PRESET_NAMES, default: 'paper-6l', help: 'model size preset' },
  ...FIELD_OVERRIDE_FLAGS,
  'seq-len': SEQ_LEN_FLAG,
  batch: { type: 'int', min: 1, default: 32, help: 'batch size B (sequences per step)' },
  'micro-batch': {
    type: 'int',
    min: 1,
    help: 'sequences per forward/backward pass, a divisor of B: gradients accumulate over B/M passes (same update, the memory of M)',
  },
  ...OPTIMIZER_FLAG_SPECS,
  ...ARCHITECTURE_FLAGS,
  epochs: { type: 'float', min: 0, exclusiveMin: true, help: 'training length in epochs over wiki.train (default 1)' },
  steps: { type: 'int', min: 1, help: 'training length in optimizer steps' },
  tokens: { type: 'int', min: 1, help: 'training length in training tokens (rounded up to whole steps)' },
  'eval-every': { type: 'int', min: 0, default: 200, help: 'validate every N steps (0: only at the end)' },
  'eval-tokens': {
    type: 'int',
    min: 2,
    help: 'validation (periodic and final) on the first N tokens of wiki.valid',
  },
  'checkpoint-every': { type: 'int', min: 0, help: 'write checkpoints/latest every N steps (default: at each eval)' },
  'early-stop': {
    type: 'boolean',
    help:
      'stop on validation: at the first evaluation, from the 5th on, where the best val PPL so far is less than 0.5% ' +
      'below the best at steps ≤ 0.8·s (s the step of that evaluation: under 0.5% better over the last 20% of the ' +
      'run so far), else at the budget; the schedule stays that of the budget, checkpoints/best is the best on valid',
  },
  'log-every': {
    type: 'int',
    min: 1,
    default: 10,
    help: 'a train record in metrics.jsonl and metrics.csv every N steps',
  },
  'stop-at-step': {
    type: 'int',
    min: 1,
    help: 'stop after step N with a checkpoint, as if interrupted (continue with --resume)',
  },
  seed: { type: 'int', min: 0, max: 0xffffffff, default: 1, help: 'seed of initialisation, data order and dropout' },
  backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend (default: the first that loads)' },
  tokenizer: {
    type: 'string',
    choices: ['wordpiece', 'word'],
    default: 'wordpiece',
    help: 'BERT WordPiece or WikiText word level',
  },
  'data-dir': {
    type: 'string',
    metavar: 'DIR',
    help: 'data folder (default GRASSFLOW_DATA_DIR, else ~/.cache/grassflow)',
  },
  quiet: {
    type: 'boolean',
    help:
      'no progress bar: a training line every 10% of the run (and at least every 30 s) and one per eval ' +
      '(also when stderr is not a TTY)',
  },
} as const satisfies FlagSpecs;

export type CommonTrainFlags = ParsedFlags<typeof COMMON_TRAIN_FLAGS>;

/**
 * Model config for a model kind from a preset and the override flags; `vocabSize` from the tokenizer, and the
 * positional table (maxLen) sized to the training rows, `seqLen` (the caller resolves it once, see seqLenOf).
 */
export function modelConfigFrom(kind: ModelKind, f: CommonTrainFlags, vocabSize: number, seqLen: number): ModelConfig {
  const name = f.preset as PresetName;
  const base = PRESETS[name]; // a size: the fields of both kinds
  const o: Partial<FullModelConfig> = {
    kind: kind === 'grassmann' ? 'grassmann' : 'transformer',
    ...(kind === 'grassmann' ? {} : { attention: kind === 'transformer-ea' ? 'ea' : 'dpa' }),
    vocabSize,
  };
  const nLayers = f.layers ?? base.nLayers;
  o.nLayers = nLayers;
  const mode = name === 'paper-6l-multi' ? 'all' : 'per-layer';
  if (kind !== 'grassmann') {
    // a Transformer config has no offsets or r (they are not stored)
  } else if (f.offsets !== undefined) o.offsets = offsetSchedule(f.offsets, nLayers, mode);
  else o.offsets = Array.from({ length: nLayers }, (_, i) => [...(base.offsets[i % base.offsets.length] as number[])]);
  const nHeads = f.heads ?? base.nHeads;
  if (kind !== 'grassmann' && f.heads !== undefined) o.nHeads = f.heads;
  if (f['d-model'] !== undefined) {
    o.dModel = f['d-model'];
    o.dFF = 4 * f['d-model'];
  }
  const dModel = f['d-model'] ?? base.dModel;
  if (kind !== 'grassmann' && dModel % nHeads !== 0) {
    const heads = f.heads === undefined ? `the ${nHeads} attention heads of preset ${name}` : `--heads ${nHeads}`;
    throw new UsageError(
      `--d-model ${dModel} must be divisible by ${heads}`,
      f.heads === undefined ? 'd-model' : 'heads',
    );
  }
  if (f.r !== undefined && kind === 'grassmann') o.r = f.r;
  o.maxLen = seqLen;
  if (f.dropout !== undefined) o.dropout = f.dropout;
  if (f.norm !== undefined) o.norm = f.norm as 'post' | 'pre';
  architectureOptions(kind, f, o);
  return preset(name, o);
}

/** The config kind and attention of a --model kind. */
const KIND_OF = {
  grassmann: { kind: 'grassmann', attention: undefined },
  'transformer-dpa': { kind: 'transformer', attention: 'dpa' },
  'transformer-ea': { kind: 'transformer', attention: 'ea' },
} as const satisfies Record<ModelKind, { kind: FullModelConfig['kind']; attention: 'dpa' | 'ea' | undefined }>;

/**
 * The architecture flags into `o`, in MODEL_OPTIONS' order (head before cutoffs); a flag of another model kind
 * (or, for --ea-eps, another attention) is a usage error naming the kinds it applies to. The values themselves are
 * checked once, by validateModelConfig (the flag parser already holds choices to the table's values).
 */
function architectureOptions(kind: ModelKind, f: CommonTrainFlags, o: Partial<FullModelConfig>): void {
  const flags = f as Record<string, unknown>;
  for (const name of Object.keys(MODEL_OPTIONS) as ModelOptionName[]) {
    const opt = MODEL_OPTIONS[name];
    const value = flags[opt.flag];
    if (value === undefined || value === false) continue; // a switch left off is the default
    const kinds = MODEL_KINDS.filter((k) => {
      const { kind: configKind, attention } = KIND_OF[k];
      return (
        (opt.kinds as readonly string[]).includes(configKind) &&
        (!('onlyWith' in opt) || attention === opt.onlyWith.attention)
      );
    });
    if (!kinds.includes(kind)) {
      throw new UsageError(`--${opt.flag} applies to --model ${kinds.join(' or ')}, not to --model ${kind}`, opt.flag);
    }
    if ('needs' in opt && o[opt.needs.field] !== opt.needs.value) {
      throw new UsageError(`--${opt.flag} needs --${MODEL_OPTIONS[opt.needs.field].flag} ${opt.needs.value}`, opt.flag);
    }
    (o as Record<string, unknown>)[name] = value;
  }
}

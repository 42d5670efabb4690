// The model config of GrassmannLM and TransformerLM: its types, defaults and validation (all derived from the field
// table of model-options.ts, where each field is declared once), presets and the parameter count.
import { binomial } from '@grassflow/grassmann-math';
import {
  ADAPTIVE_HEAD_DEFAULTS,
  FIELD_NAMES,
  fieldDefault,
  fieldProblem,
  fieldSpec,
  MODEL_FIELDS,
  type ModelFields,
  isOptionDefault,
  MODEL_OPTIONS,
  OPTION_NAMES,
  optionProblem,
  optionDefault,
  optionSpec,
  type ModelOptions,
} from './model-options.js';

export { ADAPTIVE_HEAD_DEFAULTS };

type Kind = 'grassmann' | 'transformer';

/** The fields of the other kind, optional: a config may carry them (old checkpoints store every field), unused. */
type OtherKindFields<K extends Kind> = Partial<Omit<ModelFields<Exclude<Kind, K>>, keyof ModelFields<K>>>;

/**
 * A Grassmann language model (causal Grassmann mixing, paper-notes §1–2): MODEL_FIELDS' fields of this kind
 * (r, offsets and the common ones), and its optional fields (head, cutoffs, gate, dropoutAt, mixerNorm: absent at
 * their defaults), MODEL_OPTIONS'.
 */
export interface GrassmannConfig
  extends ModelFields<'grassmann'>, ModelOptions<'grassmann'>, OtherKindFields<'grassmann'> {
  kind: 'grassmann';
}

/** A Transformer language model (the attention baseline): MODEL_FIELDS' (attention, nHeads, …), MODEL_OPTIONS'. */
export interface TransformerConfig
  extends ModelFields<'transformer'>, ModelOptions<'transformer'>, OtherKindFields<'transformer'> {
  kind: 'transformer';
}

/**
 * Architecture of a language model, as validateModelConfig returns it and checkpoints store it: the fields of
 * its kind (a Grassmann config needs no `attention`/`nHeads`, a Transformer config no `r`/`offsets`, and they are
 * not added; where a config gives them, as old checkpoints do, they are checked, kept and ignored).
 */
export type ModelConfig = GrassmannConfig | TransformerConfig;

/** Every field of either kind: the shape of {@link MODEL_DEFAULTS} and of the size presets. */
export interface FullModelConfig extends ModelFields<Kind>, ModelOptions<Kind> {
  kind: Kind;
}

/**
 * What createModel, validateModelConfig and countParams accept: `kind` plus whatever differs from
 * {@link MODEL_DEFAULTS}. Fields of the other kind are accepted and ignored (old checkpoints store every field).
 */
export type ModelConfigInput = Pick<FullModelConfig, 'kind'> & Partial<Omit<FullModelConfig, 'kind'>>;

/** The defaults of MODEL_FIELDS (the paper's 6-layer model; the reason for each is in the table). */
export const MODEL_DEFAULTS: Omit<FullModelConfig, 'kind'> = Object.fromEntries(
  FIELD_NAMES.map((n) => [n, fieldDefault(n)]),
) as ModelFields<Kind>;

/** A field of MODEL_OPTIONS with a default of its own (cutoffs' belongs to the adaptive head). */
type DefaultedOption = {
  [N in keyof typeof MODEL_OPTIONS]: (typeof MODEL_OPTIONS)[N] extends { needs: object } ? never : N;
}[keyof typeof MODEL_OPTIONS];

/** The defaults of kind K's optional fields (cutoffs' excepted: they come with an adaptive head). */
type KindDefaults<K extends ModelConfig['kind']> = {
  readonly [N in DefaultedOption as N extends keyof ModelOptions<K> ? N : never]: DefaultIn<
    (typeof MODEL_OPTIONS)[N],
    K
  >;
};

/** The default of option O in a config of kind K: its `defaultFor` entry for K, else its `default`. */
type DefaultIn<O, K extends string> = O extends { defaultFor: { readonly [k in K]: infer D } }
  ? D
  : O extends { default: infer D }
    ? D
    : never;

function defaultsOf<K extends ModelConfig['kind']>(kind: K): KindDefaults<K> {
  const names = OPTION_NAMES.filter((n) => optionSpec(n).type !== 'int-list' && optionSpec(n).kinds.includes(kind));
  return Object.fromEntries(names.map((n) => [n, optionDefault(n, kind)])) as KindDefaults<K>;
}

/**
 * Defaults of the optional architecture fields of each kind, from MODEL_OPTIONS (where the reason for each is);
 * by kind because dropoutAt's differs: a Grassmann block's 'stream', a Transformer block's 'branch'.
 */
export const OPTIONAL_DEFAULTS = { grassmann: defaultsOf('grassmann'), transformer: defaultsOf('transformer') };

/** MODEL_FIELDS' fields of a kind, in stored order. */
const fieldsOf = (kind: Kind) => FIELD_NAMES.filter((n) => (fieldSpec(n).kinds as readonly string[]).includes(kind));
const KNOWN_FIELDS: readonly string[] = ['kind', ...FIELD_NAMES, ...OPTION_NAMES];
/** The order of the fields in a validated config (and so in config.json): the tables' order, `kind` first. */
const FIELD_ORDER = KNOWN_FIELDS;

/** A config that failed validation; `field` names the offending field. */
export class ModelConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`ModelConfig.${field}: ${message}`);
    this.name = 'ModelConfigError';
  }
}

function oneOf<T extends string>(o: Record<string, unknown>, field: string, values: readonly T[]): T {
  const v = o[field];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new ModelConfigError(
      field,
      `must be one of ${values.map((s) => `'${s}'`).join(', ')}, got ${JSON.stringify(v)}`,
    );
  }
  return v as T;
}

/** The offsets of a Grassmann config: one non-empty array of integers ≥ 1 per layer. */
function checkOffsets(offsets: unknown, nLayers: number): number[][] {
  if (!Array.isArray(offsets) || offsets.length !== nLayers) {
    throw new ModelConfigError(
      'offsets',
      `must be an array of ${nLayers} arrays (one per layer), got ${JSON.stringify(offsets)}`,
    );
  }
  return offsets.map((layer: unknown, i) => {
    if (!Array.isArray(layer) || layer.length === 0) {
      throw new ModelConfigError(
        'offsets',
        `layer ${i} must be a non-empty array of positive integers, got ${JSON.stringify(layer)}`,
      );
    }
    return layer.map((delta: unknown) => {
      if (typeof delta !== 'number' || !Number.isInteger(delta) || delta < 1) {
        throw new ModelConfigError(
          'offsets',
          `layer ${i} has offset ${JSON.stringify(delta)}; offsets are integers >= 1`,
        );
      }
      return delta;
    });
  });
}

/** The cluster boundaries of an adaptive head: integers 0 < c_1 < … < c_k < V, at least one. */
function checkCutoffs(cutoffs: unknown, vocabSize: number): number[] {
  const ok =
    Array.isArray(cutoffs) &&
    cutoffs.length > 0 &&
    cutoffs.every(
      (c: unknown, i) =>
        typeof c === 'number' && Number.isInteger(c) && c > (i === 0 ? 0 : (cutoffs[i - 1] as number)) && c < vocabSize,
    );
  if (!ok) {
    throw new ModelConfigError(
      'cutoffs',
      `must be increasing integers 0 < c_1 < … < c_k < vocabSize = ${vocabSize}, got ${JSON.stringify(cutoffs)}`,
    );
  }
  return [...(cutoffs as number[])];
}

/**
 * The optional fields of MODEL_OPTIONS into `clean`: checked, and left out where they equal their default (the one
 * check of these values; layers and forward passes trust them). A field of the other kind is refused (no old config
 * has one); cutoffs come exactly with an adaptive head (its default filled in), and are refused without one.
 */
function checkOptionalFields(
  given: Record<string, unknown>,
  kind: ModelConfig['kind'],
  clean: Record<string, unknown>,
) {
  for (const name of OPTION_NAMES) {
    const o = optionSpec(name);
    if (name in given && !o.kinds.includes(kind)) {
      throw new ModelConfigError(
        name,
        `applies to ${o.kinds.join(' and ')} models only, and this config is a ${kind} model`,
      );
    }
    if (o.type === 'int-list') {
      const V = clean['vocabSize'] as number;
      const { field, value } = o.needs;
      if (clean[field] === value) {
        const fallback = o.default.filter((c) => c < V);
        if (!(name in given) && fallback.length === 0) {
          throw new ModelConfigError(
            name,
            `give ${name}: the default ones (${o.default.join(', ')}) do not fit vocabSize ${V}`,
          );
        }
        clean[name] = checkCutoffs(name in given ? given[name] : fallback, V);
      } else if (name in given) {
        throw new ModelConfigError(name, `belongs to ${field} '${value}': give ${field}: '${value}' as well`);
      }
      continue;
    }
    if (!(name in given)) continue;
    const problem = optionProblem(name, given[name]);
    if (problem !== null) throw new ModelConfigError(name, problem);
    if (!isOptionDefault(name, given[name], kind)) clean[name] = given[name];
  }
}

/**
 * Check a model config (types, ranges, cross-field rules) and return a clean copy: absent fields of its kind take
 * {@link MODEL_DEFAULTS}; fields of the other kind are not added, and where given (old checkpoints store every
 * field) they are checked and kept, unused; unknown fields and fields given as undefined are refused.
 */
export function validateModelConfig(config: unknown): ModelConfig {
  if (typeof config !== 'object' || config === null) throw new ModelConfigError('(root)', 'a config must be an object');
  const given = config as Record<string, unknown>;
  const unknownField = Object.keys(given).find((k) => !KNOWN_FIELDS.includes(k));
  if (unknownField !== undefined) {
    throw new ModelConfigError(unknownField, `unknown field; a model config has ${KNOWN_FIELDS.join(', ')}`);
  }
  const kind = oneOf(given, 'kind', ['grassmann', 'transformer'] as const);
  const own = fieldsOf(kind);
  const o: Record<string, unknown> = {};
  for (const k of own) o[k] = k in given ? given[k] : fieldDefault(k);
  for (const k of FIELD_NAMES) if (!own.includes(k) && k in given) o[k] = given[k];
  const nLayerProblem = fieldProblem('nLayers', o['nLayers']);
  if (nLayerProblem !== null) throw new ModelConfigError('nLayers', nLayerProblem);
  const nLayers = o['nLayers'] as number;
  if (kind === 'grassmann' && !('offsets' in given) && nLayers !== MODEL_FIELDS.offsets.default.length) {
    o['offsets'] = offsetSchedule(MODEL_FIELDS.offsets.default.flat(), nLayers, 'per-layer');
  }
  // the common and own fields first (their errors come first), then the other kind's where a config carries them
  const clean: Record<string, unknown> = { kind };
  for (const k of [...own, ...FIELD_NAMES.filter((n) => !own.includes(n) && n in o)]) {
    if (k === 'offsets') clean[k] = checkOffsets(o[k], nLayers);
    else {
      const problem = fieldProblem(k, o[k]);
      if (problem !== null) throw new ModelConfigError(k, problem);
      clean[k] = o[k];
    }
  }
  checkOptionalFields(given, kind, clean);
  if (kind === 'transformer' && (clean['dModel'] as number) % (clean['nHeads'] as number) !== 0) {
    throw new ModelConfigError(
      'nHeads',
      `dModel ${String(clean['dModel'])} must be divisible by nHeads ${String(clean['nHeads'])}`,
    );
  }
  checkTensorSizes(clean);
  const ordered: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) if (k in clean) ordered[k] = clean[k];
  return ordered as unknown as ModelConfig;
}

/**
 * The most entries one weight may have: 2^30 float32 (4 GiB), the wasm backend's whole heap and more than a typed
 * array of tfjs-node's can take in one piece; a larger config would fail later with "Invalid typed array length".
 */
export const MAX_TENSOR_ENTRIES = 2 ** 30;

/** Refuse a config whose largest weights (embeddings V·d and L·d, FFN d·d_ff, Plücker C(r,2)·d) cannot be held. */
function checkTensorSizes(c: Record<string, unknown>): void {
  const n = (k: string) => c[k] as number;
  const weights: Array<[string, string, number]> = [
    ['dModel', `the token embedding [${n('vocabSize')}, ${n('dModel')}]`, n('vocabSize') * n('dModel')],
    ['maxLen', `the positional table [${n('maxLen')}, ${n('dModel')}]`, n('maxLen') * n('dModel')],
    ['dFF', `an FFN weight [${n('dModel')}, ${n('dFF')}]`, n('dModel') * n('dFF')],
    ['dModel', `a gate weight [${2 * n('dModel')}, ${n('dModel')}]`, 2 * n('dModel') * n('dModel')],
  ];
  if (c['kind'] === 'grassmann') {
    const C = binomial(n('r'), 2);
    weights.push(['r', `the Plücker projection [${C}, ${n('dModel')}]`, C * n('dModel')]);
  }
  for (const [field, what, entries] of weights) {
    if (entries > MAX_TENSOR_ENTRIES) {
      throw new ModelConfigError(
        field,
        `${what} would have ${entries.toExponential(2)} entries, more than one tensor can hold (2^30 float32 = 4 GiB): ` +
          'choose a smaller size',
      );
    }
  }
}

/**
 * Offsets of each layer from one list: 'per-layer' gives layer i the single offset list[i mod n]
 * (one offset per layer), 'all' gives every layer the whole list.
 */
export function offsetSchedule(list: readonly number[], nLayers: number, mode: 'per-layer' | 'all'): number[][] {
  if (list.length === 0) throw new RangeError('offsetSchedule needs at least one offset');
  return Array.from({ length: nLayers }, (_, i) => (mode === 'all' ? [...list] : [list[i % list.length] as number]));
}

const PAPER_6L: FullModelConfig = { kind: 'grassmann', ...MODEL_DEFAULTS };

/**
 * Named configs: the paper's 6- and 12-layer models, a small one (about 1M parameters with BERT's vocabulary, most of
 * them the token table: it trains in minutes on two CPU cores) and a tiny one for tests.
 */
export const PRESETS = {
  'paper-6l': PAPER_6L,
  small: {
    ...PAPER_6L,
    dModel: 32,
    nLayers: 4,
    dFF: 128,
    maxLen: 64,
    r: 8,
    offsets: [[1], [2], [4], [8]], // the paper's first four offsets: receptive field 16
    nHeads: 4,
  },
  'paper-6l-multi': { ...PAPER_6L, offsets: offsetSchedule([1, 2, 4, 8, 12, 16], 6, 'all') },
  'paper-12l': {
    ...PAPER_6L,
    nLayers: 12,
    maxLen: 256,
    offsets: offsetSchedule([1, 1, 2, 2, 4, 4, 8, 8, 12, 12, 16, 16], 12, 'per-layer'),
  },
  tiny: {
    ...PAPER_6L,
    vocabSize: 64,
    dModel: 16,
    nLayers: 2,
    dFF: 64,
    maxLen: 16,
    r: 4,
    offsets: [[1], [2]],
    nHeads: 2,
  },
} as const satisfies Record<string, FullModelConfig>;

export type PresetName = keyof typeof PRESETS;

/** The preset names, from the table (for CLI choices and messages). */
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/**
 * A preset (a size: it holds the fields of both kinds) with fields overridden, validated, keeping the fields of
 * the resulting kind; e.g. preset('paper-6l', { kind: 'transformer', attention: 'ea' }).
 */
export function preset(name: PresetName, overrides: Partial<FullModelConfig> = {}): ModelConfig {
  const base = PRESETS[name] as FullModelConfig | undefined;
  if (base === undefined) {
    throw new RangeError(`unknown preset '${String(name)}'; presets: ${Object.keys(PRESETS).join(', ')}`);
  }
  const kind = overrides.kind ?? base.kind;
  const ownFields: readonly string[] = ['kind', ...fieldsOf(kind), ...OPTION_NAMES];
  const own = Object.fromEntries(Object.entries(base).filter(([k]) => ownFields.includes(k))); // a size preset has both
  return validateModelConfig({ ...own, ...overrides });
}

/**
 * Trainable parameters of the model a config builds, analytically:
 * embeddings V·d + L·d (head tied), per block LN 2·2d + FFN (d·d_ff + d_ff + d_ff·d + d) + mixer:
 * Grassmann (d·r + r) + (C(r,2)·d + d) + (2d·d + d) (+ 2d with mixerNorm), Transformer (3d² + 3d) + (d² + d);
 * pre-LN adds ln_f 2d; an adaptive head adds its own weights (see {@link adaptiveHeadShapes}).
 */
export function countParams(config: ModelConfig | ModelConfigInput): number {
  return paramBreakdown(config).total;
}

/** Where a model's parameters are: what a size comparison should match (blocks) and what it shares (embeddings). */
export interface ParamBreakdown {
  /** Token and position tables, V·d + L·d (the tied head reuses the token table). */
  embeddings: number;
  /** The nLayers blocks (mixer or attention, FFN, LayerNorms), plus a pre-LN model's final LayerNorm. */
  blocks: number;
  /** An adaptive head's own weights; 0 when tied. */
  head: number;
  total: number;
}

/** {@link countParams} split into embeddings, blocks and head (the formulas above). */
export function paramBreakdown(config: ModelConfig | ModelConfigInput): ParamBreakdown {
  const c = validateModelConfig(config);
  const d = c.dModel;
  const ffn = d * c.dFF + c.dFF + c.dFF * d + d;
  const mixer =
    c.kind === 'grassmann' ? d * c.r + c.r + binomial(c.r, 2) * d + d + 2 * d * d + d : 3 * d * d + 3 * d + d * d + d;
  const mixerNorm = c.kind === 'grassmann' && c.mixerNorm === true ? 2 * d : 0;
  const perLayer = mixer + mixerNorm + 2 * 2 * d + ffn;
  const head = c.head === 'adaptive' ? adaptiveHeadShapes(d, c.vocabSize, c.cutoffs ?? []).params : 0;
  const embeddings = c.vocabSize * d + c.maxLen * d;
  const blocks = c.nLayers * perLayer + (c.norm === 'pre' ? 2 * d : 0);
  return { embeddings, blocks, head, total: embeddings + blocks + head };
}

/** '2,502,760 params: blocks 201,792, embeddings 1,961,600, head 339,368' (head only when it has weights). */
export function describeParams(config: ModelConfig | ModelConfigInput): string {
  const p = paramBreakdown(config);
  const n = (x: number) => x.toLocaleString('en-US');
  return `${n(p.total)} params: blocks ${n(p.blocks)}, embeddings ${n(p.embeddings)}${p.head > 0 ? `, head ${n(p.head)}` : ''}`;
}

/**
 * Shapes of an adaptive softmax head (Grave et al. 2017; PyTorch's AdaptiveLogSoftmaxWithLoss, no head bias):
 * head [c_1 + k, d] over the shortlist and one logit per tail cluster; tail i a projection [d_i, d] with
 * d_i = max(1, ⌊d / 4^(i+1)⌋) and an output [c_{i+1} − c_i, d_i] (c_{k+1} = V). Shapes as nn.Linear's [out, in].
 */
export function adaptiveHeadShapes(
  d: number,
  vocabSize: number,
  cutoffs: readonly number[],
): { head: [number, number]; tails: Array<{ proj: [number, number]; out: [number, number] }>; params: number } {
  const bounds = [...cutoffs, vocabSize];
  const head: [number, number] = [(bounds[0] as number) + cutoffs.length, d];
  const tails = cutoffs.map((c, i) => {
    const di = Math.max(1, Math.floor(d / ADAPTIVE_HEAD_DEFAULTS.divValue ** (i + 1)));
    return { proj: [di, d] as [number, number], out: [(bounds[i + 1] as number) - c, di] as [number, number] };
  });
  const params = head[0] * head[1] + tails.reduce((n, t) => n + t.proj[0] * t.proj[1] + t.out[0] * t.out[1], 0);
  return { head, tails, params };
}

// The one model config shared by GrassmannLM and TransformerLM, its validation, presets and parameter count.

/** Architecture of a language model. All fields are always present; fields a kind does not use are ignored. */
export interface ModelConfig {
  /** 'grassmann' (causal Grassmann mixing) or 'transformer' (attention baseline). */
  kind: 'grassmann' | 'transformer';
  /** Transformer only: 'dpa' dot-product softmax attention or 'ea' expressive attention. */
  attention: 'dpa' | 'ea';
  /** Vocabulary size V (30,522 for BERT WordPiece). */
  vocabSize: number;
  /** Model width d. */
  dModel: number;
  /** Number of blocks. */
  nLayers: number;
  /** Feed-forward width d_ff (4d in the paper). */
  dFF: number;
  /** Longest sequence L, also the size of the positional table. */
  maxLen: number;
  /** Grassmann only: reduced width r (C(r,2) Plücker coordinates per pair). */
  r: number;
  /** Grassmann only: offsets Δ of each layer, one array per layer. */
  offsets: number[][];
  /** ε of the Plücker normalisation and of expressive attention's denominator (1e-6). */
  eps: number;
  /** Transformer only: attention heads H (d divisible by H). */
  nHeads: number;
  /** 'post' LayerNorm (paper) or 'pre' LayerNorm with a final ln_f. */
  norm: 'post' | 'pre';
  /** Dropout rate in [0, 1). */
  dropout: number;
}

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

function positiveInt(o: Record<string, unknown>, field: string, min = 1): number {
  const v = o[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new ModelConfigError(field, `must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function oneOf<T extends string>(o: Record<string, unknown>, field: string, values: readonly T[]): T {
  const v = o[field];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new ModelConfigError(field, `must be one of ${values.map((s) => `'${s}'`).join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

/** Check every field of a model config (types, ranges, cross-field rules) and return a clean copy. */
export function validateModelConfig(config: unknown): ModelConfig {
  if (typeof config !== 'object' || config === null) throw new ModelConfigError('(root)', 'a config must be an object');
  const o = config as Record<string, unknown>;
  const kind = oneOf(o, 'kind', ['grassmann', 'transformer'] as const);
  const attention = oneOf(o, 'attention', ['dpa', 'ea'] as const);
  const vocabSize = positiveInt(o, 'vocabSize');
  const dModel = positiveInt(o, 'dModel');
  const nLayers = positiveInt(o, 'nLayers');
  const dFF = positiveInt(o, 'dFF');
  const maxLen = positiveInt(o, 'maxLen');
  const r = positiveInt(o, 'r', 2);
  const nHeads = positiveInt(o, 'nHeads');
  const norm = oneOf(o, 'norm', ['post', 'pre'] as const);
  const eps = o['eps'];
  if (typeof eps !== 'number' || !(eps > 0) || !Number.isFinite(eps)) {
    throw new ModelConfigError('eps', `must be a finite number > 0, got ${JSON.stringify(eps)}`);
  }
  const dropout = o['dropout'];
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    throw new ModelConfigError('dropout', `must be a number in [0, 1), got ${JSON.stringify(dropout)}`);
  }
  const offsets = o['offsets'];
  if (!Array.isArray(offsets) || offsets.length !== nLayers) {
    throw new ModelConfigError('offsets', `must be an array of ${nLayers} arrays (one per layer), got ${JSON.stringify(offsets)}`);
  }
  const cleanOffsets = offsets.map((layer: unknown, i) => {
    if (!Array.isArray(layer) || layer.length === 0) {
      throw new ModelConfigError('offsets', `layer ${i} must be a non-empty array of positive integers, got ${JSON.stringify(layer)}`);
    }
    return layer.map((delta: unknown) => {
      if (typeof delta !== 'number' || !Number.isInteger(delta) || delta < 1) {
        throw new ModelConfigError('offsets', `layer ${i} has offset ${JSON.stringify(delta)}; offsets are integers >= 1`);
      }
      return delta;
    });
  });
  if (kind === 'transformer' && dModel % nHeads !== 0) {
    throw new ModelConfigError('nHeads', `dModel ${dModel} must be divisible by nHeads ${nHeads}`);
  }
  return { kind, attention, vocabSize, dModel, nLayers, dFF, maxLen, r, offsets: cleanOffsets, eps, nHeads, norm, dropout };
}

/**
 * Offsets of each layer from one list: 'per-layer' gives layer i the single offset list[i mod n]
 * (one offset per layer), 'all' gives every layer the whole list.
 */
export function offsetSchedule(list: readonly number[], nLayers: number, mode: 'per-layer' | 'all'): number[][] {
  if (list.length === 0) throw new RangeError('offsetSchedule needs at least one offset');
  return Array.from({ length: nLayers }, (_, i) => (mode === 'all' ? [...list] : [list[i % list.length] as number]));
}

const PAPER_6L: ModelConfig = {
  kind: 'grassmann',
  attention: 'dpa',
  vocabSize: 30522, // BERT WordPiece
  dModel: 256,
  nLayers: 6,
  dFF: 1024, // 4d
  maxLen: 128,
  r: 32, // C(32,2) = 496 Plücker coordinates
  offsets: offsetSchedule([1, 2, 4, 8, 12, 16], 6, 'per-layer'),
  eps: 1e-6,
  nHeads: 4,
  norm: 'post', // as the paper
  dropout: 0.1,
};

/** Named configs: the paper's 6- and 12-layer models and a tiny one for tests. */
export const PRESETS = {
  'paper-6l': PAPER_6L,
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
} as const satisfies Record<string, ModelConfig>;

export type PresetName = keyof typeof PRESETS;

/** A preset with fields overridden, validated; e.g. preset('paper-6l', { kind: 'transformer', attention: 'ea' }). */
export function preset(name: PresetName, overrides: Partial<ModelConfig> = {}): ModelConfig {
  const base = PRESETS[name] as ModelConfig | undefined;
  if (base === undefined) {
    throw new RangeError(`unknown preset '${String(name)}'; presets: ${Object.keys(PRESETS).join(', ')}`);
  }
  return validateModelConfig({ ...base, offsets: base.offsets.map((l) => [...l]), ...overrides });
}

/** C(r, 2) = r(r − 1)/2, the number of Plücker coordinates of a 2-plane in R^r. */
export function pluckerDim(r: number): number {
  return (r * (r - 1)) / 2;
}

/**
 * Trainable parameters of the model a config builds, analytically:
 * embeddings V·d + L·d (head tied), per block LN 2·2d + FFN (d·d_ff + d_ff + d_ff·d + d) + mixer:
 * Grassmann (d·r + r) + (C(r,2)·d + d) + (2d·d + d), Transformer (3d² + 3d) + (d² + d); pre-LN adds ln_f 2d.
 */
export function countParams(config: ModelConfig): number {
  const c = validateModelConfig(config);
  const d = c.dModel;
  const ffn = d * c.dFF + c.dFF + c.dFF * d + d;
  const mixer =
    c.kind === 'grassmann'
      ? d * c.r + c.r + pluckerDim(c.r) * d + d + 2 * d * d + d
      : 3 * d * d + 3 * d + d * d + d;
  const perLayer = mixer + 2 * 2 * d + ffn;
  return c.vocabSize * d + c.maxLen * d + c.nLayers * perLayer + (c.norm === 'pre' ? 2 * d : 0);
}

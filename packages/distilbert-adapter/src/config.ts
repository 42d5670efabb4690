// config.json of a Hugging Face DistilBERT model: parse, validate, and the fixed constants of the architecture.
import { DistilBertError } from './errors.js';

/** Activations of the feed-forward block that this package implements (HF `ACT2FN` names). */
export const DISTILBERT_ACTIVATIONS = ['gelu', 'relu'] as const;
export type DistilBertActivation = (typeof DISTILBERT_ACTIVATIONS)[number];

/** LayerNorm ε of every DistilBERT LayerNorm: hard-coded to 1e-12 in HF `modeling_distilbert.py`. */
export const DISTILBERT_LAYER_NORM_EPS = 1e-12;

/** The fields of a DistilBERT `config.json` that define the encoder, in this package's spelling. */
export interface DistilBertConfig {
  /** `vocab_size`: rows of the word-embedding table (V). */
  readonly vocabSize: number;
  /** `dim`: model width (d). */
  readonly dim: number;
  /** `n_layers`: Transformer blocks. */
  readonly nLayers: number;
  /** `n_heads`: attention heads (H); d must be a multiple of H. */
  readonly nHeads: number;
  /** `hidden_dim`: feed-forward width. */
  readonly hiddenDim: number;
  /** `max_position_embeddings`: longest input (T ≤ this). */
  readonly maxPositionEmbeddings: number;
  /** `activation`: 'gelu' (exact, erf) or 'relu'. Default 'gelu'. */
  readonly activation: DistilBertActivation;
  /** `sinusoidal_pos_embds`: fixed sinusoidal position table instead of a learned one. Default false. */
  readonly sinusoidalPosEmbds: boolean;
  /**
   * `dropout`: dropout rate of the embeddings, attention output and FFN output (trainable mode, training only). Default
   * 0.1.
   */
  readonly dropout: number;
  /** `attention_dropout`: dropout rate of the attention weights (trainable mode, training only). Default 0.1. */
  readonly attentionDropout: number;
  /** LayerNorm ε (always {@link DISTILBERT_LAYER_NORM_EPS}; not a config.json field). */
  readonly layerNormEps: number;
}

function invalid(file: string, message: string): DistilBertError {
  return new DistilBertError('INVALID_CONFIG', `${file}: ${message}`, { file });
}

function positiveInt(raw: Record<string, unknown>, key: string, file: string): number {
  const v = raw[key];
  if (v === undefined)
    throw invalid(
      file,
      `the field "${key}" is missing; a DistilBERT config.json has it (e.g. ${EXAMPLE[key] ?? '?'} for distilbert-base-uncased)`,
    );
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw invalid(file, `"${key}" must be a positive integer, got ${JSON.stringify(v)}`);
  return v;
}

function rate(raw: Record<string, unknown>, key: string, file: string): number {
  const v = raw[key] ?? 0.1;
  if (typeof v !== 'number' || !(v >= 0 && v < 1))
    throw invalid(file, `"${key}" must be a number in [0, 1), got ${JSON.stringify(v)}`);
  return v;
}

const EXAMPLE: Record<string, string> = {
  vocab_size: '30522',
  dim: '768',
  n_layers: '6',
  n_heads: '12',
  hidden_dim: '3072',
  max_position_embeddings: '512',
};

/**
 * Parse and validate the text of a DistilBERT `config.json` (HF `DistilBertConfig`). Throws
 * `INVALID_CONFIG` naming the field for a missing or malformed field or `dim % n_heads ≠ 0`, and
 * `UNSUPPORTED_CONFIG` for an activation other than 'gelu' / 'relu'. `file` is used in messages.
 */
export function parseDistilBertConfig(text: string, file = 'config.json'): DistilBertConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw invalid(file, `not valid JSON (${(err as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(file, 'must hold a JSON object');
  const obj = raw as Record<string, unknown>;
  const modelType = obj['model_type'];
  if (modelType !== undefined && modelType !== 'distilbert') {
    throw new DistilBertError(
      'UNSUPPORTED_CONFIG',
      `${file}: model_type is ${JSON.stringify(modelType)}, but this package loads DistilBERT models only (model_type "distilbert")`,
      { file },
    );
  }
  const dim = positiveInt(obj, 'dim', file);
  const nHeads = positiveInt(obj, 'n_heads', file);
  if (dim % nHeads !== 0) throw invalid(file, `dim (${dim}) must be a multiple of n_heads (${nHeads})`);
  const activation = obj['activation'] ?? 'gelu';
  if (typeof activation !== 'string' || !(DISTILBERT_ACTIVATIONS as readonly string[]).includes(activation)) {
    throw new DistilBertError(
      'UNSUPPORTED_CONFIG',
      `${file}: activation ${JSON.stringify(activation)} is not supported; supported: ${DISTILBERT_ACTIVATIONS.map((a) => `"${a}"`).join(', ')} (HF DistilBERT accepts only these two)`,
      { file },
    );
  }
  const sinusoidal = obj['sinusoidal_pos_embds'] ?? false;
  if (typeof sinusoidal !== 'boolean')
    throw invalid(file, `"sinusoidal_pos_embds" must be true or false, got ${JSON.stringify(sinusoidal)}`);
  return {
    vocabSize: positiveInt(obj, 'vocab_size', file),
    dim,
    nLayers: positiveInt(obj, 'n_layers', file),
    nHeads,
    hiddenDim: positiveInt(obj, 'hidden_dim', file),
    maxPositionEmbeddings: positiveInt(obj, 'max_position_embeddings', file),
    activation: activation as DistilBertActivation,
    sinusoidalPosEmbds: sinusoidal,
    dropout: rate(obj, 'dropout', file),
    attentionDropout: rate(obj, 'attention_dropout', file),
    layerNormEps: DISTILBERT_LAYER_NORM_EPS,
  };
}

/** The config.json fields (HF spelling) of a config, e.g. to write a model folder. */
export function toHfConfigJson(config: DistilBertConfig): Record<string, unknown> {
  return {
    model_type: 'distilbert',
    architectures: ['DistilBertModel'],
    vocab_size: config.vocabSize,
    dim: config.dim,
    n_layers: config.nLayers,
    n_heads: config.nHeads,
    hidden_dim: config.hiddenDim,
    max_position_embeddings: config.maxPositionEmbeddings,
    activation: config.activation,
    sinusoidal_pos_embds: config.sinusoidalPosEmbds,
    dropout: config.dropout,
    attention_dropout: config.attentionDropout,
    pad_token_id: 0,
  };
}

/**
 * Sinusoidal position table of HF `create_sinusoidal_embeddings`: with θ(p, j) = p / 10000^(2⌊j/2⌋/d),
 * E[p, j] = sin θ for even j and cos θ for odd j; [maxPositions, d] row-major.
 */
export function sinusoidalPositionTable(maxPositions: number, dim: number): Float32Array {
  const out = new Float32Array(maxPositions * dim);
  for (let p = 0; p < maxPositions; p++) {
    for (let j = 0; j < dim; j++) {
      const theta = p / Math.pow(10000, (2 * Math.floor(j / 2)) / dim);
      out[p * dim + j] = j % 2 === 0 ? Math.sin(theta) : Math.cos(theta);
    }
  }
  return out;
}

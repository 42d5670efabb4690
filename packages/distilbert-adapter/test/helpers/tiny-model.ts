// Writes a tiny DistilBERT in the Hugging Face layout (config.json, vocab.txt, model.safetensors) with random weights.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSafetensorsFile, type SafetensorsTensorInput } from '@grassflow/checkpoints';

/** config.json fields (HF spelling) of the tiny model. */
export const TINY_CONFIG = {
  model_type: 'distilbert',
  architectures: ['DistilBertForMaskedLM'],
  vocab_size: 40,
  dim: 32,
  n_layers: 2,
  n_heads: 2,
  hidden_dim: 64,
  max_position_embeddings: 64,
  activation: 'gelu',
  sinusoidal_pos_embds: false,
  dropout: 0.1,
  attention_dropout: 0.1,
  pad_token_id: 0,
} as const;

/** 36 tokens: ids 0..35 (the config's vocab_size 40 leaves 4 unused rows, as HF allows). */
export const TINY_VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  '[MASK]',
  'a',
  'man',
  'dog',
  'is',
  'playing',
  'the',
  'guitar',
  'on',
  'stage',
  'runs',
  'an',
  'animal',
  'moves',
  'two',
  'men',
  'talk',
  'nobody',
  'speaks',
  '.',
  ',',
  'play',
  '##ing',
  '##s',
  'some',
  '##one',
  'music',
  'making',
  'cat',
  'sleeps',
  'outside',
  'inside',
];

/** A weight in the HF layout with float64 values (all exactly representable in float16). */
export interface RefWeight {
  readonly shape: number[];
  readonly data: Float64Array;
  /** Store this tensor with another dtype than the model's (tests of dtype errors). */
  readonly dtype?: 'I32';
}

export type HfConfig = Record<string, unknown> & {
  dim: number;
  n_layers: number;
  hidden_dim: number;
  vocab_size: number;
  max_position_embeddings: number;
  n_heads: number;
};

export interface TinyModelOptions {
  /** Seed of the weights (default 1). */
  seed?: number;
  /** Prefix backbone names with `distilbert.` (default true). */
  prefix?: boolean;
  /**
   * Stored dtype (default F32). BF16 rounds every value to bfloat16 in place, so the reference sees the stored values.
   */
  dtype?: 'F32' | 'F16' | 'BF16';
  /** Overrides of config.json fields written to the file (the weights follow `shapeConfig`). */
  config?: Record<string, unknown>;
  /** The config that decides the tensors' shapes (default: TINY_CONFIG with `config` applied). */
  shapeConfig?: Record<string, unknown>;
  /** Add MLM head tensors (vocab_transform, vocab_layer_norm, vocab_projector) (default true). */
  heads?: boolean;
  /** Edit the tensor map before writing (delete, reshape, add). */
  edit?: (tensors: Map<string, RefWeight>) => void;
  /** Leave out model.safetensors and write pytorch_model.bin instead. */
  pytorchOnly?: boolean;
}

export interface TinyModel {
  readonly dir: string;
  readonly config: HfConfig;
  /** Backbone weights by HF name without prefix (what the reference computes with). */
  readonly weights: Map<string, RefWeight>;
}

/** Deterministic uniform [0, 1) generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform values in [center − half, center + half), rounded to multiples of 2^-10 (exact in float16 when |v| < 2). */
function values(n: number, next: () => number, half: number, center = 0): Float64Array {
  return Float64Array.from({ length: n }, () => Math.round((center + (2 * next() - 1) * half) * 1024) / 1024);
}

/** The backbone tensors of a DistilBERT config with random values, HF names without prefix. */
export function randomWeights(cfg: HfConfig, seed: number): Map<string, RefWeight> {
  const next = rng(seed);
  const m = new Map<string, RefWeight>();
  const { dim: d, hidden_dim: F, vocab_size: V, max_position_embeddings: P } = cfg;
  const put = (name: string, shape: number[], half: number, center = 0): void => {
    m.set(name, {
      shape,
      data: values(
        shape.reduce((a, b) => a * b, 1),
        next,
        half,
        center,
      ),
    });
  };
  put('embeddings.word_embeddings.weight', [V, d], 1);
  put('embeddings.position_embeddings.weight', [P, d], 0.5);
  put('embeddings.LayerNorm.weight', [d], 0.3, 1);
  put('embeddings.LayerNorm.bias', [d], 0.2);
  for (let i = 0; i < cfg.n_layers; i++) {
    const l = `transformer.layer.${i}`;
    for (const lin of ['q_lin', 'k_lin', 'v_lin', 'out_lin']) {
      put(`${l}.attention.${lin}.weight`, [d, d], 0.4);
      put(`${l}.attention.${lin}.bias`, [d], 0.2);
    }
    put(`${l}.sa_layer_norm.weight`, [d], 0.3, 1);
    put(`${l}.sa_layer_norm.bias`, [d], 0.2);
    put(`${l}.ffn.lin1.weight`, [F, d], 0.4);
    put(`${l}.ffn.lin1.bias`, [F], 0.2);
    put(`${l}.ffn.lin2.weight`, [d, F], 0.3);
    put(`${l}.ffn.lin2.bias`, [d], 0.2);
    put(`${l}.output_layer_norm.weight`, [d], 0.3, 1);
    put(`${l}.output_layer_norm.bias`, [d], 0.2);
  }
  return m;
}

/** float64 value exactly representable in binary16 → its bits (normal and subnormal numbers). */
export function toHalfBits(v: number): number {
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  if (e < -14) {
    const m = a / 2 ** -24;
    if (!Number.isInteger(m)) throw new Error(`${v} is not exact in float16`);
    return sign | m;
  }
  const m = (a / 2 ** e - 1) * 1024;
  if (!Number.isInteger(m) || e > 15) throw new Error(`${v} is not exact in float16`);
  return sign | ((e + 15) << 10) | m;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The bfloat16 bits nearest to v (round half to even on the float32 bits). */
export function toBf16Bits(v: number): number {
  f32[0] = v;
  const bits = u32[0] as number;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** The value of bfloat16 bits. */
export function fromBf16Bits(h: number): number {
  u32[0] = h << 16;
  return f32[0] as number;
}

function encode(w: RefWeight, dtype: 'F32' | 'F16' | 'BF16'): SafetensorsTensorInput {
  if (w.dtype === 'I32') return { dtype: 'I32', shape: w.shape, data: Int32Array.from(w.data) };
  if (dtype === 'BF16') {
    const bits = Uint16Array.from(w.data, toBf16Bits);
    bits.forEach((b, i) => (w.data[i] = fromBf16Bits(b))); // the reference computes with what is stored
    return { dtype, shape: w.shape, data: bits };
  }
  if (dtype === 'F32') return { dtype, shape: w.shape, data: Float32Array.from(w.data) };
  return { dtype, shape: w.shape, data: Uint16Array.from(w.data, toHalfBits) };
}

/** Write a tiny DistilBERT folder; returns its config and the backbone weights the reference uses. */
export async function writeTinyModel(dir: string, opts: TinyModelOptions = {}): Promise<TinyModel> {
  const config = { ...TINY_CONFIG, ...(opts.config ?? {}) } as unknown as HfConfig;
  const shapeConfig = { ...TINY_CONFIG, ...(opts.shapeConfig ?? opts.config ?? {}) } as unknown as HfConfig;
  const weights = randomWeights(shapeConfig, opts.seed ?? 1);
  const prefix = opts.prefix === false ? '' : 'distilbert.';
  const all = new Map<string, RefWeight>();
  for (const [k, v] of weights) all.set(prefix + k, v);
  if (opts.heads !== false) {
    const next = rng(999);
    const d = shapeConfig.dim;
    all.set('vocab_transform.weight', { shape: [d, d], data: values(d * d, next, 0.1) });
    all.set('vocab_transform.bias', { shape: [d], data: values(d, next, 0.1) });
    all.set('vocab_layer_norm.weight', { shape: [d], data: values(d, next, 0.1, 1) });
    all.set('vocab_layer_norm.bias', { shape: [d], data: values(d, next, 0.1) });
    all.set('vocab_projector.bias', {
      shape: [shapeConfig.vocab_size],
      data: values(shapeConfig.vocab_size, next, 0.1),
    });
  }
  opts.edit?.(all);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  await writeFile(join(dir, 'vocab.txt'), TINY_VOCAB.join('\n') + '\n');
  const tensors = new Map<string, SafetensorsTensorInput>();
  for (const [k, v] of all) tensors.set(k, encode(v, opts.dtype ?? 'F32'));
  if (opts.pytorchOnly === true) await writeFile(join(dir, 'pytorch_model.bin'), new Uint8Array([0x80, 0x02]));
  else await writeSafetensorsFile(join(dir, 'model.safetensors'), tensors, { format: 'pt' });
  return { dir, config, weights };
}

// model.safetensors of a Hugging Face DistilBERT: HF tensor names, shape checks against config.json, widening to
// float32.
import {
  openSafetensorsFile,
  safetensorsValues,
  SafetensorsError,
  type SafetensorsFileReader,
  type SafetensorsTensorInfo,
} from '@grassflow/checkpoints';
import { sinusoidalPositionTable, type DistilBertConfig } from './config.js';
import { DistilBertError } from './errors.js';

/** A float32 tensor in the Hugging Face layout (`nn.Linear.weight` is [out, in]), row-major. */
export interface Float32Weight {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/** The backbone's weights by HF name without the `distilbert.` prefix, e.g. `transformer.layer.0.ffn.lin1.weight`. */
export type DistilBertWeights = ReadonlyMap<string, Float32Weight>;

/** What {@link readDistilBertWeights} found besides the weights. */
export interface WeightsReport {
  readonly weights: DistilBertWeights;
  /** '' or 'distilbert.': the prefix the file's backbone names carry. */
  readonly prefix: string;
  /** Tensors of the file that are not part of the encoder (task heads, buffers), ignored. */
  readonly ignoredTensors: readonly string[];
  /** Tensors widened to float32 from F16, BF16 or F64, by original dtype. */
  readonly widened: Readonly<Record<string, number>>;
  /** True when the sinusoidal position table was computed because the file lacks it. */
  readonly computedPositionTable: boolean;
}

interface Expected {
  readonly shape: readonly number[];
  /** The shape in config.json's words, e.g. "[hidden_dim, dim]". */
  readonly formula: string;
}

/** Every backbone tensor a DistilBERT with this config has, with its HF shape. Names have no prefix. */
export function expectedTensors(config: DistilBertConfig): Map<string, Expected> {
  const { vocabSize: V, dim: d, hiddenDim: F, maxPositionEmbeddings: P } = config;
  const m = new Map<string, Expected>();
  const put = (name: string, shape: number[], formula: string): void => void m.set(name, { shape, formula });
  put('embeddings.word_embeddings.weight', [V, d], '[vocab_size, dim]');
  put('embeddings.position_embeddings.weight', [P, d], '[max_position_embeddings, dim]');
  put('embeddings.LayerNorm.weight', [d], '[dim]');
  put('embeddings.LayerNorm.bias', [d], '[dim]');
  for (let i = 0; i < config.nLayers; i++) {
    const l = `transformer.layer.${i}`;
    for (const lin of ['q_lin', 'k_lin', 'v_lin', 'out_lin']) {
      put(`${l}.attention.${lin}.weight`, [d, d], '[dim, dim]');
      put(`${l}.attention.${lin}.bias`, [d], '[dim]');
    }
    put(`${l}.sa_layer_norm.weight`, [d], '[dim]');
    put(`${l}.sa_layer_norm.bias`, [d], '[dim]');
    put(`${l}.ffn.lin1.weight`, [F, d], '[hidden_dim, dim]');
    put(`${l}.ffn.lin1.bias`, [F], '[hidden_dim]');
    put(`${l}.ffn.lin2.weight`, [d, F], '[dim, hidden_dim]');
    put(`${l}.ffn.lin2.bias`, [d], '[dim]');
    put(`${l}.output_layer_norm.weight`, [d], '[dim]');
    put(`${l}.output_layer_norm.bias`, [d], '[dim]');
  }
  return m;
}

/** Buffers PyTorch may save inside the backbone that are not weights (recomputed here). */
const BACKBONE_BUFFERS = new Set(['embeddings.position_ids']);

const FLOAT_DTYPES = new Set(['F32', 'F16', 'BF16', 'F64']);

function describeConfig(c: DistilBertConfig): string {
  return `vocab_size=${c.vocabSize} dim=${c.dim} n_layers=${c.nLayers} n_heads=${c.nHeads} hidden_dim=${c.hiddenDim} max_position_embeddings=${c.maxPositionEmbeddings}`;
}

function corrupt(path: string, err: unknown): DistilBertError {
  const why = err instanceof Error ? err.message : String(err);
  return new DistilBertError(
    'CORRUPT_FILE',
    `${path} is not a valid safetensors file (${why}). Download it again, or re-export it with safetensors.torch.save_file.`,
    { file: path, cause: err },
  );
}

/**
 * Read the encoder's weights from a DistilBERT `model.safetensors` and check them against `config`
 * before any tensor data is read: every expected name present (with or without the `distilbert.`
 * prefix), every shape equal to the one config.json implies, float dtypes only (F16/BF16/F64 are
 * converted to float32). Tensors outside the backbone (`vocab_transform`, `vocab_projector`,
 * `pre_classifier`, `classifier`, …) are ignored and listed; an unknown tensor inside the backbone
 * (e.g. a layer beyond n_layers) is an error. Errors are {@link DistilBertError}s naming the tensor.
 */
export async function readDistilBertWeights(path: string, config: DistilBertConfig): Promise<WeightsReport> {
  let reader: SafetensorsFileReader;
  try {
    reader = await openSafetensorsFile(path);
  } catch (err) {
    if (err instanceof SafetensorsError && err.code === 'IO')
      throw new DistilBertError('NOT_FOUND', `cannot read ${path}: ${err.message}`, { file: path, cause: err });
    throw corrupt(path, err);
  }
  try {
    const infos = new Map<string, SafetensorsTensorInfo>(reader.header.tensors.map((t) => [t.name, t]));
    const prefix = infos.has('distilbert.embeddings.word_embeddings.weight')
      ? 'distilbert.'
      : infos.has('embeddings.word_embeddings.weight')
        ? ''
        : null;
    if (prefix === null) {
      const some = [...infos.keys()].slice(0, 5).join(', ');
      throw new DistilBertError(
        'TENSOR_MISSING',
        `${path} has no tensor 'distilbert.embeddings.word_embeddings.weight' (nor 'embeddings.word_embeddings.weight'): ` +
          `it does not hold a DistilBERT backbone with Hugging Face names (its first tensors: ${some || 'none'})`,
        { file: path },
      );
    }
    const expected = expectedTensors(config);
    const backbone = (name: string): boolean =>
      name.startsWith(`${prefix}embeddings.`) || name.startsWith(`${prefix}transformer.`);
    const ignoredTensors: string[] = [];
    for (const name of infos.keys()) {
      if (!backbone(name)) {
        ignoredTensors.push(name);
        continue;
      }
      const bare = name.slice(prefix.length);
      if (expected.has(bare)) continue;
      if (BACKBONE_BUFFERS.has(bare)) {
        ignoredTensors.push(name);
        continue;
      }
      const layer = /^transformer\.layer\.(\d+)\./.exec(bare);
      const hint =
        layer !== null && Number(layer[1]) >= config.nLayers
          ? `config.json says n_layers=${config.nLayers} (layers 0..${config.nLayers - 1}), but the file has layer ${layer[1]}: the config does not belong to these weights`
          : 'it is not part of a DistilBERT encoder';
      throw new DistilBertError('TENSOR_UNEXPECTED', `${path}: unexpected tensor '${name}': ${hint}`, { file: path });
    }
    // Check every name, shape and dtype before reading any data.
    let computedPositionTable = false;
    for (const [bare, exp] of expected) {
      const full = prefix + bare;
      const info = infos.get(full);
      if (info === undefined) {
        if (bare === 'embeddings.position_embeddings.weight' && config.sinusoidalPosEmbds) {
          computedPositionTable = true;
          continue;
        }
        const layer = /^transformer\.layer\.(\d+)\./.exec(bare);
        const hint =
          layer !== null ? ` (config.json says n_layers=${config.nLayers}; is the config from another model?)` : '';
        throw new DistilBertError(
          'TENSOR_MISSING',
          `${path}: tensor '${full}' is missing${hint}; a DistilBERT with ${describeConfig(config)} needs it`,
          { file: path },
        );
      }
      if (!FLOAT_DTYPES.has(info.dtype)) {
        throw new DistilBertError(
          'TENSOR_DTYPE',
          `${path}: tensor '${full}' has dtype ${info.dtype}; expected a float dtype (F32, F16, BF16 or F64)`,
          { file: path },
        );
      }
      if (info.shape.length !== exp.shape.length || info.shape.some((s, i) => s !== exp.shape[i])) {
        throw new DistilBertError(
          'TENSOR_SHAPE',
          `${path}: tensor '${full}' has shape [${info.shape.join(', ')}] but config.json implies ${exp.formula} = [${exp.shape.join(', ')}] ` +
            `(${describeConfig(config)}): the config does not belong to these weights`,
          { file: path },
        );
      }
    }
    const weights = new Map<string, Float32Weight>();
    const widened: Record<string, number> = {};
    for (const [bare, exp] of expected) {
      const full = prefix + bare;
      if (!infos.has(full)) {
        weights.set(bare, {
          shape: exp.shape,
          data: sinusoidalPositionTable(config.maxPositionEmbeddings, config.dim),
        });
        continue;
      }
      let tensor;
      try {
        tensor = await reader.read(full);
      } catch (err) {
        throw corrupt(path, err);
      }
      const values = safetensorsValues(tensor);
      let data: Float32Array;
      if (tensor.dtype === 'F32') data = values as Float32Array;
      else {
        data = values instanceof Float32Array ? values : Float32Array.from(values as Float64Array);
        widened[tensor.dtype] = (widened[tensor.dtype] ?? 0) + 1;
      }
      weights.set(bare, { shape: exp.shape, data });
    }
    return { weights, prefix, ignoredTensors, widened, computedPositionTable };
  } finally {
    await reader.close();
  }
}

// DistilBertEncoder: parameters on tfjs (constants or variables), input checks, forward, cached forward.
import * as tf from '@tensorflow/tfjs-core';
import type { WordPieceTokenizer } from '@grassflow/tokenizers';
import type { DistilBertConfig } from './config.js';
import { DistilBertError } from './errors.js';
import { FeatureCache } from './feature-cache.js';
import {
  distilBertForward,
  type EncoderParams,
  type LayerParams,
  type LinearParams,
  type NormParams,
} from './forward.js';
import type { DistilBertWeights } from './weights.js';

/** 'frozen': weights are constants, no gradients, optional feature cache. 'trainable': weights are tf.Variables. */
export type EncoderMode = 'frozen' | 'trainable';

/** Token ids or a mask as a row-major Int32Array with its shape [B, T] (e.g. from tokenizers' `packBatch`). */
export interface IdsArray {
  readonly data: Int32Array;
  readonly shape: readonly [number, number];
}

/** forward() input: an int32 tf tensor [B, T] or an {@link IdsArray}. */
export type Ids2D = tf.Tensor2D | IdsArray;

/** Options of {@link DistilBertEncoder.forward}. */
export interface ForwardOptions {
  /** Apply dropout (trainable mode only; default false). */
  readonly training?: boolean;
}

/** Result of {@link DistilBertEncoder.forwardCached}. */
export interface CachedForwardResult {
  /** [B, T, d]; positions after an example's last attended token are 0. */
  readonly lastHiddenState: tf.Tensor3D;
  /** Examples read from the cache, computed (absent), and recomputed because their entry was corrupt. */
  readonly hits: number;
  readonly misses: number;
  readonly corrupt: number;
}

/** Everything the encoder was built from. */
export interface EncoderInit {
  readonly config: DistilBertConfig;
  readonly weights: DistilBertWeights;
  readonly tokenizer: WordPieceTokenizer;
  readonly mode: EncoderMode;
  readonly featureCache?: FeatureCache;
  readonly info: LoadInfo;
}

/** Where a model came from and what loading it found. */
export interface LoadInfo {
  /** Folder holding the model's files. */
  readonly dir: string;
  /** 'folder': an explicit folder; 'cache': the hub cache; 'download': fetched (at least partly) by this load. */
  readonly source: 'folder' | 'cache' | 'download';
  /** Hub repository and revision, for a model id. */
  readonly repo?: string;
  readonly revision?: string;
  /** '' or 'distilbert.': the prefix of the backbone's tensor names in model.safetensors. */
  readonly prefix: string;
  /** Tensors of model.safetensors that are not part of the encoder (task heads, buffers): ignored. */
  readonly ignoredTensors: readonly string[];
  /** Count of tensors widened to float32, by stored dtype (F16, BF16, F64). */
  readonly widened: Readonly<Record<string, number>>;
  /** True when sinusoidal_pos_embds is set and the table was computed because the file lacks it. */
  readonly computedPositionTable: boolean;
}

let instances = 0;

/** A DistilBERT encoder: `forward(inputIds, attentionMask) → last_hidden_state [B, T, dim]`. */
export class DistilBertEncoder {
  readonly config: DistilBertConfig;
  readonly tokenizer: WordPieceTokenizer;
  readonly mode: EncoderMode;
  /** Where the model came from; which tensors were ignored or widened. */
  readonly info: LoadInfo;
  /** The feature cache of {@link forwardCached}, when one was configured (frozen mode only). */
  readonly featureCache: FeatureCache | undefined;
  private readonly params: EncoderParams;
  private readonly named: Map<string, tf.Tensor>;
  private disposed = false;

  constructor(init: EncoderInit) {
    this.config = init.config;
    this.tokenizer = init.tokenizer;
    this.mode = init.mode;
    this.info = init.info;
    this.featureCache = init.featureCache;
    const id = instances++;
    this.named = new Map();
    const make = (name: string, transpose: boolean): tf.Tensor => {
      const w = init.weights.get(name);
      if (w === undefined) throw new DistilBertError('TENSOR_MISSING', `internal: weight '${name}' was not loaded`);
      const t = tf.tidy(() => {
        const base = tf.tensor(w.data, [...w.shape], 'float32');
        return transpose ? tf.transpose(base) : base; // nn.Linear [out, in] → internal [in, out]
      });
      // Sinusoidal position tables are fixed in HF (requires_grad False): never trainable.
      const trainable =
        init.mode === 'trainable' &&
        !(name === 'embeddings.position_embeddings.weight' && init.config.sinusoidalPosEmbds);
      const p = trainable ? tf.variable(t, true, `distilbert_${id}/${name}`) : t;
      if (p !== t) t.dispose();
      this.named.set(name, p);
      return p;
    };
    const linear = (prefix: string): LinearParams => ({
      w: make(`${prefix}.weight`, true) as tf.Tensor2D,
      b: make(`${prefix}.bias`, false) as tf.Tensor1D,
    });
    const normP = (prefix: string): NormParams => ({
      gamma: make(`${prefix}.weight`, false) as tf.Tensor1D,
      beta: make(`${prefix}.bias`, false) as tf.Tensor1D,
    });
    const layers: LayerParams[] = [];
    for (let i = 0; i < init.config.nLayers; i++) {
      const l = `transformer.layer.${i}`;
      layers.push({
        q: linear(`${l}.attention.q_lin`),
        k: linear(`${l}.attention.k_lin`),
        v: linear(`${l}.attention.v_lin`),
        out: linear(`${l}.attention.out_lin`),
        saNorm: normP(`${l}.sa_layer_norm`),
        lin1: linear(`${l}.ffn.lin1`),
        lin2: linear(`${l}.ffn.lin2`),
        outNorm: normP(`${l}.output_layer_norm`),
      });
    }
    this.params = {
      wordEmbeddings: make('embeddings.word_embeddings.weight', false) as tf.Tensor2D,
      positionEmbeddings: make('embeddings.position_embeddings.weight', false) as tf.Tensor2D,
      embNorm: normP('embeddings.LayerNorm'),
      layers,
    };
  }

  /** Trainable mode: the tf.Variables (HF names in `variable.name` after `distilbert_<n>/`); frozen mode: []. */
  trainableVariables(): tf.Variable[] {
    this.checkAlive();
    return [...this.named.values()].filter((t): t is tf.Variable => t instanceof tf.Variable && t.trainable);
  }

  /**
   * last_hidden_state [B, T, dim] of HF `DistilBertModel` for token ids [B, T] (int32) and an attention
   * mask [B, T] of 0/1 (default all ones). Checks shapes, T ≤ max_position_embeddings and that every id
   * is < vocab_size. Frozen mode computes without variables; trainable mode is differentiable with
   * respect to {@link trainableVariables}. The caller disposes the result; nothing else is kept.
   * Tensor inputs are read back synchronously for these checks; on webgpu under Node pass
   * `{ data: Int32Array, shape }` instead (or use {@link forwardCached}, which reads tensors asynchronously).
   */
  forward(inputIds: Ids2D, attentionMask?: Ids2D, options: ForwardOptions = {}): tf.Tensor3D {
    this.checkAlive();
    const training = options.training === true;
    if (training && this.mode === 'frozen')
      throw new DistilBertError('INVALID_ARGUMENT', 'training: true needs an encoder loaded with mode: "trainable"');
    const ids = this.checkIds(inputIds);
    const [B, T] = ids.shape;
    const mask = attentionMask === undefined ? undefined : this.checkMask(attentionMask, B, T);
    return tf.tidy(() => {
      const idsT = isTensor(inputIds) && inputIds.dtype === 'int32' ? inputIds : tf.tensor2d(ids.data, [B, T], 'int32');
      const maskT = mask === undefined ? tf.ones([B, T], 'float32') : tf.tensor2d(mask, [B, T], 'int32');
      return distilBertForward(this.params, this.config, idsT, maskT as tf.Tensor2D, training);
    });
  }

  /**
   * Frozen mode with a feature cache: like {@link forward}, but each example's features (its first n
   * positions, n = last attended position + 1) are read from the cache when present and valid, and
   * computed and stored otherwise. A corrupt entry is detected (size, header, ids, SHA-256) and recomputed.
   */
  async forwardCached(inputIds: Ids2D, attentionMask?: Ids2D): Promise<CachedForwardResult> {
    this.checkAlive();
    const cache = this.featureCache;
    if (cache === undefined || this.mode !== 'frozen') {
      throw new DistilBertError(
        'NO_FEATURE_CACHE',
        'forwardCached needs an encoder loaded with mode: "frozen" and the featureCache option (e.g. featureCache: true)',
      );
    }
    // Tensors are read with await data(), so that this path works on every backend (webgpu under Node included).
    const { data: ids, shape } = this.checkIds(await hostIds(inputIds, 'inputIds'));
    const [B, T] = shape;
    const maskIn = attentionMask === undefined ? undefined : await hostIds(attentionMask, 'attentionMask');
    const mask = maskIn === undefined ? new Int32Array(B * T).fill(1) : this.checkMask(maskIn, B, T);
    const d = this.config.dim;
    const rows = Array.from({ length: B }, (_, b) => {
      let n = 0;
      for (let t = 0; t < T; t++) if (mask[b * T + t] !== 0) n = t + 1;
      return { ids: ids.slice(b * T, b * T + n), mask: mask.slice(b * T, b * T + n) };
    });
    const found = await Promise.all(rows.map((r) => cache.lookup(r.ids, r.mask)));
    const out = new Float32Array(B * T * d);
    const todo: number[] = [];
    let hits = 0;
    let corrupt = 0;
    found.forEach((f, b) => {
      if (f.status === 'hit') {
        out.set(f.features, b * T * d);
        hits++;
      } else {
        if (f.status === 'corrupt') corrupt++;
        todo.push(b);
      }
    });
    const computable = todo.filter((b) => (rows[b] as { ids: Int32Array }).ids.length > 0);
    if (computable.length > 0) {
      const Tm = Math.max(...computable.map((b) => (rows[b] as { ids: Int32Array }).ids.length));
      const subIds = new Int32Array(computable.length * Tm);
      const subMask = new Int32Array(computable.length * Tm);
      computable.forEach((b, i) => {
        const r = rows[b] as { ids: Int32Array; mask: Int32Array };
        subIds.set(r.ids, i * Tm);
        subMask.set(r.mask, i * Tm);
      });
      const feats = this.forward(
        { data: subIds, shape: [computable.length, Tm] },
        { data: subMask, shape: [computable.length, Tm] },
      );
      const values = (await feats.data()) as Float32Array;
      feats.dispose();
      computable.forEach((b, i) =>
        out.set(values.subarray(i * Tm * d, (i * Tm + (rows[b] as { ids: Int32Array }).ids.length) * d), b * T * d),
      );
    }
    await Promise.all(
      todo.map((b) => {
        const r = rows[b] as { ids: Int32Array; mask: Int32Array };
        return cache.store({ ids: r.ids, mask: r.mask, features: out.slice(b * T * d, (b * T + r.ids.length) * d) });
      }),
    );
    return { lastHiddenState: tf.tensor3d(out, [B, T, d]), hits, misses: todo.length - corrupt, corrupt };
  }

  /** The encoder's weights in the HF layout and names (no prefix), as new tensors the caller disposes. */
  stateDict(): Map<string, tf.Tensor> {
    this.checkAlive();
    const out = new Map<string, tf.Tensor>();
    for (const [name, t] of this.named)
      out.set(
        name,
        tf.tidy(() =>
          t.rank === 2 &&
          name !== 'embeddings.word_embeddings.weight' &&
          name !== 'embeddings.position_embeddings.weight'
            ? tf.transpose(t)
            : tf.clone(t),
        ),
      );
    return out;
  }

  /** Frees every weight tensor or variable; the encoder cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const t of this.named.values()) t.dispose();
    this.named.clear();
  }

  private checkAlive(): void {
    if (this.disposed)
      throw new DistilBertError('DISPOSED', 'this DistilBertEncoder was disposed; load the model again');
  }

  private checkIds(input: Ids2D): IdsArray {
    const { data, shape } = toArray(input, 'inputIds');
    const [, T] = shape;
    if (T > this.config.maxPositionEmbeddings) {
      throw new DistilBertError(
        'INVALID_INPUT',
        `inputIds has ${T} tokens per example, more than max_position_embeddings = ${this.config.maxPositionEmbeddings}: truncate the input (e.g. truncation: { maxLength: ${this.config.maxPositionEmbeddings} })`,
      );
    }
    const V = this.config.vocabSize;
    for (let i = 0; i < data.length; i++) {
      const v = data[i] as number;
      if (!(v >= 0 && v < V))
        throw new DistilBertError(
          'INVALID_INPUT',
          `inputIds holds ${v} at flat index ${i}; token ids must be integers in [0, ${V}) (vocab_size)`,
        );
    }
    return { data, shape };
  }

  private checkMask(input: Ids2D, B: number, T: number): Int32Array {
    const { data, shape } = toArray(input, 'attentionMask');
    if (shape[0] !== B || shape[1] !== T)
      throw new DistilBertError(
        'INVALID_INPUT',
        `attentionMask has shape [${shape.join(', ')}] but inputIds has [${B}, ${T}]`,
      );
    for (let i = 0; i < data.length; i++) {
      if (data[i] !== 0 && data[i] !== 1)
        throw new DistilBertError(
          'INVALID_INPUT',
          `attentionMask holds ${data[i]} at flat index ${i}; it must hold 0 (padding) or 1 (token)`,
        );
    }
    return data;
  }
}

function isTensor(x: Ids2D): x is tf.Tensor2D {
  return x instanceof tf.Tensor;
}

function toArray(input: Ids2D, what: string): IdsArray {
  let data: Int32Array;
  let B: number;
  let T: number;
  if (isTensor(input)) {
    if (input.rank !== 2)
      throw new DistilBertError('INVALID_INPUT', `${what} must have shape [B, T], got [${input.shape.join(', ')}]`);
    [B, T] = input.shape;
    data = integerIds(readSync(input, what), what);
  } else {
    [B, T] = input.shape;
    if (!(input.data instanceof Int32Array))
      throw new DistilBertError('INVALID_INPUT', `${what}.data must be an Int32Array`);
    if (!Number.isInteger(B) || !Number.isInteger(T) || input.data.length !== B * T) {
      throw new DistilBertError(
        'INVALID_INPUT',
        `${what}: shape [${B}, ${T}] needs ${B * T} values, got ${input.data.length}`,
      );
    }
    data = input.data;
  }
  if (B < 1 || T < 1)
    throw new DistilBertError(
      'INVALID_INPUT',
      `${what} has shape [${B}, ${T}]; it needs at least one example and one token`,
    );
  return { data, shape: [B, T] };
}

/**
 * A tensor's values, read synchronously: {@link DistilBertEncoder.forward} is synchronous (it runs inside gradient
 * closures), and checks ids on the host. Backends that cannot read synchronously (webgpu under Node, once a tensor
 * lives on the GPU: "OffscreenCanvas is not defined") get an error that says what to pass instead.
 */
function readSync(input: tf.Tensor, what: string): tf.TypedArray {
  try {
    return input.dataSync<tf.NumericDataType>();
  } catch (err) {
    throw new DistilBertError(
      'INVALID_INPUT',
      `${what}: the '${tf.getBackend()}' backend cannot read this tensor back synchronously ` +
        `(${(err as Error).message}); pass { data: Int32Array, shape: [B, T] } instead (checked on the host, no ` +
        'read-back), or use forwardCached, which reads tensors with await data()',
    );
  }
}

/** A tensor's values as host ids, read with `await data()` (works on every backend, webgpu included). */
async function hostIds(input: Ids2D, what: string): Promise<Ids2D> {
  if (!isTensor(input)) return input;
  if (input.rank !== 2)
    throw new DistilBertError('INVALID_INPUT', `${what} must have shape [B, T], got [${input.shape.join(', ')}]`);
  const [B, T] = input.shape;
  return { data: integerIds(await input.data<tf.NumericDataType>(), what), shape: [B, T] };
}

/** Values as int32 ids, or an error naming the first one that is not an integer. */
function integerIds(values: tf.TypedArray, what: string): Int32Array {
  if (values instanceof Int32Array) return values;
  const data = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = Number(values[i]);
    if (!Number.isInteger(v))
      throw new DistilBertError(
        'INVALID_INPUT',
        `${what} holds ${v} at flat index ${i}; it must hold integers (use an int32 tensor)`,
      );
    data[i] = v;
  }
  return data;
}

// Shared skeleton of the language models: token + position embeddings, N blocks, tied output head.
import * as tf from '@tensorflow/tfjs-core';
import { validateModelConfig, type ModelConfig } from '../config/model-config.js';
import { LN_EPS } from '../layers/block-parts.js';
import { dropout, embeddingLookup, layerNorm, tiedHead } from '../ops/ops.js';
import { AdaptiveSoftmaxHead } from '../heads/adaptive-head.js';
import { chunkedLmLoss } from '../loss/chunked-loss.js';
import { tokenNll } from '../loss/loss.js';
import { INIT_STD, tfjsSeed, type NamedParam, type ParamLayer } from '../layers/param-layer.js';
import { transposeFlagsAreFree } from '../backend/products.js';

/** Options of a forward pass. */
export interface ForwardOptions {
  /** Apply dropout (default false). */
  training?: boolean;
}

/** Options when building a model. */
export interface CreateModelOptions {
  /** Seed of every N(0, 0.02) init: two models built with one seed are identical. Unseeded if absent. */
  seed?: number;
}

/** What every language model of this package offers (GrassmannLM, TransformerLM). */
export interface LanguageModel {
  readonly config: ModelConfig;
  /** Logits [B, L, V] of int32 token ids [B, L], L ≤ maxLen. */
  apply(inputIds: tf.Tensor2D, opts?: ForwardOptions): tf.Tensor3D;
  /** Same as {@link LanguageModel.apply}. */
  forward(inputIds: tf.Tensor2D, opts?: ForwardOptions): tf.Tensor3D;
  /** Final hidden states [B, L, d] (the head's input): apply(x) = logits(hidden(x)). */
  hidden(inputIds: tf.Tensor2D, opts?: ForwardOptions): tf.Tensor3D;
  /** The output head: [B, L, d] → logits [B, L, V] (for an adaptive head, log-probabilities). */
  logits(x: tf.Tensor3D): tf.Tensor3D;
  /**
   * Mean next-token NLL of hidden states [B, L, d] against targets [B, L] (int32 tensor or host ids), without the
   * full [B·L, V] logits where the head allows (the tied head in row chunks, the adaptive head by cluster).
   */
  headLoss(hidden: tf.Tensor3D, targets: tf.Tensor2D | Int32Array): tf.Scalar;
  /** −log p(target) of every position, [B, L, d] and host ids [B·L] → [B·L] (row b·L + t), no gradient needed. */
  headNll(hidden: tf.Tensor3D, targets: Int32Array): tf.Tensor1D;
  /** tok_emb [V, d], the input embedding, also the head's weight when config.head is 'tied' (not a copy). */
  readonly tokenEmbedding: tf.Variable<tf.Rank.R2>;
  trainableVariables(): tf.Variable[];
  /** New tensors (the caller disposes) under PyTorch names, linear weights in nn.Linear's [out, in]. */
  stateDict(): Map<string, tf.Tensor>;
  /** Check every name, shape and dtype against this model, then assign (transposing linear weights). */
  loadStateDict(dict: Map<string, tf.Tensor>): void;
  dispose(): void;
}

/** A state dict that does not fit the model: names the tensor and both shapes. */
export class StateDictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateDictError';
  }
}

/**
 * Refuse token ids outside [0, vocabSize): call it once where ids enter (a tokenizer's output, a data set, a
 * prompt), not in the forward pass. ids: a JS array or typed array (the values, no device read).
 */
export function checkTokenIds(ids: ArrayLike<number>, vocabSize: number): void {
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k] as number;
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new RangeError(`token id ${id} at flat position ${k} is outside [0, vocabSize = ${vocabSize})`);
    }
  }
}

/** The state-dict name of an adaptive head's vocabulary order (a buffer, not a parameter). */
const ADAPTIVE_ORDER = 'adaptive.order';

/**
 * A tensor's values read synchronously, where the API must stay synchronous. tfjs-backend-webgpu under Node cannot
 * read a tensor whose values live on the GPU this way ("OffscreenCanvas is not defined"): the error names the
 * tensor and what to do.
 */
function readSync(t: tf.Tensor, what: string): tf.TypedArray {
  try {
    return t.dataSync<tf.NumericDataType>();
  } catch (err) {
    throw new Error(
      `${what}: the '${tf.getBackend()}' backend cannot read this tensor synchronously (${(err as Error).message}); ` +
        'pass host values (an Int32Array), or read the tensor first with await tensor.data()',
    );
  }
}

/** Internal [in, out] ↔ PyTorch [out, in] for linear weights. */
function torchShape(p: NamedParam): number[] {
  const s = p.variable.shape;
  return p.linear ? [s[1] as number, s[0]] : [...s];
}

/** A variable holding `init`'s values; `init` itself is disposed (tf.variable keeps its own reference). */
function ownedVariable<R extends tf.Rank>(init: tf.Tensor<R>): tf.Variable<R> {
  const variable = tf.variable(init);
  init.dispose();
  return variable;
}

/**
 * Token + position embeddings → blocks → (ln_f if pre-LN) → head: logits = h · tok_embᵀ (tied, the default), or an
 * adaptive softmax's log-probabilities (config.head 'adaptive', see AdaptiveSoftmaxHead).
 */
export abstract class LanguageModelBase implements LanguageModel {
  readonly config: ModelConfig;
  protected readonly tokEmb: tf.Variable<tf.Rank.R2>; // [V, d]
  protected readonly posEmb: tf.Variable<tf.Rank.R2>; // [L, d]
  /** The N blocks, in order (GrassmannBlock or TransformerBlock). */
  readonly blocks: readonly ParamLayer[];
  protected readonly lnF: { weight: tf.Variable; bias: tf.Variable } | null;
  /** The adaptive softmax head, or null for the tied head. */
  protected readonly adaptive: AdaptiveSoftmaxHead | null;
  private disposed = false;

  protected constructor(
    config: ModelConfig,
    options: CreateModelOptions,
    makeBlock: (i: number, seed: number | undefined) => ParamLayer,
  ) {
    this.config = validateModelConfig(config);
    const { vocabSize: V, dModel: d, maxLen: L, nLayers } = this.config;
    const seed = options.seed;
    if (seed !== undefined && !Number.isInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`);
    this.tokEmb = ownedVariable(tf.randomNormal([V, d], 0, INIT_STD, 'float32', tfjsSeed(seed)));
    this.posEmb = ownedVariable(tf.randomNormal([L, d], 0, INIT_STD, 'float32', tfjsSeed(seed, 1)));
    this.blocks = Array.from({ length: nLayers }, (_, i) => {
      const block = makeBlock(i, seed === undefined ? undefined : seed + 100 * (i + 1));
      tf.tidy(() => block.apply(tf.zeros([1, 1, d])) as tf.Tensor); // builds the weights (and lets Layer.dispose work)
      return block;
    });
    this.lnF =
      this.config.norm === 'pre' ? { weight: ownedVariable(tf.ones([d])), bias: ownedVariable(tf.zeros([d])) } : null;
    this.adaptive =
      this.config.head === 'adaptive' ? new AdaptiveSoftmaxHead(d, V, this.config.cutoffs ?? [], seed) : null;
  }

  apply(inputIds: tf.Tensor2D, opts: ForwardOptions = {}): tf.Tensor3D {
    return tf.tidy(() => this.logits(this.hidden(inputIds, opts))); // [B, L, V]
  }

  /**
   * Final hidden states [B, L, d] of int32 ids [B, L]: ln_f?(Block_N(…Block_1(embed(ids)))), the input of the
   * tied head. A loss can project them to the vocabulary in chunks (logits = hidden · tok_embᵀ).
   */
  hidden(inputIds: tf.Tensor2D, opts: ForwardOptions = {}): tf.Tensor3D {
    const training = opts.training === true;
    return tf.tidy(() => {
      let x = this.embed(inputIds, opts); // [B, L, d]
      for (const block of this.blocks) x = block.apply(x, { training }) as tf.Tensor3D; // [B, L, d]
      return this.finalNorm(x);
    });
  }

  /**
   * Dropout(tok_emb[x] + pos_emb[t0 + t]) [B, L, d] of int32 ids [B, L] at positions t0 … t0 + L − 1
   * (t0 = opts.startPosition, default 0); checks t0 + L against maxLen. The ids are not read back here (that
   * would be a device-to-host sync on every forward pass of a GPU backend): check them once where they enter,
   * with {@link checkTokenIds} — an out-of-range id reads a garbage row on wasm instead of failing.
   */
  embed(inputIds: tf.Tensor2D, opts: ForwardOptions & { startPosition?: number } = {}): tf.Tensor3D {
    if (this.disposed) throw new Error('this model has been disposed');
    const { maxLen, dModel: d, dropout: rate } = this.config;
    if (inputIds.rank !== 2 || inputIds.dtype !== 'int32') {
      throw new TypeError(
        `inputIds must be an int32 tensor [B, L], got ${inputIds.dtype} [${inputIds.shape.join(', ')}]`,
      );
    }
    const [, L] = inputIds.shape;
    const t0 = opts.startPosition ?? 0;
    if (!Number.isInteger(t0) || t0 < 0) throw new RangeError(`startPosition must be an integer >= 0, got ${t0}`);
    if (L < 1 || t0 + L > maxLen) {
      throw new RangeError(`sequence length ${L} at start position ${t0} must fit in [1, maxLen = ${maxLen}]`);
    }
    return tf.tidy(() => {
      const pos = tf.reshape(tf.slice(this.posEmb, [t0, 0], [L, d]), [1, L, d]); // [1, L, d]
      // [B, L, d]
      return dropout(tf.add<tf.Tensor3D>(embeddingLookup(this.tokEmb, inputIds), pos), rate, opts.training === true);
    });
  }

  /** ln_f(x) for pre-LN models, x itself for post-LN ones: [B, L, d] → [B, L, d]. */
  finalNorm(x: tf.Tensor3D): tf.Tensor3D {
    return this.lnF === null ? x : (layerNorm(x, this.lnF.weight, this.lnF.bias, LN_EPS) as tf.Tensor3D);
  }

  /** The head, [B, L, d] → [B, L, V]: tied logits = x · tok_embᵀ, or the adaptive head's log p(w | x). */
  logits(x: tf.Tensor3D): tf.Tensor3D {
    const [B, L, d] = x.shape;
    const head = this.adaptive;
    return tf.tidy(() => {
      const rows = tf.reshape<tf.Rank.R2>(x, [B * L, d]); // [B·L, d]
      const out = head === null ? tiedHead(rows, this.tokEmb) : head.logProbs(rows); // [B·L, V]
      return tf.reshape(out, [B, L, this.config.vocabSize]);
    });
  }

  headNll(hidden: tf.Tensor3D, targets: Int32Array): tf.Tensor1D {
    const [B, L, d] = hidden.shape;
    if (targets.length !== B * L) {
      throw new RangeError(`headNll expects ${B * L} targets for hidden [${B}, ${L}, ${d}], got ${targets.length}`);
    }
    const head = this.adaptive;
    return tf.tidy(() => {
      const rows = tf.reshape<tf.Rank.R2>(hidden, [B * L, d]); // [B·L, d]
      if (head !== null) return head.nll(rows, targets); // by cluster, no [B·L, V] table
      return tokenNll(tiedHead(rows, this.tokEmb), tf.tensor1d(targets, 'int32')); // [B·L, V] logits → [B·L]
    });
  }

  headLoss(hidden: tf.Tensor3D, targets: tf.Tensor2D | Int32Array): tf.Scalar {
    const [B, L, d] = hidden.shape;
    const count = targets instanceof Int32Array ? targets.length : targets.size;
    if (count !== B * L || (!(targets instanceof Int32Array) && targets.rank !== 2)) {
      const got = targets instanceof Int32Array ? `${count} ids` : `a tensor [${targets.shape.join(', ')}]`;
      throw new RangeError(`headLoss expects targets [B, L] = [${B}, ${L}] for hidden [${B}, ${L}, ${d}], got ${got}`);
    }
    const head = this.adaptive;
    if (head === null) {
      return tf.tidy(() => {
        const t = targets instanceof Int32Array ? tf.tensor2d(targets, [B, L], 'int32') : targets;
        return chunkedLmLoss(hidden, this.tokEmb, t);
      });
    }
    // The adaptive head sorts rows by cluster on the host; a tensor is read back once (cheap on cpu and wasm). This
    // runs inside gradient closures, so it stays synchronous: webgpu under Node cannot read a GPU tensor that way,
    // and the error says to pass host ids (as the trainers do).
    const ids = targets instanceof Int32Array ? targets : (readSync(targets, 'headLoss targets') as Int32Array);
    return tf.tidy(() => head.loss(tf.reshape(hidden, [B * L, d]), ids));
  }

  /**
   * Logits of the last position only, [B, L, d] → [B, V] (adaptive head: its log-probabilities). Tied, computed
   * as (E·h_lastᵀ)ᵀ: the same dot products as
   * {@link LanguageModelBase.logits}, but the [V, d] table is read as it is stored, where x·Eᵀ transposes it first
   * (a copy of V·d floats per call, 31 MB at paper sizes, which would dominate a decoding step).
   */
  lastLogits(x: tf.Tensor3D): tf.Tensor2D {
    const [B, L, d] = x.shape;
    const head = this.adaptive;
    return tf.tidy(() => {
      const last = tf.reshape<tf.Rank.R2>(tf.slice(x, [0, L - 1, 0], [B, 1, d]), [B, d]); // [B, d]
      if (head !== null) return head.logProbs(last); // [B, V]
      if (transposeFlagsAreFree()) return tf.matMul<tf.Tensor2D>(last, this.tokEmb, false, true); // [B, V]
      return tf.transpose(tf.matMul(this.tokEmb, tf.transpose(last))) as tf.Tensor2D; // [V, d]·[d, B] = [V, B] → [B, V]
    });
  }

  /** The token embedding table tok_emb [V, d] (also the head's weight when tied). Not a copy: do not dispose. */
  get tokenEmbedding(): tf.Variable<tf.Rank.R2> {
    return this.tokEmb;
  }

  /** The position embedding table pos_emb [maxLen, d]. Not a copy: do not dispose. */
  get positionEmbedding(): tf.Variable<tf.Rank.R2> {
    return this.posEmb;
  }

  forward(inputIds: tf.Tensor2D, opts: ForwardOptions = {}): tf.Tensor3D {
    return this.apply(inputIds, opts);
  }

  /** Every parameter under its PyTorch name, in a fixed order (linear weights in the internal [in, out] layout). */
  namedParams(): NamedParam[] {
    const out: NamedParam[] = [
      { name: 'tok_emb.weight', variable: this.tokEmb, linear: false },
      { name: 'pos_emb.weight', variable: this.posEmb, linear: false },
    ];
    this.blocks.forEach((block, i) => {
      for (const p of block.namedParams()) out.push({ ...p, name: `blocks.${i}.${p.name}` });
    });
    if (this.lnF !== null) {
      out.push({ name: 'ln_f.weight', variable: this.lnF.weight, linear: false });
      out.push({ name: 'ln_f.bias', variable: this.lnF.bias, linear: false });
    }
    if (this.adaptive !== null) out.push(...this.adaptive.namedParams());
    return out;
  }

  trainableVariables(): tf.Variable[] {
    return this.namedParams().map((p) => p.variable);
  }

  /** Total number of trainable scalars (equals countParams(config)). */
  numParams(): number {
    return this.namedParams().reduce((n, p) => n + p.variable.size, 0);
  }

  /** The adaptive softmax head (its vocabulary order is set here), or null for the tied head. */
  get adaptiveHead(): AdaptiveSoftmaxHead | null {
    return this.adaptive;
  }

  /** Parameters, then buffers (an adaptive head's `adaptive.order`): everything a checkpoint must hold. */
  stateDict(): Map<string, tf.Tensor> {
    const dict = new Map<string, tf.Tensor>(
      this.namedParams().map((p) => [p.name, p.linear ? tf.transpose(p.variable) : tf.clone(p.variable)]),
    );
    if (this.adaptive !== null) dict.set(ADAPTIVE_ORDER, this.adaptive.orderTensor());
    return dict;
  }

  loadStateDict(dict: Map<string, tf.Tensor>): void {
    const params = this.namedParams();
    for (const p of params) {
      const t = dict.get(p.name);
      const want = torchShape(p);
      if (t === undefined)
        throw new StateDictError(`state dict is missing '${p.name}' (expected shape [${want.join(', ')}])`);
      if (t.dtype !== 'float32') throw new StateDictError(`'${p.name}' has dtype ${t.dtype}, expected float32`);
      if (t.shape.length !== want.length || t.shape.some((s, k) => s !== want[k])) {
        throw new StateDictError(`'${p.name}' has shape [${t.shape.join(', ')}], expected [${want.join(', ')}]`);
      }
    }
    const known = new Set(params.map((p) => p.name));
    let order: Int32Array | null = null;
    if (this.adaptive !== null) {
      const t = dict.get(ADAPTIVE_ORDER);
      const V = this.config.vocabSize;
      if (t === undefined)
        throw new StateDictError(`state dict is missing '${ADAPTIVE_ORDER}' (expected shape [${V}])`);
      if (t.dtype !== 'float32' || t.shape.length !== 1 || t.shape[0] !== V) {
        throw new StateDictError(`'${ADAPTIVE_ORDER}' has ${t.dtype} [${t.shape.join(', ')}], expected float32 [${V}]`);
      }
      // Read once at load time (loadStateDict is synchronous); checked as a permutation below. Tensors loaded from a
      // file keep their values on the host until first used, so this works on webgpu too.
      order = Int32Array.from(readSync(t, `'${ADAPTIVE_ORDER}'`));
      known.add(ADAPTIVE_ORDER);
    }
    for (const [name, t] of dict) {
      if (!known.has(name))
        throw new StateDictError(`unexpected tensor '${name}' (shape [${t.shape.join(', ')}]) in state dict`);
    }
    if (order !== null) {
      try {
        this.adaptive?.setVocabOrder(order);
      } catch (err) {
        throw new StateDictError(`'${ADAPTIVE_ORDER}': ${(err as Error).message}`);
      }
    }
    tf.tidy(() => {
      for (const p of params) {
        const t = dict.get(p.name) as tf.Tensor;
        p.variable.assign(p.linear ? tf.transpose(t) : t);
      }
    });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.tokEmb.dispose();
    this.posEmb.dispose();
    for (const block of this.blocks) block.dispose();
    this.lnF?.weight.dispose();
    this.lnF?.bias.dispose();
    this.adaptive?.dispose();
  }
}

// AdamW (Loshchilov & Hutter 2019) with decoupled weight decay; moments held as tensors for checkpoints.
import * as tf from '@tensorflow/tfjs-core';
import { nativeVectorKernels } from '@grassflow/gpu-layers';
import { float32Views, ownStorage } from './storage.js';

/** A trainable variable under a stable name (e.g. its PyTorch state-dict name). */
export interface NamedVariable {
  name: string;
  variable: tf.Variable;
}

/** Options of {@link AdamW}. */
export interface AdamWOptions {
  /** β₁ (default 0.9). */
  beta1?: number;
  /** β₂ (default 0.98: the middle of the reproductions' 0.98–0.999, steadier early on small batches). */
  beta2?: number;
  /** ε added to √v̂ (default 1e-8, as PyTorch). */
  epsilon?: number;
  /** Decoupled weight decay λ (default 0.01, as the reproductions). */
  weightDecay?: number;
  /** Which parameters decay (default {@link defaultDecayFilter}: matrices only). */
  decay?: (p: NamedVariable) => boolean;
  /**
   * Update each parameter in one pass over its storage where the backend keeps tensors in memory JavaScript can
   * write (cpu, wasm): one read of θ, m, v, g and one write of θ, m, v per element, instead of ≈ 15 tf ops (default
   * true; false: tf ops on every backend, as on webgpu and tensorflow). Both compute the same update.
   */
  onePass?: boolean;
}

/** Options of one {@link AdamW.apply}. */
export interface AdamWApplyOptions {
  /** Multiply every gradient by this factor first (gradient clipping's factor; default 1). */
  gradScale?: number;
}

/** Serialisable optimizer state besides the moment tensors. */
export interface AdamWState {
  /** Updates applied so far (t of the bias correction). */
  step: number;
}

/**
 * Default weight-decay rule: decay weight matrices (rank ≥ 2) except embedding tables; never decay biases,
 * LayerNorm gains/shifts (rank 1) or embeddings. Pass `{ decayEmbeddings: true }` to decay embeddings too.
 */
export function defaultDecayFilter(opts: { decayEmbeddings?: boolean } = {}): (p: NamedVariable) => boolean {
  return (p) =>
    p.variable.rank >= 2 &&
    (opts.decayEmbeddings === true || !/(^|\.)(tok_emb|pos_emb|embeddings?)(\.|$)/.test(p.name));
}

/**
 * AdamW, PyTorch's form. For each parameter θ with gradient g at update t = 1, 2, …:
 *   θ ← θ · (1 − η·λ)                       (decoupled decay, only where `decay(p)`)
 *   m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²
 *   θ ← θ − η · (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε)
 * The learning rate η is passed to each {@link AdamW.apply}, so any schedule can drive it.
 */
export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  readonly weightDecay: number;
  readonly params: readonly NamedVariable[];
  readonly onePass: boolean;
  private readonly decays: boolean[];
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];
  private t = 0;

  constructor(params: readonly NamedVariable[], opts: AdamWOptions = {}) {
    this.beta1 = opts.beta1 ?? 0.9;
    this.beta2 = opts.beta2 ?? 0.98;
    this.epsilon = opts.epsilon ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0.01;
    this.onePass = opts.onePass ?? true;
    for (const [k, v] of [
      ['beta1', this.beta1],
      ['beta2', this.beta2],
    ] as const) {
      if (!(v >= 0 && v < 1)) throw new RangeError(`AdamW ${k} must be in [0, 1), got ${v}`);
    }
    if (!(this.epsilon > 0)) throw new RangeError(`AdamW epsilon must be > 0, got ${this.epsilon}`);
    if (!(this.weightDecay >= 0) || !Number.isFinite(this.weightDecay))
      throw new RangeError(`AdamW weightDecay must be a finite number >= 0, got ${this.weightDecay}`);
    const names = new Set<string>();
    for (const p of params) {
      if (names.has(p.name)) throw new Error(`AdamW: parameter name '${p.name}' is given twice`);
      names.add(p.name);
    }
    this.params = [...params];
    const decay = opts.decay ?? defaultDecayFilter();
    this.decays = this.params.map((p) => decay(p));
    // tidy frees the zeros; the variables keep their own reference to the data.
    this.m = this.params.map((p) => tf.tidy(() => tf.variable(tf.zerosLike(p.variable), false)));
    this.v = this.params.map((p) => tf.tidy(() => tf.variable(tf.zerosLike(p.variable), false)));
  }

  /** Updates applied so far. */
  get step(): number {
    return this.t;
  }

  /** Names of the parameters that get weight decay. */
  decayedNames(): string[] {
    return this.params.filter((_, i) => this.decays[i]).map((p) => p.name);
  }

  /**
   * One update with learning rate `lr`; `grads` maps each parameter's variable name (tf.Variable.name) to its
   * gradient, which is first multiplied by `gradScale` (clipping's factor).
   */
  apply(grads: tf.NamedTensorMap, lr: number, opts: AdamWApplyOptions = {}): void {
    if (!(lr >= 0) || !Number.isFinite(lr))
      throw new RangeError(`learning rate must be a finite number >= 0, got ${lr}`);
    const scale = opts.gradScale ?? 1;
    if (!(scale >= 0) || !Number.isFinite(scale))
      throw new RangeError(`gradScale must be a finite number >= 0, got ${scale}`);
    const gs = this.params.map((p) => {
      const g = grads[p.variable.name];
      if (g === undefined)
        throw new Error(`AdamW: no gradient for parameter '${p.name}' (variable ${p.variable.name})`);
      if (g.shape.join(',') !== p.variable.shape.join(','))
        throw new Error(
          `AdamW: the gradient of '${p.name}' has shape [${g.shape.join(', ')}] but the parameter has [${p.variable.shape.join(', ')}]`,
        );
      return g;
    });
    this.t += 1;
    if (!(this.onePass && this.applyOnePass(gs, lr, scale))) this.applyOps(gs, lr, scale);
  }

  /** The update as tf ops (every backend). */
  private applyOps(grads: readonly tf.Tensor[], lr: number, scale: number): void {
    const { beta1: b1, beta2: b2, epsilon: eps } = this;
    const bc1 = 1 - b1 ** this.t;
    const bc2 = 1 - b2 ** this.t;
    tf.tidy(() => {
      this.params.forEach((p, i) => {
        const g = scale === 1 ? (grads[i] as tf.Tensor) : tf.mul(grads[i] as tf.Tensor, scale);
        const m = this.m[i] as tf.Variable;
        const v = this.v[i] as tf.Variable;
        const mNew = tf.add(tf.mul(m, b1), tf.mul(g, 1 - b1));
        const vNew = tf.add(tf.mul(v, b2), tf.mul(tf.square(g), 1 - b2));
        m.assign(mNew);
        v.assign(vNew);
        const theta =
          this.decays[i] === true && this.weightDecay > 0 ? tf.mul(p.variable, 1 - lr * this.weightDecay) : p.variable;
        const update = tf.div(tf.div(mNew, bc1), tf.add(tf.sqrt(tf.div(vNew, bc2)), eps));
        p.variable.assign(tf.sub(theta, tf.mul(update, lr)));
      });
    });
  }

  /**
   * The same update in one loop per parameter over its storage, in float64 arithmetic rounded to float32 on each
   * store (the loop in native code where gpu-layers' native kernels are loaded). Returns false (having changed nothing) where the backend's storage cannot be written from JavaScript.
   */
  private applyOnePass(grads: readonly tf.Tensor[], lr: number, scale: number): boolean {
    const variables = this.params.map((p) => p.variable);
    // m and v are written in place, so first each gets its own storage (a no-op after the first step). θ is written
    // into new tensors instead: wasm's matrix products cache packed weights by tensor id, so a weight changed in
    // place would be multiplied with its old packed copy.
    ownStorage([...this.m, ...this.v]);
    const next = variables.map((v) => tf.zerosLike(v));
    const views = float32Views([...variables, ...this.m, ...this.v, ...grads, ...next]); // no allocation from here on
    if (views === null) {
      tf.dispose(next);
      return false;
    }
    const n = this.params.length;
    const { beta1: b1, beta2: b2, epsilon: eps } = this;
    const stepSize = lr / (1 - b1 ** this.t); // η / (1 − β₁ᵗ)
    const invBc2 = 1 / (1 - b2 ** this.t); // 1 / (1 − β₂ᵗ)
    const a1 = 1 - b1;
    const a2 = 1 - b2;
    const native = nativeVectorKernels(); // the same loop in native code, on every core, where it is loaded
    for (let i = 0; i < n; i++) {
      const theta = views[i] as Float32Array;
      const m = views[n + i] as Float32Array;
      const v = views[2 * n + i] as Float32Array;
      const g = views[3 * n + i] as Float32Array;
      const out = views[4 * n + i] as Float32Array;
      const keep = this.decays[i] === true && this.weightDecay > 0 ? 1 - lr * this.weightDecay : 1;
      if (native !== undefined) {
        native.adamw(theta, m, v, g, out, { beta1: b1, beta2: b2, stepSize, invBc2, epsilon: eps, keep, scale });
        continue;
      }
      for (let j = 0; j < theta.length; j++) {
        const gj = (g[j] as number) * scale;
        const mj = b1 * (m[j] as number) + a1 * gj;
        const vj = b2 * (v[j] as number) + a2 * gj * gj;
        m[j] = mj;
        v[j] = vj;
        out[j] = (theta[j] as number) * keep - (stepSize * mj) / (Math.sqrt(vj * invBc2) + eps);
      }
    }
    variables.forEach((v, i) => v.assign(next[i] as tf.Tensor));
    tf.dispose(next);
    return true;
  }

  /** The moments as new tensors named `adamw.m.<name>` / `adamw.v.<name>` (the caller disposes them). */
  stateTensors(): Map<string, tf.Tensor> {
    const out = new Map<string, tf.Tensor>();
    this.params.forEach((p, i) => {
      out.set(`adamw.m.${p.name}`, tf.clone(this.m[i] as tf.Variable));
      out.set(`adamw.v.${p.name}`, tf.clone(this.v[i] as tf.Variable));
    });
    return out;
  }

  /** The step count (store it beside {@link AdamW.stateTensors}). */
  get state(): AdamWState {
    return { step: this.t };
  }

  /** Restore moments and step; every moment must be present with its parameter's shape. */
  loadState(tensors: ReadonlyMap<string, tf.Tensor>, state: AdamWState): void {
    if (!Number.isInteger(state.step) || state.step < 0)
      throw new Error(`AdamW state: step must be an integer >= 0, got ${state.step}`);
    const checked = this.params.map((p) => {
      const pair = (['m', 'v'] as const).map((k) => {
        const name = `adamw.${k}.${p.name}`;
        const t = tensors.get(name);
        if (t === undefined)
          throw new Error(`AdamW state is missing '${name}': the checkpoint does not belong to this model`);
        if (t.shape.join(',') !== p.variable.shape.join(',')) {
          throw new Error(
            `AdamW state '${name}' has shape [${t.shape.join(', ')}] but the parameter has [${p.variable.shape.join(', ')}]`,
          );
        }
        return t;
      });
      return pair as [tf.Tensor, tf.Tensor];
    });
    checked.forEach(([m, v], i) => {
      (this.m[i] as tf.Variable).assign(m);
      (this.v[i] as tf.Variable).assign(v);
    });
    this.t = state.step;
  }

  dispose(): void {
    for (const t of [...this.m, ...this.v]) t.dispose();
  }
}

// The Grassmann–Plücker SNLI head (paper-notes §3): windowed, multi-head Plücker mixing over token features.
import * as tf from '@tensorflow/tfjs-core';
import {
  dropout,
  feedForward,
  gelu,
  grassmannMixing,
  layerNorm,
  linear,
  pluckerDim,
  postNormResidual,
  type GrassmannMixingWeights,
} from '@grassflow/gpu-layers';
import { headLayerParams, maskedMeanPool, PairHead, type HeadLayerParams } from './pair-features.js';
import type { ParamStore } from '@grassflow/training';

/**
 * Configuration of {@link GrassmannHead}. Defaults are the paper's head (paper-notes §3).
 *
 * Concretely (ours, where the paper is terse):
 * - "project to d_proj = 64", "width 256", "4 mixing heads": an input projection D → d = 256 whose output is
 *   read as H = 4 heads of d_proj = d/H = 64 channels; each head mixes only its own 64 channels, with its own
 *   reduction W_red (64 → r = 8), Plücker projection W_plu (C(8,2) = 28 → 64) and gate (128 → 64); 4 × 8 = 32
 *   reduced dimensions in all, the paper's r.
 * - "windows of 8 tokens with stride 8": the T tokens (T padded to a multiple of 8) are cut into
 *   non-overlapping windows of 8; inside a window each token is paired with every other token of the window
 *   (offsets 1…7: gpu-layers' `grassmannMixing` on [B·T/8, 8, d_proj]).
 *   A token is never paired with itself (p(z, z) = 0). The default direction is 'causal' inside the window (a token
 *   pairs with the earlier tokens of its window): with end padding zeroed after every layer, real tokens then pair only
 *   with real tokens, so predictions do not depend on the batch's padding. 'bidirectional' pairs all 7 others.
 */
export interface GrassmannHeadConfig {
  kind: 'grassmann';
  /** D: width of the backbone features. */
  inputDim: number;
  /** d: model width (paper 256). */
  dModel: number;
  /** H: mixing heads (paper 4); each owns d/H = d_proj channels. */
  nHeads: number;
  /**
   * r: reduced width of each head's Plücker pairs (ours: 8, C(8,2) = 28 coordinates; 4 heads × 8 = the paper's r = 32).
   */
  r: number;
  /** Tokens per window; windows do not overlap (stride = window; paper 8). */
  window: number;
  /** Mixing layers (paper 2). */
  nLayers: number;
  /** Feed-forward width (paper 512). */
  dFF: number;
  /** Dropout (paper 0.1). */
  dropout: number;
  /** ε of p̂ = p / sqrt(‖p‖² + ε²). */
  eps: number;
  /** 'bidirectional': a token pairs with every other token of its window; 'causal': only with the earlier ones. */
  direction: 'bidirectional' | 'causal';
}

/** The paper's head over features of width `inputDim`. */
export function grassmannHeadConfig(inputDim: number): GrassmannHeadConfig {
  return {
    kind: 'grassmann',
    inputDim,
    dModel: 256,
    nHeads: 4,
    r: 8,
    window: 8,
    nLayers: 2,
    dFF: 512,
    dropout: 0.1,
    eps: 1e-6,
    direction: 'causal',
  };
}

/** Analytic parameter count of a {@link GrassmannHead}. */
export function countGrassmannHead(c: GrassmannHeadConfig): number {
  const d = c.dModel;
  const dh = d / c.nHeads;
  const C = pluckerDim(c.r);
  const perHead = dh * c.r + c.r + (C * dh + dh) + (2 * dh * dh + dh); // W_red, W_plu, W_gate (+ biases)
  const perLayer = c.nHeads * perHead + 2 * d + (d * c.dFF + c.dFF + c.dFF * d + d) + 2 * d; // mixing, LN1, FFN, LN2
  const classifier = 4 * d * d + d + d * 3 + 3; // [u; v; |u−v|; u⊙v] → d → 3
  return c.inputDim * d + d + c.nLayers * perLayer + classifier;
}

function validate(c: GrassmannHeadConfig): void {
  for (const k of ['inputDim', 'dModel', 'nHeads', 'r', 'window', 'nLayers', 'dFF'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 1)
      throw new RangeError(`grassmann head: ${k} must be an integer >= 1, got ${c[k]}`);
  }
  if (c.dModel % c.nHeads !== 0)
    throw new RangeError(`grassmann head: dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}`);
  if (c.r < 2) throw new RangeError(`grassmann head: r must be >= 2 (Plücker coordinates of a 2-plane), got ${c.r}`);
  if (c.window < 2)
    throw new RangeError(`grassmann head: window must be >= 2 so that a token has a partner, got ${c.window}`);
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw new RangeError(`grassmann head: dropout must be in [0, 1), got ${c.dropout}`);
}

/** What {@link GrassmannHead.encode} can expose for inspection (tests): the first layer's Plücker inputs. */
export interface MixingProbe {
  /** Per head, the [B·T/w, w, d_proj] input of grassmannMixing in layer 0. */
  headInputs: tf.Tensor3D[];
}

/**
 * Siamese Grassmann–Plücker head. Per sentence (x [B, T, D], mask [B, T]):
 *   h = x·W_in + b_in                                   [B, T, d]
 *   per layer: h_mix = concat_k Mix_k(h_k)  (windowed Plücker mixing, head k on channels k·d_proj …)
 *              ĥ = Dropout(LN1(h_mix)); h = LN2(ĥ + Dropout(FFN(ĥ)))   (post-LN, as paper-notes §1.8)
 *   u = masked mean of h over real tokens                [B, d]
 * Pair: logits = W2 · Dropout(GELU(W1 [u; v; |u−v|; u⊙v] + b1)) + b2   [B, 3]
 */
export class GrassmannHead extends PairHead {
  readonly config: GrassmannHeadConfig;
  readonly params: ParamStore;
  private readonly inProj: { w: tf.Variable; b: tf.Variable };
  private readonly layers: Array<HeadLayerParams & { heads: GrassmannMixingWeights[] }> = [];
  private readonly cls1: { w: tf.Variable; b: tf.Variable };
  private readonly cls2: { w: tf.Variable; b: tf.Variable };

  constructor(config: GrassmannHeadConfig, params: ParamStore) {
    super();
    validate(config);
    this.config = { ...config };
    this.params = params;
    const { inputDim: D, dModel: d, nHeads: H, r, dFF } = config;
    const dh = d / H;
    const C = pluckerDim(r);
    this.inProj = params.linear('head.in_proj', D, d);
    for (let i = 0; i < config.nLayers; i++) {
      const heads: GrassmannMixingWeights[] = [];
      for (let k = 0; k < H; k++) {
        const p = `head.layers.${i}.mix.${k}`;
        const red = params.linear(`${p}.w_red`, dh, r); // [d_proj, r]
        const plu = params.linear(`${p}.w_plu`, C, dh); // [C(r,2), d_proj]
        const gate = params.linear(`${p}.w_gate`, 2 * dh, dh); // [2·d_proj, d_proj], rows h then g
        heads.push({
          wRed: red.w as tf.Tensor2D,
          bRed: red.b as tf.Tensor1D,
          wPlu: plu.w as tf.Tensor2D,
          bPlu: plu.b as tf.Tensor1D,
          wGate: gate.w as tf.Tensor2D,
          bGate: gate.b as tf.Tensor1D,
        });
      }
      this.layers.push({
        heads,
        ...headLayerParams(params, i, d, dFF),
      });
    }
    this.cls1 = params.linear('head.classifier.fc1', 4 * d, d);
    this.cls2 = params.linear('head.classifier.fc2', d, 3);
  }

  /** Windowed multi-head Plücker mixing of h [B, T, d] (T a multiple of the window) with layer `i`'s heads. */
  private mix(h: tf.Tensor3D, i: number, probe?: MixingProbe): tf.Tensor3D {
    const [B, T, d] = h.shape;
    const { nHeads: H, window: w, eps } = this.config;
    const dh = d / H;
    const offsets = Array.from({ length: w - 1 }, (_, k) => k + 1); // 1 … w−1: every other token of the window
    const layer = this.layers[i] as (typeof this.layers)[number];
    const parts = tf.split<tf.Tensor3D>(h, H, 2); // H × [B, T, d_proj]
    const mixed = parts.map((hk, k) => {
      const windows = tf.reshape<tf.Rank.R3>(hk, [(B * T) / w, w, dh]); // [B·T/w, w, d_proj]
      if (probe !== undefined && i === 0) probe.headInputs.push(tf.keep(windows));
      const out = grassmannMixing(windows, layer.heads[k] as GrassmannMixingWeights, {
        offsets,
        eps,
        direction: this.config.direction,
      }); // [B·T/w, w, d_proj]
      return tf.reshape<tf.Rank.R3>(out, [B, T, dh]);
    });
    return tf.concat<tf.Tensor3D>(mixed, 2); // [B, T, d]
  }

  /**
   * Sentence vectors u [B, d] from features x [B, T, D] and a 0/1 float mask [B, T]; T must be a multiple of the
   * window.
   */
  encode(x: tf.Tensor3D, mask: tf.Tensor2D, training: boolean, probe?: MixingProbe): tf.Tensor2D {
    const T = x.shape[1];
    if (T % this.config.window !== 0)
      throw new RangeError(
        `grassmann head: T = ${T} is not a multiple of the window ${this.config.window}; pad the batch`,
      );
    const p = this.config.dropout;
    return tf.tidy(() => {
      const m = tf.expandDims(mask, 2); // [B, T, 1]
      let h = tf.mul<tf.Tensor3D>(linear(x, this.inProj.w, this.inProj.b), m); // [B, T, d], padding zeroed
      this.layers.forEach((L, i) => {
        const hm = this.mix(h, i, probe); // [B, T, d]
        const hn = dropout(layerNorm(hm, L.ln1.g, L.ln1.b), p, training); // ĥ
        const ffn = postNormResidual(hn, (u) => feedForward(u, L), { gamma: L.ln2.g, beta: L.ln2.b }, p, training);
        h = tf.mul<tf.Tensor3D>(ffn, m); // [B, T, d], LN2(ĥ + Dropout(FFN(ĥ))) with padding zeroed
      });
      return maskedMeanPool(h, mask);
    });
  }

  /** Logits [B, 3] of the pair features [B, 4d]: a GELU MLP (4d → d → 3) with dropout. */
  protected classify(features: tf.Tensor2D, training: boolean): tf.Tensor2D {
    const z = gelu(linear(features, this.cls1.w, this.cls1.b)); // [B, d]
    return linear(dropout(z, this.config.dropout, training), this.cls2.w, this.cls2.b) as tf.Tensor2D; // [B, 3]
  }
}

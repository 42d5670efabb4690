// The DistilBERT forward pass (HF modeling_distilbert.py) on tfjs, over parameters in the internal layout.
//
// Dimensions: B batch, T tokens, d = dim, H = n_heads, dh = d/H, F = hidden_dim.
import * as tf from '@tensorflow/tfjs-core';
import { dropout, embeddingLookup, gelu, layerNorm, linear, matmul } from '@grassflow/gpu-layers';
import type { DistilBertConfig } from './config.js';

/** Smallest float32: HF fills masked attention scores with `torch.finfo(float32).min` before the softmax. */
export const FLOAT32_MIN = -3.4028234663852886e38;

/** A linear map in the internal layout: y = x·w + b with w [in, out] (the transpose of `nn.Linear.weight`). */
export interface LinearParams {
  readonly w: tf.Tensor2D;
  readonly b: tf.Tensor1D;
}

/** LayerNorm γ, β. */
export interface NormParams {
  readonly gamma: tf.Tensor1D;
  readonly beta: tf.Tensor1D;
}

/** One Transformer block of DistilBERT. */
export interface LayerParams {
  readonly q: LinearParams;
  readonly k: LinearParams;
  readonly v: LinearParams;
  readonly out: LinearParams;
  readonly saNorm: NormParams;
  readonly lin1: LinearParams;
  readonly lin2: LinearParams;
  readonly outNorm: NormParams;
}

/** All parameters of the encoder (tensors in frozen mode, variables in trainable mode). */
export interface EncoderParams {
  /** [V, d] */
  readonly wordEmbeddings: tf.Tensor2D;
  /** [P, d] */
  readonly positionEmbeddings: tf.Tensor2D;
  readonly embNorm: NormParams;
  readonly layers: readonly LayerParams[];
}

/** x·w + b on rows x [N, in]. */
function lin(x: tf.Tensor2D, p: LinearParams): tf.Tensor2D {
  return linear(x, p.w, p.b) as tf.Tensor2D;
}

function norm(x: tf.Tensor2D, p: NormParams, eps: number): tf.Tensor2D {
  return layerNorm(x, p.gamma, p.beta, eps) as tf.Tensor2D;
}

/**
 * Multi-head self-attention of one block on x [B·T, d]:
 * q, k, v = x·W_{q,k,v} + b, per head A = softmax(q·kᵀ/√dh with scores at keys where mask = 0 set to
 * the float32 minimum), context = A·v, output = context·W_out + b_out. `maskBias` [B, 1, 1, T] holds 0
 * (attend) or FLOAT32_MIN (masked): s + FLOAT32_MIN rounds to FLOAT32_MIN for any score, so the sum is
 * exactly HF's masked_fill.
 */
function attention(
  x: tf.Tensor2D,
  p: LayerParams,
  maskBias: tf.Tensor4D,
  B: number,
  T: number,
  config: DistilBertConfig,
  training: boolean,
): tf.Tensor2D {
  const H = config.nHeads;
  const dh = config.dim / H;
  // (B, H, T, dh)
  const heads = (t: tf.Tensor2D): tf.Tensor4D => tf.transpose(tf.reshape(t, [B, T, H, dh]), [0, 2, 1, 3]);
  const q = heads(tf.mul<tf.Tensor2D>(lin(x, p.q), 1 / Math.sqrt(dh))); // HF scales q before the product
  const k = heads(lin(x, p.k));
  const v = heads(lin(x, p.v));
  const scores = tf.add(matmul(q, tf.transpose(k, [0, 1, 3, 2])), maskBias); // (B, H, T, T)
  const weights = dropout(tf.softmax(scores), config.attentionDropout, training); // (B, H, T, T)
  const context = matmul(weights, v); // (B, H, T, dh)
  const merged = tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [B * T, config.dim]); // (B·T, d)
  return lin(merged as tf.Tensor2D, p.out);
}

/**
 * last_hidden_state of DistilBERT: h₀ = LN(E_word[ids] + E_pos[0..T)); per block
 * h' = LN_sa(Attn(h) + h), h = LN_out(W₂·act(W₁·h' + b₁) + b₂ + h'), LayerNorm ε 1e-12.
 * Dropout (trainable mode, `training` only) where HF has it: after the embedding LayerNorm
 * (`dropout`), on the attention weights (`attention_dropout`), after W₂ (`dropout`). ids int32 [B, T], mask [B, T]
 * of 0/1 (float32 or int32). Returns [B, T, d]; call inside tf.tidy.
 */
export function distilBertForward(
  params: EncoderParams,
  config: DistilBertConfig,
  ids: tf.Tensor2D,
  mask: tf.Tensor2D,
  training = false,
): tf.Tensor3D {
  const [B, T] = ids.shape;
  const d = config.dim;
  const eps = config.layerNormEps;
  const word = embeddingLookup(params.wordEmbeddings, ids); // (B, T, d)
  const pos = tf.slice(params.positionEmbeddings, [0, 0], [T, d]); // (T, d), broadcast over B
  let h = tf.reshape<tf.Rank.R2>(tf.add(word, pos), [B * T, d]); // (B·T, d)
  h = dropout(norm(h, params.embNorm, eps), config.dropout, training);
  // (B, 1, 1, T)
  const maskBias = tf.reshape<tf.Rank.R4>(tf.mul(tf.sub(1, tf.cast(mask, 'float32')), FLOAT32_MIN), [B, 1, 1, T]);
  const act = config.activation === 'gelu' ? gelu : tf.relu;
  for (const layer of params.layers) {
    const sa = attention(h, layer, maskBias, B, T, config, training); // (B·T, d); HF has no dropout here
    h = norm(tf.add(sa, h), layer.saNorm, eps);
    const ffn = dropout(lin(act(lin(h, layer.lin1)), layer.lin2), config.dropout, training); // (B·T, F) → (B·T, d)
    h = norm(tf.add(ffn, h), layer.outNorm, eps);
  }
  return tf.reshape(h, [B, T, d]);
}

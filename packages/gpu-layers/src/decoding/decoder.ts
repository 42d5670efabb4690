// Incremental decoding of the language models: one token per step, earlier positions kept in per-block state.
import * as tf from '@tensorflow/tfjs-core';
import { CodedError } from '@grassflow/checkpoints';
import { GrassmannBlock } from '../grassmann/block.js';
import { TransformerBlock } from '../transformer/block.js';
import { checkTokenIds, type LanguageModelBase } from '../language-model/language-model.js';
import { GrassmannRingState } from '../grassmann/ring-state.js';
import { KvCacheState } from '../transformer/kv-cache.js';
import type { LayerDecodingState } from '../language-model/decoding-state.js';

/** Why a decoder refused a call. */
export type DecoderErrorCode = 'POSITION_LIMIT' | 'BAD_INPUT' | 'DISPOSED' | 'UNSUPPORTED_MODEL';

/** A decoding call that cannot be served; `code` says which rule it broke, the message what to do. */
export class DecoderError extends CodedError<DecoderErrorCode> {
  override readonly name = 'DecoderError';
}

export interface DecoderOptions {
  /** Sequences decoded side by side, all at the same position (default 1). */
  batch?: number;
}

/** What the decoder keeps: 'ring-buffer' (GrassmannLM, constant size) or 'kv-cache' (TransformerLM, grows with t). */
export type DecoderStateKind = 'ring-buffer' | 'kv-cache';

/**
 * Incremental decoding of a GrassmannLM or TransformerLM: feeding tokens one at a time (`step`) or a chunk at a
 * time (`prime`) gives exactly the logits the full forward pass gives at those positions (to float32 rounding),
 * at a cost per token that does not grow with the position for GrassmannLM (its state is the last max(Δ) reduced
 * states z of each layer, a ring buffer of B·max(Δ)·r floats) and grows linearly for TransformerLM (a key/value
 * cache of 2·B·t·d floats per layer). Positions are absolute, as in training: token k fed to the decoder sits at
 * position k of the positional table, so at most `maxLen` tokens can be fed before {@link Decoder.reset}.
 *
 * Not differentiable (inference only, dropout off). The caller disposes every returned tensor, and the decoder.
 */
export class Decoder {
  readonly batch: number;
  readonly stateKind: DecoderStateKind;
  private readonly states: LayerDecodingState[];
  private readonly blocks: Array<GrassmannBlock | TransformerBlock>;
  private t = 0;
  private disposed = false;

  constructor(
    readonly model: LanguageModelBase,
    options: DecoderOptions = {},
  ) {
    const { batch = 1 } = options;
    if (!Number.isInteger(batch) || batch < 1)
      throw new DecoderError('BAD_INPUT', `batch must be an integer >= 1, got ${batch}`);
    this.batch = batch;
    this.blocks = model.blocks.map((block, i) => {
      if (block instanceof GrassmannBlock) {
        if (block.direction !== 'causal') {
          throw new DecoderError(
            'UNSUPPORTED_MODEL',
            `block ${i} mixes in both directions (direction '${block.direction}'): it reads future positions and cannot be decoded token by token`,
          );
        }
        return block;
      }
      if (block instanceof TransformerBlock) return block;
      throw new DecoderError(
        'UNSUPPORTED_MODEL',
        `block ${i} is a ${block.getClassName()}: decoding supports GrassmannBlock and TransformerBlock`,
      );
    });
    const kinds = new Set(this.blocks.map((b) => (b instanceof GrassmannBlock ? 'ring-buffer' : 'kv-cache')));
    this.stateKind = kinds.has('kv-cache') ? 'kv-cache' : 'ring-buffer';
    this.states = this.blocks.map((b) =>
      b instanceof GrassmannBlock ? new GrassmannRingState(b) : new KvCacheState(b),
    );
  }

  /** Tokens fed so far = the position the next token will take. */
  get position(): number {
    return this.t;
  }

  /** Length of the model's positional table: the most tokens a decoder can hold. */
  get maxLen(): number {
    return this.model.config.maxLen;
  }

  /**
   * Feed one token per sequence, ids int32 [B] or [B, 1] (or a plain array of B ids, checked against the
   * vocabulary; tensors are not read back: check their ids where they enter, with checkTokenIds), at position
   * `position`; returns the logits [B, V] that predict the next token. Equal to apply(all tokens so far)[:, position].
   */
  step(ids: tf.Tensor1D | tf.Tensor2D | readonly number[]): tf.Tensor2D {
    const ids2 = this.asIds(ids, true);
    try {
      return this.run(ids2, 'last') as tf.Tensor2D;
    } finally {
      if (ids2 !== ids) ids2.dispose();
    }
  }

  /**
   * Feed T tokens per sequence at once, ids int32 [B, T], at positions position … position + T − 1 (a prompt,
   * or more tokens after earlier calls). Returns the logits [B, V] of the last position, or with
   * `{ logits: 'all' }` those of every fed position [B, T, V].
   */
  prime(ids: tf.Tensor2D, options?: { logits?: 'last' }): tf.Tensor2D;
  prime(ids: tf.Tensor2D, options: { logits: 'all' }): tf.Tensor3D;
  prime(ids: tf.Tensor2D, options: { logits?: 'last' | 'all' } = {}): tf.Tensor2D | tf.Tensor3D {
    return this.run(this.asIds(ids, false), options.logits ?? 'last');
  }

  /**
   * Bytes of tensor data the state holds now: Σ over layers of B·min(t, max(Δ))·r·4 (ring buffer) or
   * 2·B·t·d·4 (key/value cache). The model's weights are not counted.
   */
  stateBytes(): number {
    return this.states.reduce((n, s) => n + s.bytes(), 0);
  }

  /** Forget every position: the next token is fed at position 0 again. */
  reset(): void {
    for (const s of this.states) s.reset();
    this.t = 0;
  }

  /** Free the state (the model is not touched). Further calls throw. */
  dispose(): void {
    if (this.disposed) return;
    for (const s of this.states) s.dispose();
    this.disposed = true;
  }

  /** Check ids and bring them to int32 [B, T]; a new tensor unless `ids` already is one. */
  private asIds(ids: tf.Tensor1D | tf.Tensor2D | readonly number[], single: boolean): tf.Tensor2D {
    if (this.disposed)
      throw new DecoderError('DISPOSED', 'this decoder has been disposed: create a new one with createDecoder(model)');
    const B = this.batch;
    if (!(ids instanceof tf.Tensor)) {
      if (ids.length !== B || !ids.every((id) => Number.isInteger(id))) {
        throw new DecoderError(
          'BAD_INPUT',
          `step expects ${B} integer token id(s), one per sequence, got [${ids.join(', ')}]`,
        );
      }
      try {
        checkTokenIds(ids, this.model.config.vocabSize); // the values are at hand: no device read
      } catch (err) {
        throw new DecoderError('BAD_INPUT', (err as Error).message);
      }
      return tf.tensor2d(Array.from(ids), [B, 1], 'int32');
    }
    const shape = `${ids.dtype} [${ids.shape.join(', ')}]`;
    if (ids.dtype !== 'int32') throw new DecoderError('BAD_INPUT', `token ids must be int32, got ${shape}`);
    if (single) {
      const ok = (ids.rank === 1 && ids.shape[0] === B) || (ids.rank === 2 && ids.shape[0] === B && ids.shape[1] === 1);
      if (!ok)
        throw new DecoderError(
          'BAD_INPUT',
          `step expects one token per sequence, ids [${B}] or [${B}, 1], got ${shape}; feed several tokens with prime()`,
        );
      return ids.rank === 2 ? (ids as tf.Tensor2D) : tf.reshape(ids, [B, 1]);
    }
    if (ids.rank !== 2 || ids.shape[0] !== B || (ids.shape[1] as number) < 1) {
      throw new DecoderError(
        'BAD_INPUT',
        `prime expects ids [${B}, T] with T >= 1 (batch ${B} as created), got ${shape}`,
      );
    }
    return ids as tf.Tensor2D;
  }

  /** Embed at the current position, run every block with its state, advance; logits of the last or all positions. */
  private run(ids: tf.Tensor2D, which: 'last' | 'all'): tf.Tensor2D | tf.Tensor3D {
    const T = ids.shape[1];
    const t0 = this.t;
    const maxLen = this.maxLen;
    if (t0 + T > maxLen) {
      throw new DecoderError(
        'POSITION_LIMIT',
        `cannot feed ${T} token(s) at position ${t0}: the positional table has maxLen = ${maxLen} entries (positions 0 … ${maxLen - 1}). ` +
          `Positions are absolute, so continue by reset() and prime() with the last tokens (at most ${maxLen}), as grassflow-lm generate does, ` +
          `or use a model trained with a larger block size.`,
      );
    }
    const out = tf.tidy(() => {
      let x = this.model.embed(ids, { startPosition: t0 }); // [B, T, d]
      this.blocks.forEach((block, i) => {
        const state = this.states[i] as LayerDecodingState;
        x = block.applyWithMixer(x, (u) => state.mix(u, t0)); // [B, T, d]
      });
      const h = this.model.finalNorm(x); // [B, T, d]
      return which === 'all' ? this.model.logits(h) : this.model.lastLogits(h); // [B, T, V] or [B, V]
    });
    this.t = t0 + T;
    return out;
  }
}

/**
 * A decoder for `model` (GrassmannLM: ring buffer of the last max(Δ) reduced states per layer; TransformerLM:
 * key/value cache) decoding `options.batch` sequences in lockstep. See {@link Decoder}.
 */
export function createDecoder(model: LanguageModelBase, options: DecoderOptions = {}): Decoder {
  return new Decoder(model, options);
}

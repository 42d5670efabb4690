// GrassmannLM: the attention-free language model of paper-notes §2.
import type { GrassmannConfig, ModelConfig } from '../config/model-config.js';
import { GrassmannBlock, GRASSMANN_BLOCK_OPTIONS } from './block.js';
import { nonDefaultOptions } from '../config/model-options.js';
import { LanguageModelBase, type CreateModelOptions } from '../language-model/language-model.js';

/**
 * logits = LN_f?(Block_N(…Block_1(Dropout(tok_emb[x] + pos_emb[t])))) · tok_embᵀ, each block a
 * GrassmannBlock with the layer's own offsets (config.offsets[i]) and the config's block options (gate, …).
 * [B, L] int32 → [B, L, V].
 */
export class GrassmannLM extends LanguageModelBase {
  /** The validated config, of this kind (the constructor refuses another). */
  declare readonly config: GrassmannConfig;

  constructor(config: ModelConfig, options: CreateModelOptions = {}) {
    if (config.kind !== 'grassmann')
      throw new TypeError(`GrassmannLM needs config.kind 'grassmann', got '${config.kind}'`);
    super(config, options, (i, seed) => {
      const c = config;
      return new GrassmannBlock({
        r: c.r,
        offsets: c.offsets[i] as number[],
        dFF: c.dFF,
        norm: c.norm,
        dropout: c.dropout,
        eps: c.eps,
        ...nonDefaultOptions(c, GRASSMANN_BLOCK_OPTIONS, 'grassmann'),
        ...(seed === undefined ? {} : { seed }),
      });
    });
  }
}

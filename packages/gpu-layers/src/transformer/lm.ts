// TransformerLM: the attention baseline (DPA or expressive attention) of paper-notes §2 and §4.
import type { TransformerConfig, ModelConfig } from '../config/model-config.js';
import { TransformerBlock, TRANSFORMER_BLOCK_OPTIONS } from './block.js';
import { nonDefaultOptions } from '../config/model-options.js';
import { LanguageModelBase, type CreateModelOptions } from '../language-model/language-model.js';

/** The same skeleton as GrassmannLM with TransformerBlocks (config.attention, config.nHeads, its block options). */
export class TransformerLM extends LanguageModelBase {
  /** The validated config, of this kind (the constructor refuses another). */
  declare readonly config: TransformerConfig;

  constructor(config: ModelConfig, options: CreateModelOptions = {}) {
    if (config.kind !== 'transformer')
      throw new TypeError(`TransformerLM needs config.kind 'transformer', got '${config.kind}'`);
    super(
      config,
      options,
      (_i, seed) =>
        new TransformerBlock({
          nHeads: config.nHeads,
          dFF: config.dFF,
          attention: config.attention,
          norm: config.norm,
          dropout: config.dropout,
          eps: config.eps,
          ...nonDefaultOptions(config, TRANSFORMER_BLOCK_OPTIONS, 'transformer'),
          ...(seed === undefined ? {} : { seed }),
        }),
    );
  }
}

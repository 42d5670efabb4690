// createModel: the registry from config.kind to the model class.
import { validateModelConfig, type ModelConfig } from './shared/config.js';
import { GrassmannLM } from './grassmann/lm.js';
import type { CreateModelOptions } from './shared/language-model.js';
import { TransformerLM } from './transformer/lm.js';

/** Build the model a (validated) config describes: GrassmannLM for 'grassmann', TransformerLM for 'transformer'. */
export function createModel(config: ModelConfig, options: CreateModelOptions = {}): GrassmannLM | TransformerLM {
  const c = validateModelConfig(config);
  return c.kind === 'grassmann' ? new GrassmannLM(c, options) : new TransformerLM(c, options);
}

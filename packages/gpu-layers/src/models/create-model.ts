// createModel: the registry from config.kind to the model class.
import { validateModelConfig, type ModelConfig, type ModelConfigInput } from '../shared/config.js';
import { GrassmannLM } from '../grassmann/lm.js';
import type { CreateModelOptions } from '../shared/language-model.js';
import { TransformerLM } from '../transformer/lm.js';

/**
 * Build the model a config describes: GrassmannLM for 'grassmann', TransformerLM for 'transformer'. The config
 * may be partial — `kind` plus what differs from MODEL_DEFAULTS, e.g. createModel({ kind: 'transformer',
 * attention: 'ea' }) — and is validated first (validateModelConfig).
 */
export function createModel(
  config: ModelConfig | ModelConfigInput,
  options: CreateModelOptions = {},
): GrassmannLM | TransformerLM {
  const c = validateModelConfig(config);
  return c.kind === 'grassmann' ? new GrassmannLM(c, options) : new TransformerLM(c, options);
}

// createModel: the registry from config.kind to the model class.
import { validateModelConfig, type ModelConfig, type ModelConfigInput } from '../config/model-config.js';
import { GrassmannLM } from '../grassmann/lm.js';
import type { CreateModelOptions } from '../language-model/language-model.js';
import { TransformerLM } from '../transformer/lm.js';

/** A config of one kind: createModel's return type narrows by it. */
type ConfigOfKind<K extends ModelConfig['kind']> = (ModelConfig | ModelConfigInput) & { kind: K };

/**
 * Build the model a config describes: GrassmannLM for 'grassmann', TransformerLM for 'transformer' (the return type
 * follows a literal `kind`). The config may be partial — `kind` plus what differs from MODEL_DEFAULTS, e.g.
 * createModel({ kind: 'transformer', attention: 'ea' }) — and is validated first (validateModelConfig).
 */
export function createModel(config: ConfigOfKind<'grassmann'>, options?: CreateModelOptions): GrassmannLM;
export function createModel(config: ConfigOfKind<'transformer'>, options?: CreateModelOptions): TransformerLM;
export function createModel(
  config: ModelConfig | ModelConfigInput,
  options?: CreateModelOptions,
): GrassmannLM | TransformerLM;
export function createModel(
  config: ModelConfig | ModelConfigInput,
  options: CreateModelOptions = {},
): GrassmannLM | TransformerLM {
  const c = validateModelConfig(config);
  return c.kind === 'grassmann' ? new GrassmannLM(c, options) : new TransformerLM(c, options);
}

// @grassflow/gpu-layers: causal Grassmann mixing, DPA/EA attention and language models on TensorFlow.js.
import './wasm-kernels.js';

export { initBackend, BACKEND_NAMES, BackendUnavailableError } from './backend.js';
export type { BackendName, BackendInfo, InitBackendOptions } from './backend.js';
export { registerWasmTrainingKernels } from './wasm-kernels.js';
export { matmul, matmulConst, tiedHead, transposeLast, linear, layerNorm, gelu, dropout, embeddingLookup } from './ops.js';
export { crossEntropy, lmLoss, tokenNll } from './loss.js';
export { chunkedLmLoss, type ChunkedLmLossOptions } from './chunked-loss.js';
export {
  validateModelConfig,
  ModelConfigError,
  offsetSchedule,
  PRESETS,
  preset,
  pluckerDim,
  countParams,
} from './config.js';
export type { ModelConfig, PresetName } from './config.js';
export {
  grassmannMixing,
  grassmannMixingTrace,
  grassmannMixingStep,
  pluckerPairs,
  pluckerSelection,
  pluckerColumns,
  pairCounts,
} from './grassmann-mixing.js';
export type {
  GrassmannMixingWeights,
  GrassmannMixingOptions,
  GrassmannMixingPast,
  GrassmannMixingTrace,
} from './grassmann-mixing.js';
export { causalAttention, attentionWithCache, attentionWeights, causalMask } from './attention.js';
export type { AttentionWeights, AttentionOptions, AttentionCache } from './attention.js';
export { ParamLayer, INIT_STD } from './param-layer.js';
export type { ParamSpec, ParamInit, NamedParam, ParamLayerArgs } from './param-layer.js';
export { CausalGrassmannMixing } from './layers/causal-grassmann-mixing.js';
export type { CausalGrassmannMixingArgs } from './layers/causal-grassmann-mixing.js';
export { GrassmannBlock } from './layers/grassmann-block.js';
export type { GrassmannBlockArgs } from './layers/grassmann-block.js';
export { TransformerBlock } from './layers/transformer-block.js';
export type { TransformerBlockArgs } from './layers/transformer-block.js';
export { TiedEmbeddingLM, StateDictError, checkTokenIds } from './models/language-model.js';
export type { LanguageModel, ForwardOptions, CreateModelOptions } from './models/language-model.js';
export { GrassmannLM } from './models/grassmann-lm.js';
export { TransformerLM } from './models/transformer-lm.js';
export { createModel } from './models/create-model.js';
export * from './safetensors.js';
export * from './checkpoint.js';
export { createDecoder, Decoder, DecoderError } from './decoding/decoder.js';
export type { DecoderOptions, DecoderErrorCode, DecoderStateKind } from './decoding/decoder.js';

// What @grassflow/gpu-layers offers in every JavaScript runtime (its Node and browser entries both export it): ops,
// losses, configs, the Grassmann mixing and attention, layers, models, decoding and sampling, checkpoints from bytes.
// The inspector's activations and traces are in src/internals.ts (`@grassflow/gpu-layers/internals`).
import './backend/wasm-kernels.js';

export { WASM_FILES, type WasmFileName } from './backend/backend-info.js';

export { registerWasmTrainingKernels } from './backend/wasm-kernels.js';
export {
  matmul,
  matmulConst,
  tiedHead,
  transposeLast,
  matMulT,
  linear,
  layerNorm,
  gelu,
  dropout,
  embeddingLookup,
  sumTensors,
} from './ops/ops.js';
export { feedForward, postNormResidual, type FeedForwardWeights, type LinearWeights } from './layers/block-parts.js';
export { crossEntropy, lmLoss, tokenNll, logSumExp } from './loss/loss.js';
export { AdaptiveSoftmaxHead, frequencyOrder } from './heads/adaptive-head.js';
export { chunkedLmLoss, type ChunkedLmLossOptions } from './loss/chunked-loss.js';
export {
  validateModelConfig,
  ModelConfigError,
  offsetSchedule,
  PRESETS,
  PRESET_NAMES,
  MODEL_DEFAULTS,
  preset,
  countParams,
  paramBreakdown,
  describeParams,
  adaptiveHeadShapes,
  OPTIONAL_DEFAULTS,
  ADAPTIVE_HEAD_DEFAULTS,
} from './config/model-config.js';
export { MODEL_FIELDS, MODEL_OPTIONS } from './config/model-options.js';
export type { ModelFieldName, ModelOptionName, ModelOptionValue, ModelOptions } from './config/model-options.js';
export type {
  ModelConfig,
  ModelConfigInput,
  GrassmannConfig,
  TransformerConfig,
  FullModelConfig,
  PresetName,
  ParamBreakdown,
} from './config/model-config.js';
export {
  grassmannMixing,
  grassmannMixingReference,
  grassmannMixingTrace,
  grassmannMixingStep,
  pluckerDim,
  pluckerPairs,
} from './grassmann/mixing.js';
export type {
  GrassmannGate,
  GrassmannMixingWeights,
  GrassmannMixingOptions,
  GrassmannMixingPast,
  GrassmannMixingTrace,
} from './grassmann/mixing.js';
export {
  causalAttention,
  attentionWithCache,
  attentionTrace,
  attentionWeights,
  causalMask,
} from './transformer/attention.js';
export type {
  AttentionWeights,
  AttentionOptions,
  AttentionCache,
  AttentionTrace,
  EaEps,
} from './transformer/attention.js';
export { ParamLayer, INIT_STD, tfjsSeed } from './layers/param-layer.js';
export type { ParamSpec, ParamInit, NamedParam, ParamLayerArgs } from './layers/param-layer.js';
export { CausalGrassmannMixing } from './grassmann/mixing-layer.js';
export type { CausalGrassmannMixingArgs, MixingSettings } from './grassmann/mixing-layer.js';
export { GrassmannBlock } from './grassmann/block.js';
export type { GrassmannBlockArgs } from './grassmann/block.js';
export { TransformerBlock } from './transformer/block.js';
export type { TransformerBlockArgs } from './transformer/block.js';
export { LanguageModelBase, StateDictError, checkTokenIds } from './language-model/language-model.js';
export type { LanguageModel, ForwardOptions, CreateModelOptions } from './language-model/language-model.js';
export { GrassmannLM } from './grassmann/lm.js';
export { TransformerLM } from './transformer/lm.js';
export { createModel } from './models/create-model.js';
export { createDecoder, Decoder, DecoderError } from './decoding/decoder.js';
export { useFusedKernels } from './backend/wasm-fused.js';
export type { DecoderOptions, DecoderErrorCode, DecoderStateKind } from './decoding/decoder.js';
export { appSlideKeep, sampleToken, sampleIds, sampleIdsFullForward, topKIds } from './decoding/sampling.js';
export type { SamplingOptions, UniformStream } from './decoding/sampling.js';
export { loadCheckpointFromBytes, type LoadedCheckpointBytes } from './io/checkpoint-bytes.js';
export {
  checkpointBytesFromFiles,
  fetchCheckpointBytes,
  type CheckpointBytes,
  type CheckpointFileLike,
} from '@grassflow/checkpoints';
export {
  isPretrainedExtra,
  readPretrainedTokenizer,
  WIKITEXT_WORDPIECE_PREPARATION,
  type GenerateTextOptions,
  type ReadPretrainedTokenizerOptions,
  type PretrainedModel,
  type PretrainedTokenizer,
  type PretrainedTokenizerConfig,
} from './io/pretrained-model.js';

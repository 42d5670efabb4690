// @grassflow/gpu-layers: causal Grassmann mixing, DPA/EA attention and language models on TensorFlow.js.
import './wasm-kernels.js';

export { initBackend, BACKEND_NAMES, BackendUnavailableError, wasmThreadsNote } from './backend.js';
export type { BackendName, BackendInfo, InitBackendOptions } from './backend.js';
export { describeAdapter, DAWN_LIMIT_WARNING, probeWebgpuAdapter, type WebgpuAdapterInfo } from './webgpu-node.js';
export { registerWasmTrainingKernels } from './wasm-kernels.js';
export {
  matmul,
  matmulConst,
  tiedHead,
  transposeLast,
  linear,
  layerNorm,
  gelu,
  dropout,
  embeddingLookup,
  sumTensors,
} from './shared/ops.js';
export { crossEntropy, lmLoss, tokenNll, logSumExp } from './shared/loss.js';
export { AdaptiveSoftmaxHead, frequencyOrder } from './shared/adaptive-head.js';
export { chunkedLmLoss, type ChunkedLmLossOptions } from './shared/chunked-loss.js';
export {
  validateModelConfig,
  ModelConfigError,
  offsetSchedule,
  PRESETS,
  PRESET_NAMES,
  MODEL_DEFAULTS,
  preset,
  pluckerDim,
  countParams,
  adaptiveHeadShapes,
  OPTIONAL_DEFAULTS,
  ADAPTIVE_HEAD_DEFAULTS,
} from './shared/config.js';
export type {
  ModelConfig,
  ModelConfigInput,
  GrassmannConfig,
  TransformerConfig,
  FullModelConfig,
  PresetName,
} from './shared/config.js';
export {
  grassmannMixing,
  grassmannMixingTrace,
  grassmannMixingStep,
  pluckerPairs,
  pluckerSelection,
  pluckerColumns,
  pairCounts,
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
export { ParamLayer, INIT_STD, tfjsSeed } from './shared/param-layer.js';
export type { ParamSpec, ParamInit, NamedParam, ParamLayerArgs } from './shared/param-layer.js';
export { CausalGrassmannMixing } from './grassmann/mixing-layer.js';
export type { CausalGrassmannMixingArgs } from './grassmann/mixing-layer.js';
export { GrassmannBlock } from './grassmann/block.js';
export type { GrassmannBlockArgs } from './grassmann/block.js';
export { TransformerBlock } from './transformer/block.js';
export type { TransformerBlockArgs } from './transformer/block.js';
export { TiedEmbeddingLM, StateDictError, checkTokenIds } from './shared/language-model.js';
export type { LanguageModel, ForwardOptions, CreateModelOptions } from './shared/language-model.js';
export { GrassmannLM } from './grassmann/lm.js';
export { TransformerLM } from './transformer/lm.js';
export { createModel } from './create-model.js';
export * from './safetensors.js';
export * from './checkpoint.js';
export { createDecoder, Decoder, DecoderError } from './decoding/decoder.js';
export type { DecoderOptions, DecoderErrorCode, DecoderStateKind } from './decoding/decoder.js';
export {
  saveWeights,
  loadWeights,
  assignWeights,
  namedWeights,
  safetensorsHandler,
  WeightsIOError,
  TFJS_SAFETENSORS_FORMAT,
  TFJS_SAFETENSORS_FILE,
} from './weights-io.js';
export type { WeightsSource, LoadedWeights } from './weights-io.js';

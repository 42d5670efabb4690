// @grassflow/distilbert-adapter: a DistilBERT encoder on TensorFlow.js, loaded from Hugging Face files.
export { DistilBertError, type DistilBertErrorCode } from './errors.js';
export {
  parseDistilBertConfig,
  toHfConfigJson,
  sinusoidalPositionTable,
  DISTILBERT_ACTIVATIONS,
  DISTILBERT_LAYER_NORM_EPS,
  type DistilBertConfig,
  type DistilBertActivation,
} from './config.js';
export {
  readDistilBertWeights,
  expectedTensors,
  type Float32Weight,
  type DistilBertWeights,
  type WeightsReport,
} from './weights.js';
export { hubSettings, type HubSettings } from './settings.js';
export {
  resolveModelFiles,
  resolveCacheDir,
  hubFileUrl,
  hubRepoOf,
  MODEL_FILES,
  CACHE_MANIFEST,
  KNOWN_SHA256,
  type ModelFileName,
  type ResolveOptions,
  type ResolvedModelFiles,
} from './hub-files.js';
export {
  distilBertForward,
  FLOAT32_MIN,
  type EncoderParams,
  type LayerParams,
  type LinearParams,
  type NormParams,
} from './forward.js';
export { FeatureCache, FEATURE_CACHE_VERSION, type FeatureEntry, type LookupResult } from './feature-cache.js';
export {
  DistilBertEncoder,
  type EncoderMode,
  type IdsArray,
  type Ids2D,
  type ForwardOptions,
  type CachedForwardResult,
  type EncoderInit,
  type LoadInfo,
} from './encoder.js';
export { loadDistilBert, type LoadDistilBertOptions } from './load.js';

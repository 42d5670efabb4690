// @grassflow/snli-head: Grassmann–Plücker and Transformer heads for SNLI, and the grassflow-snli app's pieces.
export {
  GrassmannHead,
  grassmannHeadConfig,
  countGrassmannHead,
  type GrassmannHeadConfig,
  type MixingProbe,
} from './model/grassmann-head.js';
export {
  TransformerHead,
  transformerHeadConfig,
  countTransformerHead,
  type TransformerHeadConfig,
} from './model/transformer-head.js';
export { maskedSelfAttention, type MaskedAttentionWeights } from './model/masked-attention.js';
export { EmbeddingEncoder, countEmbeddingEncoder, type EmbeddingEncoderConfig } from './model/embedding-encoder.js';
export { maskedMeanPool, pairFeatures } from './model/pair-features.js';
export { ParamStore } from '@grassflow/training';
export {
  SnliModel,
  modelConfig,
  countParams,
  parseSnliModelConfig,
  HEAD_KINDS,
  type HeadKind,
  type SnliModelConfig,
  type SentenceInput,
} from './model/snli-model.js';
export { evaluatePairs, SnliTrainTask, type EvalResult } from './train/task.js';
export {
  loadHeadCheckpoint,
  loadHeadTrainerCheckpoint,
  headCheckpointExtra,
  type HeadRunInfo,
} from './model/head-checkpoint.js';

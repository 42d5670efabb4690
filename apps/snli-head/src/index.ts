// @grassflow/snli-head: Grassmann–Plücker and Transformer heads for SNLI, and the grassflow-snli app's pieces.
export { GrassmannHead, grassmannHeadConfig } from './model/grassmann-head.js';
export { ParamStore } from '@grassflow/training';
export { SnliModel, modelConfig, countParams, type SnliModelConfig } from './model/snli-model.js';
export { evaluatePairs } from './train/task.js';
export { loadHeadCheckpoint, headCheckpointExtra } from './model/head-checkpoint.js';

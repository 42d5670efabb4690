// @grassflow/grassmann-math: exterior algebra, Plücker coordinates and subspace geometry on Grassmann manifolds.
export { GrassmannInputError, type NumericVector } from './errors.js';
export {
  MAX_KVECTOR_DIMENSION,
  binomial,
  combinations,
  rankCombination,
  unrankCombination,
  pairIndex,
  pairFromIndex,
  pairIndexArrays,
} from './combinatorics.js';
export {
  type KVector,
  kvector,
  zeroKVector,
  basisKVector,
  vectorToKVector,
  wedge,
  wedgeAll,
  innerProduct,
  kvectorNorm,
  hodgeStar,
  scaleKVector,
} from './exterior-algebra.js';
export { type DenseMatrix, type SubspaceInput } from './subspace-input.js';
export {
  plucker,
  pluckerK,
  pluckerRelationsResidual,
  normalizePlucker,
  smoothNormalizePlucker,
  planeFromPlucker,
  type PlaneBasis,
} from './plucker.js';
export {
  orthonormalBasis,
  principalAngles,
  geodesicDistance,
  chordalDistance,
  projectionDistance,
} from './principal-angles.js';
export { pairFlow, planeStep, type PairFlow, type VectorSequence } from './pair-flow.js';
export { type BatchArray } from './batch/batch-input.js';
export {
  pluckerBatch,
  DEFAULT_PLUCKER_BATCH_BACKEND,
  type PluckerBatchBackend,
  type PluckerBatchOptions,
} from './batch/plucker-batch.js';
export {
  gpuJsBackendMode,
  loadGpuJs,
  releaseGpuJsKernels,
  GpuJsUnavailableError,
  type GpuJsMode,
} from './batch/plucker-batch-gpujs.js';

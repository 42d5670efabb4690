// @grassflow/grassmann-math: exterior algebra, Plücker coordinates and subspace geometry on Grassmann manifolds.
export { GrassmannInputError, type NumericVector } from './errors';
export {
  MAX_KVECTOR_DIMENSION,
  binomial,
  combinations,
  rankCombination,
  unrankCombination,
  pairIndex,
  pairFromIndex,
  pairIndexArrays,
} from './combinatorics';
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
} from './exterior-algebra';
export { type DenseMatrix, type SubspaceInput } from './subspace-input';
export {
  plucker,
  pluckerK,
  pluckerRelationsResidual,
  normalizePlucker,
  smoothNormalizePlucker,
  planeFromPlucker,
  type PlaneBasis,
} from './plucker';
export {
  orthonormalBasis,
  principalAngles,
  geodesicDistance,
  chordalDistance,
  projectionDistance,
} from './principal-angles';
export { pairFlow, planeStep, type PairFlow, type VectorSequence } from './pair-flow';
export { type BatchArray } from './batch/batch-input';
export {
  pluckerBatch,
  DEFAULT_PLUCKER_BATCH_BACKEND,
  type PluckerBatchBackend,
  type PluckerBatchOptions,
} from './batch/plucker-batch';
export {
  gpuJsBackendMode,
  loadGpuJs,
  releaseGpuJsKernels,
  GpuJsUnavailableError,
  type GpuJsMode,
} from './batch/plucker-batch-gpujs';

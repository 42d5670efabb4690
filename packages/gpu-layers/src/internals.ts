// @grassflow/gpu-layers/internals: the building blocks of grassflow's own tools, with no stability promise (they may
// change in any release). grassflow-lm's `inspect` and the playground read a model's activations and traces through
// them; the Plücker index tables and pair counts are the mixing's own bookkeeping. What a model's user needs is in the
// main entry, `@grassflow/gpu-layers`.
export { pairCounts, pluckerColumns, pluckerSelection } from './grassmann/mixing.js';
export {
  blockInputs,
  blockWeights,
  inspectableModel,
  layerNormRows,
  matOf,
  mixerInput,
  row as matRow,
  weight as blockWeight,
  LN_EPS,
  type Mat,
} from './inspect/activations.js';
export { gatePerPosition, traceAttention, traceMixing, type HeadTrace, type MixingTrace } from './inspect/traces.js';

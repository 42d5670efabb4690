// The tensors of a checkpoint against the model its config.json describes: one check for folders and for bytes.
import { CheckpointError } from './checkpoint-config.js';
import type { SafetensorsTensorInfo } from './safetensors-header.js';

const shapeText = (s: readonly number[]): string => `[${s.join(', ')}]`;

/**
 * Compares the number of values model.safetensors' header holds with the parameter count the config implies
 * (`expected`), before the model is built: a config.json that describes a larger model than the weights hold
 * (nLayers 20000 beside 2 MB of weights) is refused without allocating what it describes. A smaller one is let through
 * to the tensor-by-tensor check (building it costs less than the weights given), which names the tensor that differs.
 */
export function checkParameterCount(
  where: string,
  tensors: readonly SafetensorsTensorInfo[],
  expected: number,
  summary: string,
): void {
  const held = tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  if (expected > held) {
    throw new CheckpointError(
      'TENSOR_SHAPE',
      `${where} holds ${held} values but its config.json describes a model of ${expected} parameters: the ` +
        `weights do not belong to this config.json (${summary}); re-save the checkpoint or fix config.json`,
    );
  }
}

/**
 * Compares the header entries of model.safetensors (`where` names the file in messages) with the tensors the model
 * expects (name → shape, all F32); throws a CheckpointError at the first mismatch, before any tensor byte is read.
 */
export function checkModelTensors(
  where: string,
  tensors: readonly SafetensorsTensorInfo[],
  expected: ReadonlyMap<string, readonly number[]>,
  summary: string,
): void {
  const fix = `the weights do not belong to this config.json (${summary}); re-save the checkpoint or fix config.json`;
  const found = new Map(tensors.map((t) => [t.name, t]));
  for (const [name, shape] of expected) {
    const got = found.get(name);
    if (got === undefined) {
      throw new CheckpointError(
        'TENSOR_MISSING',
        `${where} has no tensor '${name}' (expected float32 ${shapeText(shape)}): ${fix}`,
      );
    }
    if (got.dtype !== 'F32') {
      throw new CheckpointError(
        'TENSOR_DTYPE',
        `${where}: tensor '${name}' is stored as ${got.dtype}, expected F32 (float32): re-save the weights as float32`,
      );
    }
    if (got.shape.length !== shape.length || got.shape.some((s, k) => s !== shape[k])) {
      throw new CheckpointError(
        'TENSOR_SHAPE',
        `${where}: tensor '${name}' has shape ${shapeText(got.shape)} but the model expects ${shapeText(shape)}: ${fix}`,
      );
    }
  }
  for (const t of tensors) {
    if (!expected.has(t.name)) {
      throw new CheckpointError(
        'TENSOR_UNEXPECTED',
        `${where} holds tensor '${t.name}' ${t.dtype} ${shapeText(t.shape)} that the model does not have: ${fix}`,
      );
    }
  }
}

/**
 * Refuses float values that are NaN or ±Infinity: a run that diverged, or a file edited by hand. Weights and optimizer
 * moments of a run that trained are finite; loading such a checkpoint would only sample or resume garbage.
 */
export function checkFinite(where: string, name: string, data: Float32Array | Int32Array | Uint8Array): void {
  if (!(data instanceof Float32Array)) return;
  for (let i = 0; i < data.length; i++) {
    const v = data[i] as number;
    if (v - v !== 0) {
      throw new CheckpointError(
        'NON_FINITE',
        `${where}: tensor '${name}' holds ${String(v)} (entry ${i}): the run that saved it diverged or the file was ` +
          'edited; load an earlier checkpoint (a run keeps checkpoints/best beside checkpoints/latest) or retrain',
      );
    }
  }
}

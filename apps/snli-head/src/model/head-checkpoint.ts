// An SNLI model's checkpoint folder: the toolkit's checkpoint of a Checkpointable model (config.json with the
// SnliModelConfig as `model`, `extra.run` with the backbone and token limit, `extra.trainer` for --resume;
// model.safetensors with the parameters by name; extra.safetensors with the AdamW moments).
import { CheckpointError, type CheckpointJson } from '@grassflow/gpu-layers';
import { loadModelCheckpoint, loadTrainerCheckpoint, type LoadedTrainerCheckpoint } from '@grassflow/training';
import { parseSnliModelConfig, SnliModel, type SnliModelConfig } from './snli-model.js';

/** How the features were made, kept in every checkpoint (`extra.run`) so eval can rebuild them. */
export interface HeadRunInfo {
  /** 'none' (trained embedding encoder) or the DistilBERT folder/id. */
  backbone: string;
  /** seqLen: tokens kept per sentence (≤ the embedding encoder's maxLen). */
  seqLen: number;
}

/** `extra` JSON of a checkpoint written by `grassflow-snli train`. */
export function headCheckpointExtra(info: HeadRunInfo): { run: CheckpointJson } {
  return { run: { backbone: info.backbone, seqLen: info.seqLen } };
}

function runInfo(extra: { readonly [key: string]: CheckpointJson }, dir: string): HeadRunInfo {
  const run = extra['run'] as Partial<HeadRunInfo> | undefined;
  if (typeof run?.backbone !== 'string' || typeof run.seqLen !== 'number') {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${dir}: config.json extra.run does not record the backbone and seqLen (not written by grassflow-snli train)`,
    );
  }
  return { backbone: run.backbone, seqLen: run.seqLen };
}

/** The format of head checkpoints written before they became the toolkit's checkpoint folders. */
const OLD_FORMAT = 'grassflow-snli-checkpoint';

/** Run `load`; a folder in the old head-checkpoint format gets an error that says so and what to do. */
async function withOldFormatHint<T>(dir: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (err instanceof CheckpointError && err.message.includes(`"${OLD_FORMAT}"`)) {
      const msg = `${dir} is a head checkpoint of an earlier grassflow-snli (${OLD_FORMAT}), which this version no longer reads: retrain`;
      throw new CheckpointError('UNSUPPORTED_VERSION', msg, { cause: err });
    }
    throw err;
  }
}

const build = (seed: number) => ({
  build: (c: SnliModelConfig) => new SnliModel(c, seed),
  parse: parseSnliModelConfig,
});

/** A model checkpoint for eval: the model (caller disposes it), its backbone and token limit, and the folder read. */
export async function loadHeadCheckpoint(dir: string): Promise<HeadRunInfo & { model: SnliModel; dir: string }> {
  const ck = await withOldFormatHint(dir, () => loadModelCheckpoint(dir, build(0)));
  for (const t of ck.extraTensors.values()) t.dispose();
  try {
    return { ...runInfo(ck.extra, ck.dir), model: ck.model, dir: ck.dir };
  } catch (err) {
    ck.model.dispose();
    throw err;
  }
}

/** A checkpoint to resume from (TrainerCheckpointError without trainer state); the caller disposes the tensors. */
export async function loadHeadTrainerCheckpoint(
  dir: string,
): Promise<LoadedTrainerCheckpoint<SnliModel, SnliModelConfig>> {
  return withOldFormatHint(dir, () => loadTrainerCheckpoint(dir, build(0)));
}

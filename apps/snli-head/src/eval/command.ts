// `grassflow-snli eval`: accuracy and the 3×3 confusion matrix of a checkpoint, as one JSON line.
import {
  parseFlags,
  resolveCheckpointDir,
  startBackend,
  UsageError,
  planCommand,
  type FlagSpecs,
  type CliCommand,
} from '@grassflow/training';
import { featurizer, prepareSplit } from '../data/prepare-data.js';
import { dataDirOrThrow } from '../data/snli-data.js';
import { loadHeadCheckpoint } from '../model/head-checkpoint.js';
import { countParams } from '../model/snli-model.js';
import { evaluatePairs } from '../train/task.js';
import { COMMON, log } from '../train/command.js';

const EVAL_FLAGS = {
  checkpoint: {
    type: 'string',
    metavar: 'DIR',
    help: 'checkpoint folder, or a run folder (its checkpoints/best, else latest)',
  },
  split: { type: 'string', choices: ['dev', 'test'], default: 'dev', help: 'SNLI split of the data folder' },
  file: { type: 'string', metavar: 'FILE', help: 'score this SNLI jsonl instead of the split' },
  batch: { type: 'int', min: 1, default: 128, help: 'pairs per forward pass' },
  ...COMMON,
} as const satisfies FlagSpecs;

/** What `eval` does, resolved once from its flags. */
export interface SnliEvalPlan {
  /** The checkpoint folder (a run folder's best, else latest). */
  dir: string;
  split: 'dev' | 'test';
  /** Score this jsonl instead of the split. */
  file: string | undefined;
  batch: number;
  dataDir: string;
  backend: string | undefined;
}

export function planEval(argv: readonly string[]): SnliEvalPlan {
  const f = parseFlags(argv, EVAL_FLAGS);
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR is required', 'checkpoint');
  const dir = resolveCheckpointDir(f.checkpoint, 'grassflow-snli-run');
  return {
    dir,
    split: f.split as 'dev' | 'test',
    file: f.file,
    batch: f.batch,
    dataDir: dataDirOrThrow(f['data-dir']),
    backend: f.backend,
  };
}

/** What `eval` prints: the checkpoint's accuracy, loss and confusion matrix on the split (or file). */
export interface SnliEvalResult {
  split: 'dev' | 'test' | 'file';
  file: string;
  checkpoint: string;
  head: string;
  backbone: string;
  pairs: number;
  accuracy: number;
  loss: number;
  labels: string[];
  confusion: number[][];
  params: ReturnType<typeof countParams>;
}

/** Load the checkpoint (the model and how its features were made), featurize the split, score every pair once. */
export async function evaluateCheckpoint(plan: Omit<SnliEvalPlan, 'backend'>): Promise<SnliEvalResult> {
  const ck = await loadHeadCheckpoint(plan.dir);
  const model = ck.model;
  try {
    const fz = await featurizer(ck.backbone, plan.dataDir, ck.seqLen);
    try {
      const split = await prepareSplit(fz, plan.split, plan.dataDir, plan.file, ck.seqLen, 0, log);
      const r = await evaluatePairs(model, split.data, split.features, plan.batch);
      return {
        split: plan.file === undefined ? plan.split : 'file',
        file: split.file,
        checkpoint: ck.dir,
        head: model.config.head.kind,
        backbone: ck.backbone,
        pairs: r.count,
        accuracy: r.accuracy,
        loss: r.loss,
        labels: ['entailment', 'neutral', 'contradiction'],
        confusion: r.confusion,
        params: countParams(model.config),
      };
    } finally {
      fz.encoder?.dispose();
    }
  } finally {
    model.dispose();
  }
}

/** The backend, then the checkpoint's scores as one JSON line. */
export async function runEvalPlan(plan: SnliEvalPlan): Promise<number> {
  await startBackend(plan.backend);
  process.stdout.write(`${JSON.stringify(await evaluateCheckpoint(plan))}\n`);
  return 0;
}

const DESCRIPTION =
  'Accuracy and the confusion matrix (rows gold, columns predicted: entailment, neutral, contradiction) over every ' +
  'labelled pair of a split, as one line of JSON.';

/** `eval`: flags → plan (once) → run; `--help` prints the flags. */
export const evalCli: CliCommand = planCommand({
  usage: 'grassflow-snli eval --checkpoint DIR --split dev|test',
  description: DESCRIPTION,
  flags: EVAL_FLAGS,
  help: 'accuracy and 3×3 confusion matrix of a checkpoint on dev or test, as one JSON line',
  plan: planEval,
  run: runEvalPlan,
});

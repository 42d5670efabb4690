// `grassflow-snli train`: flags → one TrainPlan (fresh or resume), then the plan runs.
import { BACKEND_NAMES } from '@grassflow/gpu-layers';
import { checkResumeFlags, describeRunEnd, openRunToResume, optimizerConfigFrom } from '@grassflow/training';
import { optimizerFlagSpecs, parseFlags, runExitCode, startBackend, UsageError } from '@grassflow/training';
import { planCommand } from '@grassflow/training';
import type { CliCommand, FlagSpecs, OpenedRun, RunControl } from '@grassflow/training';
import { featurizer, prepareSplit, type Featurizer } from '../data/prepare-data.js';
import { dataDirOrThrow } from '../data/snli-data.js';
import { HEAD_KINDS, modelConfig, type HeadKind } from '../model/snli-model.js';
import type { RunConfig, TrainingConfig } from './config.js';
import { resumeRun, startRun, type RunData, type RunOutcome } from './run.js';

/** Tokens kept per sentence unless --seq-len says otherwise. */
const SEQ_LEN = 48;

export const COMMON = {
  'data-dir': {
    type: 'string',
    metavar: 'DIR',
    help: 'data folder with snli/ and bert-vocab/ (default GRASSFLOW_DATA_DIR, else ~/.cache/grassflow)',
  },
  backend: {
    type: 'string',
    choices: BACKEND_NAMES,
    help: 'tfjs backend (default GRASSFLOW_BACKEND, else the first that loads)',
  },
} as const satisfies FlagSpecs;

export const TRAIN_FLAGS = {
  head: { type: 'string', choices: HEAD_KINDS, default: 'grassmann', help: 'head' },
  backbone: {
    type: 'string',
    metavar: 'none|distilbert-base-uncased|DIR',
    default: 'none',
    help:
      "features: 'none' = a trainable embedding encoder over the BERT vocab; " +
      'else a frozen DistilBERT (hub id or folder)',
  },
  'train-file': {
    type: 'string',
    metavar: 'FILE',
    help: 'SNLI jsonl to train on (default: snli_1.0_train.jsonl of the data folder, else its 1% sample)',
  },
  'dev-file': {
    type: 'string',
    metavar: 'FILE',
    help: 'SNLI jsonl for validation during training (default: snli_1.0_dev.jsonl of the data folder)',
  },
  'valid-pairs': { type: 'int', min: 0, default: 2000, help: 'validate on the first N pairs of the dev file (0: all)' },
  epochs: { type: 'int', min: 1, default: 2, help: 'passes over the training pairs (full batches only)' },
  ...optimizerFlagSpecs({ lr: 1e-3, warmup: 50 }),
  batch: { type: 'int', min: 1, default: 32, help: 'pairs per step' },
  'seq-len': {
    type: 'int',
    min: 2,
    max: 512,
    help:
      "sequence length: tokens kept per sentence, [CLS] and [SEP] included (≤ the backbone's maxLen) " +
      `(default ${SEQ_LEN})`,
  },
  'embed-dim': { type: 'int', min: 1, default: 64, help: "width of the embedding encoder (backbone 'none')" },
  seed: { type: 'int', min: 0, max: 0xffffffff, default: 1, help: 'initialisation, data order and dropout seed' },
  'eval-every': { type: 'int', min: 0, default: 0, help: 'validate every N steps (0: at the end of each epoch)' },
  'log-every': { type: 'int', min: 1, default: 10, help: 'write a train record to metrics.jsonl every N steps' },
  'stop-at-step': {
    type: 'int',
    min: 1,
    help: 'stop after this step with a checkpoint, as if interrupted (resume continues)',
  },
  out: { type: 'string', metavar: 'DIR', help: 'run folder (default runs/snli-<head>-<backbone>-s<seed>)' },
  resume: {
    type: 'string',
    metavar: 'DIR',
    help: 'continue the run in DIR from checkpoints/latest (its config.json fixes everything else)',
  },
  quiet: { type: 'boolean', help: 'no progress bar: one line per validation' },
  ...COMMON,
} as const satisfies FlagSpecs;

export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** A fresh run as resolved from the flags; the model config follows from the backbone's feature width. */
export interface FreshSnliRun {
  out: string;
  head: HeadKind;
  backbone: string;
  /** Width of the embedding encoder (backbone 'none'). */
  embedDim: number;
  trainFile: string | undefined;
  devFile: string | undefined;
  validPairs: number;
  training: TrainingConfig;
  command: string;
}

/** Everything `train` does, resolved once from its flags. */
export type SnliTrainPlan = { dataDir: string; backend: string | undefined; control: RunControl } & (
  { kind: 'fresh'; run: FreshSnliRun } | { kind: 'resume'; opened: OpenedRun<RunConfig> }
);

/** The plan of `grassflow-snli train ARGV`: flags checked once; on --resume config.json read once. */
export async function planTrain(argv: readonly string[]): Promise<SnliTrainPlan> {
  const f = parseFlags(argv, TRAIN_FLAGS);
  const control: RunControl = { quiet: f.quiet, stopAtStep: f['stop-at-step'] };
  if (f.resume !== undefined) {
    checkResumeFlags(argv);
    const opened = await openRunToResume<RunConfig>(f.resume, 'grassflow-snli-run'); // config.json, read once
    const dataDir = dataDirOrThrow(f['data-dir'] ?? opened.config.data.dataDir);
    return { kind: 'resume', opened, dataDir, backend: f.backend, control };
  }
  const head = f.head as HeadKind;
  const training: TrainingConfig = {
    epochs: f.epochs,
    batch: f.batch,
    ...optimizerConfigFrom(f),
    seed: f.seed,
    seqLen: f['seq-len'] ?? SEQ_LEN,
    evalEvery: f['eval-every'],
    logEvery: f['log-every'],
  };
  const backboneTag = f.backbone === 'none' ? 'none' : 'distilbert';
  const run: FreshSnliRun = {
    out: f.out ?? `runs/snli-${head}-${backboneTag}-s${f.seed}`,
    head,
    backbone: f.backbone,
    embedDim: f['embed-dim'],
    trainFile: f['train-file'],
    devFile: f['dev-file'],
    validPairs: f['valid-pairs'],
    training,
    command: ['grassflow-snli', 'train', ...argv].join(' '),
  };
  return { kind: 'fresh', run, dataDir: dataDirOrThrow(f['data-dir']), backend: f.backend, control };
}

/** Encode (and featurize) the train and dev pairs of a run. */
async function runData(
  fz: Featurizer,
  dataDir: string,
  files: { train: string | undefined; dev: string | undefined; validPairs: number },
  seqLen: number,
): Promise<{ data: RunData; info: RunConfig['data'] }> {
  const train = await prepareSplit(fz, 'train', dataDir, files.train, seqLen, 0, log);
  const valid = await prepareSplit(fz, 'dev', dataDir, files.dev, seqLen, files.validPairs, log);
  const data = { train: train.data, valid: valid.data, trainFeatures: train.features, validFeatures: valid.features };
  const info = {
    dataDir,
    trainFile: train.file,
    trainPairs: train.data.count,
    trainIsSample: train.isSample,
    validFile: valid.file,
    validPairs: valid.data.count,
    tokenizerId: fz.tok.id,
  };
  return { data, info };
}

/** Run a plan: backend, features, train (or resume); the line on stderr says how it ended. */
export async function runTrainPlan(plan: SnliTrainPlan): Promise<number> {
  const backend = await startBackend(plan.backend);
  const cfg = plan.kind === 'resume' ? plan.opened.config : null;
  const backbone = cfg?.backbone ?? (plan.kind === 'fresh' ? plan.run.backbone : 'none');
  const seqLen = cfg?.training.seqLen ?? (plan.kind === 'fresh' ? plan.run.training.seqLen : SEQ_LEN);
  const fz = await featurizer(backbone, plan.dataDir, seqLen);
  try {
    let o: RunOutcome;
    if (plan.kind === 'resume') {
      const c = plan.opened.config;
      if (fz.tok.id !== c.data.tokenizerId) {
        const msg =
          `--resume ${plan.opened.run.dir}: the run used tokenizer ${c.data.tokenizerId}, ` +
          `this data folder gives ${fz.tok.id}`;
        throw new UsageError(msg, 'data-dir');
      }
      const files = { train: c.data.trainFile, dev: c.data.validFile, validPairs: c.data.validPairs };
      const { data } = await runData(fz, plan.dataDir, files, seqLen);
      o = await resumeRun(plan.opened, data, plan.control);
    } else {
      const r = plan.run;
      const files = { train: r.trainFile, dev: r.devFile, validPairs: r.validPairs };
      const { data, info } = await runData(fz, plan.dataDir, files, seqLen);
      const embedding = fz.encoder === null ? { vocabSize: fz.tok.vocabSize, dim: r.embedDim, maxLen: seqLen } : null;
      const model = modelConfig(r.head, fz.dim ?? r.embedDim, embedding);
      o = await startRun({ ...r, model, data, dataInfo: info, backend, ...plan.control });
    }
    const end = describeRunEnd(o.result, o.run, {
      metric: 'val loss',
      format: (v) => v.toFixed(4),
      reportPath: o.reportPath,
    });
    process.stderr.write(`${end}\n`);
    return runExitCode(o.result);
  } finally {
    fz.encoder?.dispose();
  }
}

const USAGE = 'grassflow-snli train --head grassmann|transformer --backbone none|distilbert-base-uncased|DIR [flags]';
const DESCRIPTION =
  'Train an SNLI head into a run folder (config.json, metrics.jsonl, checkpoints/{latest,best}, report.md). ' +
  'The sequence length is --seq-len: tokens kept per sentence, seqLen ≤ maxLen of the backbone.';

/** `train`: flags → plan (once) → run; `--help` prints the flags. */
export const trainCli: CliCommand = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: TRAIN_FLAGS,
  help: 'train a head into a run folder (--resume to continue one)',
  plan: planTrain,
  run: runTrainPlan,
});

// The train and eval commands of grassflow-snli.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_NAMES } from '@grassflow/gpu-layers';
import {
  checkResumeFlags,
  describeRunEnd,
  openRunToResume,
  optimizerConfigFrom,
  optimizerFlagSpecs,
  parseFlags,
  runExitCode,
  startBackend,
  UsageError,
  wantsHelp,
  type FlagSpecs,
} from '@grassflow/training';
import { loadHeadCheckpoint } from '../model/head-checkpoint.js';
import { featurizer, prepareSplit } from '../data/prepare-data.js';
import { resumeRun, startRun, type RunConfig, type TrainingConfig } from './run.js';
import { dataDirOrThrow } from '../data/snli-data.js';
import { countParams, HEAD_KINDS, modelConfig, type HeadKind } from '../model/snli-model.js';
import { evaluatePairs } from '../snli-task.js';

const COMMON = {
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder with snli/ and bert-vocab/ (default GRASSFLOW_DATA_DIR, else ~/.cache/grassflow)' },
  backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend (default GRASSFLOW_BACKEND, else the first that loads)' },
} as const satisfies FlagSpecs;

const TRAIN_FLAGS = {
  head: { type: 'string', choices: HEAD_KINDS, default: 'grassmann', help: 'head' },
  backbone: { type: 'string', metavar: 'none|distilbert-base-uncased|DIR', default: 'none', help: "features: 'none' = a trainable embedding encoder over the BERT vocab; else a frozen DistilBERT (hub id or folder)" },
  'train-file': { type: 'string', metavar: 'FILE', help: 'SNLI jsonl to train on (default: snli_1.0_train.jsonl of the data folder, else its 1% sample)' },
  'dev-file': { type: 'string', metavar: 'FILE', help: 'SNLI jsonl for validation during training (default: snli_1.0_dev.jsonl of the data folder)' },
  'valid-pairs': { type: 'int', min: 0, default: 2000, help: 'validate on the first N pairs of the dev file (0: all)' },
  epochs: { type: 'int', min: 1, default: 2, help: 'passes over the training pairs (full batches only)' },
  ...optimizerFlagSpecs({ lr: 1e-3, warmup: 50 }),
  batch: { type: 'int', min: 1, default: 32, help: 'pairs per step' },
  'max-len': { type: 'int', min: 2, max: 512, default: 48, help: 'tokens kept per sentence ([CLS] and [SEP] included)' },
  'embed-dim': { type: 'int', min: 1, default: 64, help: "width of the embedding encoder (backbone 'none')" },
  seed: { type: 'int', min: 0, max: 0xffffffff, default: 1, help: 'initialisation, data order and dropout seed' },
  'eval-every': { type: 'int', min: 0, default: 0, help: 'validate every N steps (0: at the end of each epoch)' },
  'log-every': { type: 'int', min: 1, default: 10, help: 'write a train record to metrics.jsonl every N steps' },
  'stop-at-step': { type: 'int', min: 1, help: 'stop after this step with a checkpoint, as if interrupted (resume continues)' },
  out: { type: 'string', metavar: 'DIR', help: 'run folder (default runs/snli-<head>-<backbone>-s<seed>)' },
  resume: { type: 'string', metavar: 'DIR', help: "continue the run in DIR from checkpoints/latest (its config.json fixes everything else)" },
  quiet: { type: 'boolean', help: 'no progress bar: one line per validation' },
  ...COMMON,
} as const satisfies FlagSpecs;

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** `grassflow-snli train`. Returns the process exit code. */
export async function trainCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv, 'grassflow-snli train --head grassmann|transformer --backbone none|distilbert-base-uncased|DIR [flags]', 'Train an SNLI head into a run folder (config.json, metrics.jsonl, checkpoints/{latest,best}, report.md).', TRAIN_FLAGS)) return 0;
  const f = parseFlags(argv, TRAIN_FLAGS);
  const stop = f['stop-at-step'];
  if (f.resume !== undefined) {
    checkResumeFlags(argv);
    const opened = await openRunToResume<RunConfig>(f.resume, 'grassflow-snli-run'); // config.json, read once
    const cfg = opened.config;
    const dataDir = dataDirOrThrow(f['data-dir'] ?? cfg.data.dataDir);
    await startBackend(f.backend);
    const fz = await featurizer(cfg.backbone, dataDir, cfg.training.maxLen);
    try {
      if (fz.tok.id !== cfg.data.tokenizerId) throw new UsageError(`--resume ${f.resume}: the run used tokenizer ${cfg.data.tokenizerId}, this data folder gives ${fz.tok.id}`, 'data-dir');
      const train = await prepareSplit(fz, 'train', dataDir, cfg.data.trainFile, cfg.training.maxLen, 0, log);
      const valid = await prepareSplit(fz, 'dev', dataDir, cfg.data.validFile, cfg.training.maxLen, cfg.data.validPairs, log);
      const o = await resumeRun(opened, { train: train.data, valid: valid.data, trainFeatures: train.features, validFeatures: valid.features }, { quiet: f.quiet, ...(stop === undefined ? {} : { stopAtStep: stop }) });
      process.stderr.write(`${describeRunEnd(o.result, o.run, { metric: 'val loss', format: (v) => v.toFixed(4), reportPath: o.reportPath })}\n`);
      return runExitCode(o.result);
    } finally {
      fz.encoder?.dispose();
    }
  }
  const head = f.head as HeadKind;
  const dataDir = dataDirOrThrow(f['data-dir']);
  const backend = await startBackend(f.backend);
  const fz = await featurizer(f.backbone, dataDir, f['max-len']);
  try {
    const train = await prepareSplit(fz, 'train', dataDir, f['train-file'], f['max-len'], 0, log);
    const valid = await prepareSplit(fz, 'dev', dataDir, f['dev-file'], f['max-len'], f['valid-pairs'], log);
    const embedding = fz.encoder === null ? { vocabSize: fz.tok.vocabSize, dim: f['embed-dim'], maxLen: f['max-len'] } : null;
    const model = modelConfig(head, fz.dim ?? f['embed-dim'], embedding);
    const training: TrainingConfig = {
      epochs: f.epochs,
      batch: f.batch,
      ...optimizerConfigFrom(f),
      seed: f.seed,
      maxLen: f['max-len'],
      evalEvery: f['eval-every'],
      logEvery: f['log-every'],
    };
    const backboneTag = f.backbone === 'none' ? 'none' : 'distilbert';
    const o = await startRun({
      out: f.out ?? `runs/snli-${head}-${backboneTag}-s${f.seed}`,
      head,
      backbone: f.backbone,
      model,
      training,
      data: { train: train.data, valid: valid.data, trainFeatures: train.features, validFeatures: valid.features },
      dataInfo: { dataDir, trainFile: train.file, trainPairs: train.data.count, trainIsSample: train.isSample, validFile: valid.file, validPairs: valid.data.count, tokenizerId: fz.tok.id },
      backend,
      command: ['grassflow-snli', 'train', ...argv].join(' '),
      quiet: f.quiet,
      ...(stop === undefined ? {} : { stopAtStep: stop }),
    });
    process.stderr.write(`${describeRunEnd(o.result, o.run, { metric: 'val loss', format: (v) => v.toFixed(4), reportPath: o.reportPath })}\n`);
    return runExitCode(o.result);
  } finally {
    fz.encoder?.dispose();
  }
}

const EVAL_FLAGS = {
  checkpoint: { type: 'string', metavar: 'DIR', help: 'checkpoint folder, or a run folder (its checkpoints/best, else latest)' },
  split: { type: 'string', choices: ['dev', 'test'], default: 'dev', help: 'SNLI split of the data folder' },
  file: { type: 'string', metavar: 'FILE', help: 'score this SNLI jsonl instead of the split' },
  batch: { type: 'int', min: 1, default: 128, help: 'pairs per forward pass' },
  ...COMMON,
} as const satisfies FlagSpecs;

/** A checkpoint folder from --checkpoint: DIR itself, or DIR/checkpoints/best (else latest) for a run folder. */
export function resolveCheckpointDir(dir: string): string {
  if (!existsSync(dir)) throw new UsageError(`--checkpoint ${dir} does not exist`, 'checkpoint');
  const cfg = join(dir, 'config.json');
  if (existsSync(cfg)) {
    let format: string | undefined;
    try {
      format = (JSON.parse(readFileSync(cfg, 'utf8')) as { format?: string }).format;
    } catch {
      return dir; // not JSON: loadHeadCheckpoint reports it
    }
    if (format === 'grassflow-snli-run') {
      for (const c of ['best', 'latest']) if (existsSync(join(dir, 'checkpoints', c))) return join(dir, 'checkpoints', c);
      throw new UsageError(`--checkpoint ${dir} is a run folder without checkpoints yet`, 'checkpoint');
    }
  }
  return dir;
}

/** `grassflow-snli eval`: accuracy and the 3×3 confusion matrix as one JSON line. */
export async function evalCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv, 'grassflow-snli eval --checkpoint DIR --split dev|test', 'Accuracy and the confusion matrix (rows gold, columns predicted: entailment, neutral, contradiction) over every labelled pair of a split, as one line of JSON.', EVAL_FLAGS)) return 0;
  const f = parseFlags(argv, EVAL_FLAGS);
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR is required', 'checkpoint');
  const dir = resolveCheckpointDir(f.checkpoint);
  const dataDir = dataDirOrThrow(f['data-dir']);
  await startBackend(f.backend);
  const ck = await loadHeadCheckpoint(dir);
  const model = ck.model;
  const fz = await featurizer(ck.backbone, dataDir, ck.maxLen);
  try {
    const split = await prepareSplit(fz, f.split as 'dev' | 'test', dataDir, f.file, ck.maxLen, 0, log);
    const r = await evaluatePairs(model, split.data, split.features, f.batch);
    const params = countParams(model.config);
    process.stdout.write(
      `${JSON.stringify({ split: f.file === undefined ? f.split : 'file', file: split.file, checkpoint: ck.dir, head: model.config.head.kind, backbone: ck.backbone, pairs: r.count, accuracy: r.accuracy, loss: r.loss, labels: ['entailment', 'neutral', 'contradiction'], confusion: r.confusion, params })}\n`,
    );
    return 0;
  } finally {
    model.dispose();
    fz.encoder?.dispose();
  }
}

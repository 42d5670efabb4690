// `grassflow-lm train`: flags → one TrainPlan (fresh or resume), then the plan runs.
import { checkResumeFlags, describeRunEnd, openRunToResume, parseFlags, runExitCode } from '@grassflow/training';
import { argvWithConfigFile, RESUME_FLAGS, UsageError } from '@grassflow/training';
import { startBackend, planCommand } from '@grassflow/training';
import type { CliCommand, FlagSpecs, OpenedRun, RunControl } from '@grassflow/training';
import {
  dataDirOrThrow,
  loadRunData,
  loadTokenizer,
  textFileList,
  type CorpusTokenizer,
  type TextSource,
  type TokenizerKind,
} from '../shared/corpus.js';
import {
  COMMON_TRAIN_FLAGS,
  MODEL_KINDS,
  modelConfigFrom,
  type CommonTrainFlags,
  type ModelKind,
} from '../shared/model-options.js';
import { resumedConfig, runLengthFrom, seqLenOf, trainingConfigFrom } from './config.js';
import type { RunConfig, StoredRunConfig, TrainingConfig } from './config.js';
import { resumeRun, startRun, type FreshRun, type RunOutcome } from './run.js';

const TRAIN_FLAGS = {
  model: { type: 'string', choices: MODEL_KINDS, default: 'grassmann', help: 'model kind' },
  ...COMMON_TRAIN_FLAGS,
  preset: {
    ...COMMON_TRAIN_FLAGS.preset,
    default: 'small',
    help: "model size preset (small: about 1M parameters, minutes on 2 cores; paper-6l: the paper's size)",
  },
  'train-file': {
    type: 'string',
    metavar: 'FILE[,FILE…]',
    help: 'train on these plain-text files (UTF-8, one after another) instead of wiki.train',
  },
  'valid-file': {
    type: 'string',
    metavar: 'FILE[,FILE…]',
    help: 'with --train-file: validate on these text files (default: the last tenth of the training text)',
  },
  config: {
    type: 'string',
    metavar: 'FILE',
    help: 'a JSON file of flags, e.g. { "steps": 200, "train-file": "my.txt" } (flags on the command line win)',
  },
  'eval-tokens': {
    ...COMMON_TRAIN_FLAGS['eval-tokens'],
    help:
      "validation (periodic and final) on the first N tokens of wiki.valid (default: a quarter of the run's " +
      'training tokens, at least 16,384; all of wiki.valid for runs of 4× its size)',
  },
  'full-eval': {
    type: 'boolean',
    help: 'validate on all of wiki.valid (what studies do when --eval-tokens is not given)',
  },
  out: { type: 'string', metavar: 'DIR', help: 'run folder (default runs/<model>-<preset>-s<seed>)' },
  resume: {
    type: 'string',
    metavar: 'DIR',
    help:
      'continue the run in DIR from checkpoints/latest (its config.json fixes everything else but a larger total: ' +
      "--steps/--tokens/--epochs extend a run, finished or not, recorded in config.json's history)",
  },
} as const satisfies FlagSpecs;

const USAGE =
  'grassflow-lm train --model grassmann|transformer-dpa|transformer-ea --preset P [--train-file F [--valid-file F]] ' +
  '[overrides] [--epochs E|--steps S|--tokens T] [--config run.json]';
const DESCRIPTION =
  'Train a language model on WikiText-2, or on your own text with --train-file, into a run folder (config.json, ' +
  'metrics.jsonl + metrics.csv, checkpoints/{latest,best}, report.md). The sequence length is --seq-len; seqLen ≤ ' +
  'maxLen, and train sets maxLen = seqLen. Every evaluation scores the first --eval-tokens of ' +
  "wiki.valid or the validation text (default: a quarter of the run's training tokens, at least 16,384; " +
  '--full-eval: all); the start line says how many. Without a terminal (a log, CI) or with --quiet: a training ' +
  'line every 10% of the run and at least every 30 s, and one line per evaluation.';

/** Flags that give a run's length: next to --resume, a new (larger) total. */
const LENGTH_FLAGS = ['steps', 'tokens', 'epochs'] as const;

/** Everything `train` does, resolved once from its flags: every check that needs no data is done. */
export type TrainPlan =
  | {
      kind: 'fresh';
      run: FreshRun;
      tok: CorpusTokenizer;
      dataDir: string;
      source: TextSource;
      backend: string | undefined;
    }
  | {
      kind: 'resume';
      opened: OpenedRun<RunConfig>;
      tok: CorpusTokenizer;
      dataDir: string;
      source: TextSource;
      backend: string | undefined;
      control: RunControl;
      /** A new length given next to --resume (extends the run; a smaller total is refused once the data is read). */
      extend?: { length: TrainingConfig['length']; flag: string };
    };

/** Where a fresh run's resolution differs between commands: the folder, the command line, and compare's defaults. */
export interface FreshRunSetting extends Pick<FreshRun, 'out' | 'command' | 'control' | 'evalDefault'> {
  /** The sequence length without --seq-len (default: the preset's). */
  seqLen?: number;
  /** The run's length without --epochs/--steps/--tokens (default: 1 epoch). */
  length?: TrainingConfig['length'];
}

/**
 * A fresh run of `modelKind` from train's flags (train's plan, and compare's once per kind): the sequence length
 * resolved once, then the model config (its positional table holds seqLen; vocabulary from the tokenizer) and the
 * training config.
 */
export function freshRunOf(
  modelKind: ModelKind,
  f: CommonTrainFlags,
  vocabSize: number,
  setting: FreshRunSetting,
): FreshRun {
  const { seqLen: defaultSeqLen, length, ...run } = setting;
  const seqLen = seqLenOf(f, defaultSeqLen);
  const model = modelConfigFrom(modelKind, f, vocabSize, seqLen);
  return { ...run, modelKind, preset: f.preset, model, training: trainingConfigFrom(f, seqLen, length) };
}

/**
 * The plan of `grassflow-lm train ARGV`: flags parsed and checked once; on --resume config.json read once (it fixes the
 * model, the training and the tokenizer); for a fresh run the model config (vocabulary from the tokenizer) and the
 * training config in one step.
 */
export async function planTrain(argv: readonly string[]): Promise<TrainPlan> {
  const f = parseFlags(argvWithConfigFile(argv, TRAIN_FLAGS), TRAIN_FLAGS);
  const control: RunControl = { quiet: f.quiet, stopAtStep: f['stop-at-step'] };
  const dataDir = dataDirOrThrow(f['data-dir']);
  if (f.resume !== undefined) {
    checkResumeFlags(argv, [...RESUME_FLAGS, ...LENGTH_FLAGS]);
    const flag = LENGTH_FLAGS.find((k) => f[k] !== undefined);
    const extend = flag === undefined ? undefined : { flag, length: runLengthFrom(f) }; // one of them, or a UsageError
    const opened = await openRunToResume<StoredRunConfig>(f.resume, 'grassflow-lm-run'); // read once
    const tok = await loadTokenizer(opened.config.data.tokenizer as TokenizerKind, dataDir);
    const { trainFiles, validFiles } = opened.config.data;
    return {
      kind: 'resume',
      opened: { ...opened, config: resumedConfig(opened.config) },
      tok,
      dataDir,
      source:
        trainFiles === undefined ? { kind: 'wikitext' } : { kind: 'files', train: trainFiles, valid: validFiles ?? [] },
      backend: f.backend,
      control,
      ...(extend === undefined ? {} : { extend }),
    };
  }
  if (f['full-eval'] === true && f['eval-tokens'] !== undefined) {
    throw new UsageError('give --full-eval or --eval-tokens, not both', 'full-eval');
  }
  const source = textSourceOf(f['train-file'], f['valid-file'], f.tokenizer);
  const modelKind = f.model as ModelKind;
  const tok = await loadTokenizer(f.tokenizer as TokenizerKind, dataDir);
  const run = freshRunOf(modelKind, f, tok.vocabSize, {
    out: f.out ?? `runs/${modelKind}-${f.preset}-s${f.seed}`,
    command: ['grassflow-lm', 'train', ...argv].join(' '),
    control,
    evalDefault: f['full-eval'] === true ? 'full' : 'proportionate',
  });
  return { kind: 'fresh', run, tok, dataDir, source, backend: f.backend };
}

/** --train-file/--valid-file as a text source (each a comma-separated list of paths), or WikiText-2 without them. */
function textSourceOf(train: string | undefined, valid: string | undefined, tokenizer: string): TextSource {
  if (train === undefined) {
    if (valid !== undefined)
      throw new UsageError('--valid-file goes with --train-file (the text to train on)', 'valid-file');
    return { kind: 'wikitext' };
  }
  if (tokenizer === 'word') {
    throw new UsageError(
      "--tokenizer word is WikiText-2's own vocabulary: train on your text with --tokenizer wordpiece (the default)",
      'tokenizer',
    );
  }
  return {
    kind: 'files',
    train: textFileList(train, 'train-file'),
    valid: valid === undefined ? [] : textFileList(valid, 'valid-file'),
  };
}

/** Run a plan: start the backend, load the token ids, train (or resume); the line on stderr says how it ended. */
export async function runTrainPlan(plan: TrainPlan): Promise<number> {
  const backend = await startBackend(plan.backend);
  const data = await loadRunData(plan.tok, plan.dataDir, plan.source);
  const o: RunOutcome =
    plan.kind === 'resume'
      ? await resumeRun(plan.opened, data, plan.control, plan.extend)
      : await startRun(plan.run, data, backend);
  const end = describeRunEnd(o.result, o.run, {
    metric: 'val PPL',
    format: (v) => v.toFixed(2),
    reportPath: o.reportPath,
  });
  process.stderr.write(`${end}\n`);
  return runExitCode(o.result);
}

/** `train`: flags → plan (once) → run; `--help` prints the flags. */
export const trainCli: CliCommand = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: TRAIN_FLAGS,
  help: 'train a model into a run folder (--resume to continue one)',
  plan: planTrain,
  run: runTrainPlan,
});

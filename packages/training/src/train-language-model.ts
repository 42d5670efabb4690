// Train a language model on text or token ids in one call: the LM task on trainRun (the loop `grassflow-lm train`
// runs), in memory or in a run folder with checkpoints.
import type { LanguageModel } from '@grassflow/gpu-layers';
import type { LmBatcherState } from '@grassflow/datasets';
import type { AdamW } from './adamw.js';
import type { EarlyStopRule } from './early-stop.js';
import { LmTrainTask } from './lm-task.js';
import { namedParameters } from './named-params.js';
import type { ProgressUpdate } from './progress.js';
import type { MetricRecord, RunSink } from './run-folder.js';
import { trainRun, type OptimizerConfig, type ResumePoint, type TrainRunOutcome } from './run/lifecycle.js';
import type { TrainerState } from './trainer-checkpoint.js';

/** What turns text into token ids: e.g. @grassflow/tokenizers' WordPieceTokenizer (its `encodeCorpus`). */
export interface CorpusEncoder {
  encodeCorpus(text: string): Int32Array | Promise<Int32Array>;
}

/** The optimizer of a {@link trainLanguageModel} call when none is given: AdamW, lr 5e-4 to 5e-5, the CLI's. */
export const DEFAULT_LM_OPTIMIZER: OptimizerConfig = {
  lr: 5e-4,
  minLr: 5e-5,
  weightDecay: 0.01,
  clip: 1,
  beta1: 0.9,
  beta2: 0.98,
};

/** Where a run writes its checkpoints and metrics: what `grassflow-lm train` passes (a library call needs none). */
export interface LanguageModelRunFolder<R extends RunSink> {
  run: R;
  /** Write model + optimizer + trainer state to a checkpoint folder. */
  save: (dir: string, state: TrainerState, optimizer: AdamW) => Promise<void>;
  /** Write the report of a finished run; returns its path. */
  report: () => Promise<string>;
  /** The first progress line (after `run DIR:`) and the ones below it. */
  describe: string;
  notes?: readonly string[];
  checkpointEvery?: number;
  stopAtStep?: number;
  resume?: ResumePoint;
  quiet: boolean;
}

/** Options of {@link trainLanguageModel}: the model, its data (text with a tokenizer, or ids), and how long. */
export interface TrainLanguageModelOptions<R extends RunSink = RunSink> {
  model: LanguageModel;
  /** Text to train on, encoded with `tokenizer` (or give `ids`). */
  text?: string;
  /** Token ids to train on (or give `text` and `tokenizer`). */
  ids?: Int32Array;
  /** Validation text (encoded with `tokenizer`) or ids; absent: no evaluation. */
  validText?: string;
  validIds?: Int32Array;
  tokenizer?: CorpusEncoder;
  /** Optimizer steps. */
  steps: number;
  /** Sequences a step (default 8). */
  batch?: number;
  /** Tokens a sequence (default the model's maxLen). */
  seqLen?: number;
  /** Sequences a micro-batch (a divisor of batch; default batch). */
  microBatch?: number;
  /** AdamW, warmup and cosine decay (default {@link DEFAULT_LM_OPTIMIZER}, warmup 10% of the run). */
  optimizer?: Partial<OptimizerConfig>;
  /** Seed of the batch order and dropout (default 1). */
  seed?: number;
  /** Evaluate every N steps and at the end (default 0: only at the end, when there is validation data). */
  evalEvery?: number;
  /** Metrics records every N steps (default 10). */
  logEvery?: number;
  earlyStop?: EarlyStopRule;
  /** Told each step's loss and learning rate. */
  onStep?: (update: ProgressUpdate) => void;
  /**
   * A run folder to write (checkpoints, metrics, report): `grassflow-lm train`'s. Absent: nothing is written, the
   * metrics are returned, and no progress line is printed.
   */
  folder?: LanguageModelRunFolder<R>;
  /** Called at the end (after the last checkpoint): the CLI frees its model; a library call keeps it (default). */
  dispose?: () => void;
}

/** What {@link trainLanguageModel} returns. */
export interface TrainLanguageModelResult<R extends RunSink = RunSink> extends TrainRunOutcome<R> {
  /** The metrics records the loop wrote: train records every logEvery steps, and the evaluations. */
  metrics: MetricRecord[];
  /** The last evaluation's perplexity and mean NLL on the validation ids, or null without validation data. */
  validation: { ppl: number; nll: number; tokens: number } | null;
}

/** The ids of `text` (under `tokenizer`) or `ids`, given as the options `names` ([text, ids]); undefined: neither. */
async function idsOf(
  names: readonly [string, string],
  text: string | undefined,
  ids: Int32Array | undefined,
  tokenizer: CorpusEncoder | undefined,
): Promise<Int32Array | undefined> {
  if (text !== undefined && ids !== undefined) throw new TypeError(`give ${names[0]} or ${names[1]}, not both`);
  if (ids !== undefined) return ids;
  if (text === undefined) return undefined;
  if (tokenizer === undefined)
    throw new TypeError(`${names[0]} needs a tokenizer (anything with encodeCorpus(text)), or give ${names[1]}`);
  return tokenizer.encodeCorpus(text);
}

/** An in-memory run: metrics kept in an array, no checkpoint written. */
function memorySink(records: MetricRecord[]): RunSink {
  return {
    dir: '(in memory)',
    latestCheckpoint: '(in memory)',
    bestCheckpoint: '(in memory)',
    appendMetric: (r) => {
      records.push(r);
      return Promise.resolve();
    },
    truncateMetricsAfter: (step) => {
      records.splice(0, records.length, ...records.filter((r) => r.step <= step));
      return Promise.resolve();
    },
  };
}

/**
 * Train `model` for `steps` optimizer steps on `text` (with `tokenizer`) or `ids`: shuffled windows of seqLen + 1
 * tokens, B a step, AdamW with warmup and cosine decay, the validation perplexity at the end (and every evalEvery
 * steps). The loop is `grassflow-lm train`'s; without `folder` nothing is written. The model is trained in place.
 *
 * ```ts
 * const r = await trainLanguageModel({ model, text, tokenizer, steps: 200, onStep: (u) => console.log(u.loss) });
 * ```
 */
export async function trainLanguageModel<R extends RunSink = RunSink>(
  o: TrainLanguageModelOptions<R>,
): Promise<TrainLanguageModelResult<R>> {
  const train = await idsOf(['text', 'ids'], o.text, o.ids, o.tokenizer);
  if (train === undefined) throw new TypeError('give text (with a tokenizer) or ids to train on');
  const valid = await idsOf(['validText', 'validIds'], o.validText, o.validIds, o.tokenizer);
  const { maxLen } = o.model.config;
  if (!Number.isInteger(o.steps) || o.steps < 1) throw new RangeError(`steps must be an integer >= 1, got ${o.steps}`);
  const batch = o.batch ?? 8;
  const seqLen = o.seqLen ?? maxLen;
  const seed = o.seed ?? 1;
  if (!Number.isInteger(seqLen) || seqLen < 1 || seqLen > maxLen)
    throw new RangeError(`seqLen must be an integer in [1, maxLen = ${maxLen}], got ${seqLen}`);
  const rows = Math.floor(train.length / (seqLen + 1));
  if (rows < batch) {
    throw new RangeError(
      `the training data (${train.length} tokens) holds ${rows} windows of ${seqLen + 1} tokens, fewer than the ` +
        `batch of ${batch}: give more text, or a smaller batch or seqLen`,
    );
  }
  const metrics: MetricRecord[] = [];
  const folder = o.folder;
  const run = folder?.run ?? (memorySink(metrics) as R);
  const task = new LmTrainTask(o.model, train, valid ?? new Int32Array(0), {
    seqLen,
    batch,
    seed,
    ...(o.microBatch === undefined ? {} : { microBatch: o.microBatch }),
  });
  const evaluates = valid !== undefined && valid.length > 1;
  // without validation data the end's "evaluation" is the last step's training loss
  let lastLoss = Number.NaN;
  const onStep = (u: ProgressUpdate): void => {
    lastLoss = u.loss;
    o.onStep?.(u);
  };
  const outcome = await trainRun<LmBatcherState, R>(
    evaluates ? task : { ...taskMethods(task), evaluate: () => Promise.resolve({ train_loss: lastLoss }) },
    {
      run,
      params: namedParameters(o.model),
      optimizer: { ...DEFAULT_LM_OPTIMIZER, ...o.optimizer },
      totalSteps: o.steps,
      seed,
      evalEvery: evaluates ? (o.evalEvery ?? 0) : 0,
      logEvery: o.logEvery ?? 10,
      bestMetric: evaluates ? 'val_ppl' : 'train_loss',
      ...(o.earlyStop === undefined ? {} : { earlyStop: o.earlyStop }),
      save: folder?.save ?? (() => Promise.resolve()),
      quiet: folder?.quiet ?? true,
      silent: folder === undefined,
      onStep,
      describe: folder?.describe ?? '',
      ...(folder?.notes === undefined ? {} : { notes: folder.notes }),
      ...(folder?.checkpointEvery === undefined ? {} : { checkpointEvery: folder.checkpointEvery }),
      ...(folder?.stopAtStep === undefined ? {} : { stopAtStep: folder.stopAtStep }),
      ...(folder?.resume === undefined ? {} : { resume: folder.resume }),
      report: folder?.report ?? (() => Promise.resolve('')),
      dispose: o.dispose ?? (() => undefined),
    },
  );
  const e = outcome.result.lastEval;
  const validation =
    evaluates && e !== null
      ? { ppl: e['val_ppl'] ?? NaN, nll: e['val_nll'] ?? NaN, tokens: e['val_tokens'] ?? 0 }
      : null;
  return { ...outcome, metrics, validation };
}

/** The task's methods bound, for a variant that replaces one of them. */
function taskMethods(task: LmTrainTask): Pick<LmTrainTask, 'nextBatch' | 'dataState' | 'restore'> {
  return {
    nextBatch: () => task.nextBatch(),
    dataState: () => task.dataState(),
    restore: (s) => task.restore(s),
  };
}

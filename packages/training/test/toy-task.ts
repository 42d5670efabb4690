// A deterministic TrainTask for the loop and lifecycle tests (batch k is a pure function of k), and a run of it.
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { createModel, lmLoss, preset, type LanguageModel } from '@grassflow/gpu-layers';
import {
  createRun,
  loadTrainerCheckpoint,
  namedParameters,
  openRunToResume,
  optimizerConfigFrom,
  optimizerFlagSpecs,
  parseFlags,
  saveTrainerCheckpoint,
  trainRun,
  TrainingRng,
  type EarlyStopRule,
  type ResumableTask,
  type ResumePoint,
} from '@grassflow/training';

/** Random ids from a PRNG seeded by the batch index; validation improves as 1 / (1 + position). */
export class ToyTask implements ResumableTask<{ position: number }> {
  position = 0;
  constructor(private readonly model: LanguageModel) {}
  nextBatch() {
    const rng = new TrainingRng(this.position++);
    const ids = Array.from({ length: 4 * 9 }, () => rng.nextUint32() % 64);
    const x = ids.filter((_, i) => i % 9 !== 8);
    const y = ids.filter((_, i) => i % 9 !== 0);
    const loss = () =>
      lmLoss(this.model.apply(tf.tensor2d(x, [4, 8], 'int32'), { training: true }), tf.tensor2d(y, [4, 8], 'int32'));
    return { tokens: 32, loss };
  }
  dataState() {
    return { position: this.position };
  }
  restore(data: { position: number }) {
    this.position = data.position;
  }
  evaluate() {
    return Promise.resolve({ val: 1 / (1 + this.position) });
  }
}

/** AdamW at lr 0.01 with 2 warmup steps: the toy runs' optimizer. */
export const TOY_OPTIMIZER = optimizerConfigFrom(
  parseFlags(['--lr', '0.01', '--warmup', '2'], optimizerFlagSpecs({ lr: 1, warmup: 0 })),
);

/** Options of {@link trainToyRun}. */
export interface ToyRunOptions {
  readonly totalSteps: number;
  readonly evalEvery: number;
  /** The task over the run's model (default ToyTask). */
  readonly task?: (model: LanguageModel) => ToyTask;
  readonly stopAtStep?: number;
  /** Resume the run in `dir` from its latest checkpoint instead of starting one. */
  readonly resume?: boolean;
  readonly earlyStop?: EarlyStopRule;
}

/**
 * A toy run through trainRun, the lifecycle the apps use: the tiny preset (seed 4), AdamW at lr 0.01 with 2 warmup
 * steps, best by `val`, a checkpoint at each evaluation; returns trainRun's outcome and the metrics it logged.
 */
export async function trainToyRun(dir: string, opts: ToyRunOptions) {
  let model: LanguageModel;
  let resume: ResumePoint | undefined;
  const opened = opts.resume === true ? await openRunToResume<{ format: 'toy-run' }>(dir, 'toy-run') : null;
  const run = opened?.run ?? (await createRun(dir, { format: 'toy-run' }));
  if (opened !== null) {
    const ck = await loadTrainerCheckpoint(run.latestCheckpoint);
    model = ck.model;
    resume = { state: ck.state, optimizerTensors: ck.optimizerTensors };
  } else model = createModel(preset('tiny'), { seed: 4 });
  const o = await trainRun((opts.task ?? ((m) => new ToyTask(m)))(model), {
    run,
    params: namedParameters(model),
    optimizer: TOY_OPTIMIZER,
    totalSteps: opts.totalSteps,
    seed: 7,
    evalEvery: opts.evalEvery,
    logEvery: 1,
    bestMetric: 'val',
    ...(opts.earlyStop === undefined ? {} : { earlyStop: opts.earlyStop }),
    save: (d, s, opt) => saveTrainerCheckpoint(d, model, opt, s),
    ...(resume === undefined ? {} : { resume }),
    ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
    quiet: true,
    describe: 'toy',
    report: () => Promise.resolve(join(dir, 'report.md')),
    dispose: () => model.dispose(),
  });
  return { ...o, metrics: await run.readMetrics() };
}

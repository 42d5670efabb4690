import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  namedParameters,
  Progress,
  RunFolder,
  runTraining,
  TrainingRng,
  describeRunEnd,
} from '@grassflow/training';
import { ToyTask } from './toy-task.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** A stream that keeps what is written; `tty` makes it look like a terminal. */
function capture(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let out = '';
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  if (tty) Object.assign(w, { isTTY: true, columns: 200 });
  return { stream: w, text: () => out };
}

/** A toy task whose evaluation reports its progress in 4 batches of 25 targets. */
class ProgressToyTask extends ToyTask {
  override async evaluate(progress?: (tokens: number, total: number) => void) {
    for (let k = 1; k <= 4; k++) progress?.(25 * k, 100);
    return super.evaluate();
  }
}

async function trainToy(stream: NodeJS.WriteStream, totalSteps: number) {
  const model = createModel(preset('tiny'), { seed: 4 });
  const optimizer = new AdamW(namedParameters(model), { weightDecay: 0 });
  const run = new RunFolder(join(mkdtempSync(join(tmpdir(), 'grassflow-progress-')), 'run'));
  await run.init({ format: 'toy-run' });
  try {
    return await runTraining(new ProgressToyTask(model), {
      optimizer,
      rng: new TrainingRng(1),
      lr: () => 1e-3,
      totalSteps,
      evalEvery: 10,
      logEvery: 1,
      bestMetric: 'val',
      run,
      save: () => Promise.resolve(),
      progress: new Progress(totalSteps, { stream }),
    });
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

describe('progress without a terminal', () => {
  it('prints a line every 10% of the run (step, loss, lr, tok/s, elapsed, ETA), evals with their time', async () => {
    const out = capture(false);
    const result = await trainToy(out.stream, 20);
    const lines = out.text().split('\n');
    const train = lines.filter((l) => /^step \d+\/20 loss/.test(l));
    expect(train.map((l) => Number(/^step (\d+)/.exec(l)?.[1]))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    for (const l of train) {
      expect(l).toMatch(/^step \d+\/20 loss \d+\.\d{4} lr 1\.00e-3 [\d,]+ tok\/s elapsed \d+s ETA \d+s$/);
    }
    expect(lines.filter((l) => / eval val /.test(l))).toHaveLength(2);
    expect(lines.find((l) => l.startsWith('step 20/20 eval'))).toMatch(/ in \d+s$/);
    expect(out.text()).not.toContain('\r'); // no bar
    const end = describeRunEnd(
      result,
      { dir: 'r', latestCheckpoint: 'r/c' },
      {
        metric: 'val',
        format: String,
        reportPath: 'r/report.md',
      },
    );
    expect(end).toMatch(/^done: 20 steps in \d+s wall time \(\d+s in training steps\), best val/);
  });

  it('on a terminal draws the bar with elapsed time, and the evaluation as tokens done with an ETA', async () => {
    const out = capture(true);
    await trainToy(out.stream, 10);
    const text = out.text();
    expect(text).toMatch(/\r\[#+-*\] 5\/10 loss \d+\.\d{4} lr 1\.00e-3 [\d,]+ tok\/s elapsed \d+s ETA \d+s/);
    expect(text).toMatch(/\reval \[#####-{15}\] 25\/100 tokens elapsed \d+s ETA \d+s/);
    expect(text).toMatch(/\reval \[#{20}\] 100\/100 tokens elapsed \d+s ETA 0s/);
    expect(text).not.toMatch(/\nstep \d+\/10 loss/); // no plain training lines beside the bar
  });
});

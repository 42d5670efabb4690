import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkEarlyStopRule, DEFAULT_EARLY_STOP, earlyStopDecision, loadTrainerCheckpoint } from '@grassflow/training';
import { ToyTask, trainToyRun } from './toy-task';

const rule = DEFAULT_EARLY_STOP; // 0.5% over the last 20% of the steps so far, from the 5th evaluation on

describe('earlyStopDecision', () => {
  it('compares the best so far with the best at steps ≤ 0.8·s, and fires only from the minEvals-th evaluation', () => {
    const flat: Array<[number, number]> = [
      [10, 100],
      [20, 90],
      [30, 89.9],
      [40, 89.8],
    ];
    expect(earlyStopDecision(flat, rule)).toBeNull(); // 4 evaluations: too few, however flat
    const five: Array<[number, number]> = [...flat, [50, 89.7]];
    // at s = 50: before = lowest at steps ≤ 40 (89.8 at 40), best 89.7 → 0.11% < 0.5%
    const d = earlyStopDecision(five, rule);
    expect(d).toEqual({
      step: 50,
      before: { value: 89.8, step: 40 },
      best: { value: 89.7, step: 50 },
      improvement: (89.8 - 89.7) / 89.8,
    });
    // 0.6% better over the window: the run goes on
    expect(earlyStopDecision([...flat, [50, 89.8 * 0.994]], rule)).toBeNull();
    // a worse evaluation is not an improvement: the best stays the earlier one
    expect(earlyStopDecision([...flat, [50, 95]], rule)?.best).toEqual({ value: 89.8, step: 40 });
  });

  it('needs an evaluation at or before (1 − window)·s, and skips non-finite values', () => {
    const late: Array<[number, number]> = [
      [90, 5],
      [92, 5],
      [94, 5],
      [96, 5],
      [98, 5],
    ];
    expect(earlyStopDecision(late, rule)).toBeNull(); // nothing at steps ≤ 78.4
    const withNaN: Array<[number, number]> = [[10, NaN], ...late];
    expect(earlyStopDecision(withNaN, rule)).toBeNull();
    const withOld: Array<[number, number]> = [[10, 5.01], ...late];
    expect(earlyStopDecision(withOld, rule)?.before).toEqual({ value: 5.01, step: 10 });
  });

  it('refuses a rule outside its ranges', () => {
    expect(() => checkEarlyStopRule({ minImprovement: 0, window: 0.2, minEvals: 5 })).toThrow(/minImprovement/);
    expect(() => checkEarlyStopRule({ minImprovement: 0.005, window: 1, minEvals: 5 })).toThrow(/window/);
    expect(checkEarlyStopRule(rule)).toEqual(rule);
  });
});

/** ToyTask whose validation stops improving after 6 batches: 1/(1 + min(position, 6)). */
class PlateauTask extends ToyTask {
  override evaluate() {
    return Promise.resolve({ val: 1 / (1 + Math.min(this.position, 6)) });
  }
}

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** The toy run of 40 steps, evaluated every 2, with the default rule unless earlyStop is false. */
const train = (dir: string, opts: { stopAtStep?: number; resume?: boolean; earlyStop?: boolean }) =>
  trainToyRun(dir, {
    totalSteps: 40,
    evalEvery: 2,
    task: (m) => new PlateauTask(m),
    ...(opts.earlyStop === false ? {} : { earlyStop: rule }),
    ...(opts.stopAtStep === undefined ? {} : { stopAtStep: opts.stopAtStep }),
    ...(opts.resume === undefined ? {} : { resume: opts.resume }),
  });

describe('trainRun with earlyStop', () => {
  it('stops at the first evaluation the rule fires on, keeps best and latest, and a resume stops there too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'grassflow-early-stop-'));
    const full = await train(join(root, 'full'), { earlyStop: false });
    expect(full.result.state.step).toBe(40);
    expect(full.result.stoppedEarly).toBeUndefined();

    const a = await train(join(root, 'a'), {});
    // evaluations at 2, 4, …: flat from step 6 on (1/7); the 5th, at s = 10, compares it with the best at steps ≤ 8
    expect(a.result.status).toBe('finished');
    expect(a.result.state.step).toBe(10);
    expect(a.result.stoppedEarly).toEqual({
      step: 10,
      before: { value: 1 / 7, step: 6 },
      best: { value: 1 / 7, step: 6 },
      improvement: 0,
    });
    expect(a.reportPath).toBe(join(root, 'a', 'report.md'));
    expect(a.metrics.filter((r) => r.type === 'early_stop')).toEqual([
      {
        type: 'early_stop',
        step: 10,
        best_step: 6,
        best_value: 1 / 7,
        before_step: 6,
        before_value: 1 / 7,
        improvement: 0,
      },
    ]);
    const best = await loadTrainerCheckpoint(a.run.bestCheckpoint);
    const latest = await loadTrainerCheckpoint(a.run.latestCheckpoint);
    expect(best.state.step).toBe(6);
    expect(latest.state.step).toBe(10);
    expect(latest.state.stoppedEarly?.step).toBe(10);
    for (const c of [best, latest]) {
      c.model.dispose();
      for (const t of c.optimizerTensors.values()) t.dispose();
    }

    const b1 = await train(join(root, 'b'), { stopAtStep: 5 });
    expect(b1.result.status).toBe('stopped');
    const b = await train(join(root, 'b'), { resume: true });
    const strip = (m: typeof a.metrics) => m.map(({ tokens_per_s: _t, eval_seconds: _e, ...r }) => r);
    expect(strip(b.metrics)).toEqual(strip(a.metrics));
    expect(b.result.stoppedEarly).toEqual(a.result.stoppedEarly);
    // resuming a run that stopped early trains nothing more
    const c = await train(join(root, 'a'), { resume: true });
    expect(c.result.state.step).toBe(10);
    expect(c.result.stoppedEarly).toEqual(a.result.stoppedEarly);
    expect(strip(c.metrics)).toEqual(strip(a.metrics));
  });
});

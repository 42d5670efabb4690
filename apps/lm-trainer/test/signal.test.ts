import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '@grassflow/gpu-layers';
import { loadTrainerCheckpoint } from '@grassflow/training';
import { describe, expect, it } from 'vitest';
import { cliAsync, DATA_DIR, TINY, tmp } from './helpers.js';

describe.skipIf(DATA_DIR === undefined)('SIGINT (needs GRASSFLOW_DATA_DIR)', () => {
  it('writes a checkpoint that loads (step, data position, AdamW moments), then exits with 130', async () => {
    const run = join(tmp(), 'run');
    const child = cliAsync([
      'train',
      '--model',
      'grassmann',
      ...TINY,
      '--steps',
      '100000',
      '--eval-every',
      '0',
      '--out',
      run,
    ]);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const metrics = join(run, 'metrics.jsonl');
    const deadline = Date.now() + 90_000;
    while (!(existsSync(metrics) && readFileSync(metrics, 'utf8').split('\n').length > 3)) {
      if (Date.now() > deadline) throw new Error(`no training steps within 90 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    expect(stderr).toContain('SIGINT received');
    expect(stderr).toMatch(/interrupted by SIGINT at step \d+/);
    await initBackend({ backend: 'cpu' });
    const ck = await loadTrainerCheckpoint(join(run, 'checkpoints/latest'));
    const step = Number(/at step (\d+)/.exec(stderr)?.[1]);
    expect(ck.state.step).toBe(step);
    expect(ck.state.step).toBeGreaterThanOrEqual(3);
    expect(ck.state.data).toMatchObject({ epoch: 0, position: 8 * step, seed: 1 });
    expect(ck.optimizerTensors.size).toBe(2 * ck.model.trainableVariables().length);
    ck.model.dispose();
  });
});

/** Start a run whose first step (32 × 4,096 tokens through the tied 30,522-way head) outlasts the test's waits. */
async function startLongStep(extraEnv: NodeJS.ProcessEnv = {}) {
  const run = join(tmp(), 'run');
  const args = ['train', '--model', 'grassmann', '--preset', 'tiny', '--quiet', '--seq-len', '4096', '--batch', '32'];
  const child = cliAsync([...args, '--steps', '5', '--eval-every', '0', '--out', run], extraEnv);
  const out = { stderr: '' };
  child.stderr?.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  const deadline = Date.now() + 90_000;
  while (!/^run /m.test(out.stderr)) {
    if (Date.now() > deadline) throw new Error(`training did not start within 90 s: ${out.stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 2000)); // inside the first step now
  return { child, out, exited };
}

describe.skipIf(DATA_DIR === undefined)('signals during a long step (needs GRASSFLOW_DATA_DIR)', () => {
  it('a second SIGTERM stops the run at once (the supervisor kills its child)', async () => {
    const { child, out, exited } = await startLongStep();
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    child.kill('SIGTERM');
    expect(await exited, out.stderr).toBe(143);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(out.stderr).toContain('SIGTERM received: stopping after the current step');
    expect(out.stderr).toContain('SIGTERM again: stopped mid-step');
    expect(out.stderr).not.toMatch(/interrupted by SIGTERM at step/); // the step never finished
  });

  it('one SIGTERM stops it within the grace period when the step does not end (GRASSFLOW_STOP_GRACE)', async () => {
    const { child, out, exited } = await startLongStep({ GRASSFLOW_STOP_GRACE: '2' });
    const t0 = Date.now();
    child.kill('SIGTERM');
    expect(await exited, out.stderr).toBe(143);
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(out.stderr).toContain('or in 2 s at the latest');
    expect(out.stderr).toContain('the step in progress did not end within 2 s: stopped mid-step');
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '@grassflow/gpu-layers';
import { loadTrainerCheckpoint } from '@grassflow/training';
import { describe, expect, it } from 'vitest';
import { cliAsync, DATA_DIR, TINY, tmp } from './helpers';

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

describe.skipIf(DATA_DIR === undefined)('a second SIGTERM mid-step (needs GRASSFLOW_DATA_DIR)', () => {
  it('stops a run at once even while one long step holds the trainer (the supervisor kills its child)', async () => {
    const run = join(tmp(), 'run');
    // one step of 32 × 4,096 tokens through the tied 30,522-way head takes far longer than the test waits
    const child = cliAsync(
      [
        'train',
        '--model',
        'grassmann',
        '--preset',
        'tiny',
        '--quiet',
        '--seq-len',
        '4096',
        '--batch',
        '32',
        '--steps',
        '5',
      ].concat(['--eval-every', '0', '--out', run]),
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const deadline = Date.now() + 90_000;
    while (!/^run /m.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`training did not start within 90 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 2000)); // inside the first step now
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    child.kill('SIGTERM');
    expect(await exited, stderr).toBe(143);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(stderr).toContain('SIGTERM received: stopping after the current step');
    expect(stderr).toContain('SIGTERM again: stopped at once, mid-step');
    expect(stderr).not.toMatch(/interrupted by SIGTERM at step/); // the step never finished
  });
});

import { cpSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '@grassflow/gpu-layers';
import { loadTrainerCheckpoint } from '@grassflow/training';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, describeRun, TINY, tmp } from './helpers.js';

describe('clear errors', () => {
  it('unknown flags and invalid values name the flag (exit 2)', () => {
    const unknown = cli(['train', '--modle', 'grassmann']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown flag --modle');
    const bad = cli(['train', '--model', 'lstm']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--model must be one of grassmann, transformer-dpa, transformer-ea, got 'lstm'");
    expect(cli(['train', '--steps', '-3']).stderr).toContain('--steps must be >= 1, got -3');
    expect(cli(['train', '--steps', '3', '--epochs', '2']).stderr).toMatch(/only one of --epochs, --steps, --tokens/);
    expect(cli(['train', '--batch', '8', '--micro-batch', '3']).stderr).toContain(
      '--micro-batch 3 must divide --batch 8',
    );
    expect(cli(['eval', '--split', 'train']).stderr).toContain("--split must be one of valid, test, got 'train'");
    expect(cli(['frobnicate']).stderr).toContain("unknown command 'frobnicate'");
    const help = cli(['generate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--top-k');
  });

  it('a missing data folder says which one and how to fix it', () => {
    const r = cli([
      'train',
      '--preset',
      'tiny',
      '--data-dir',
      '/nonexistent/grassflow-data',
      '--out',
      join(tmp(), 'r'),
    ]);
    expect(r.code, describeRun(r)).toBe(1);
    expect(r.stderr).toContain('data folder /nonexistent/grassflow-data (from --data-dir) does not exist');
    expect(r.stderr).toContain('GRASSFLOW_DATA_DIR');
  });

  it.skipIf(DATA_DIR === undefined)(
    'a non-finite loss stops the run naming the step and leaves the last checkpoint as it was',
    async () => {
      const run = join(tmp(), 'run');
      // lr 1e30: the first update makes the weights ~1e30, the second forward pass overflows
      const r = cli([
        'train',
        '--model',
        'grassmann',
        ...TINY,
        '--steps',
        '5',
        '--warmup',
        '0',
        '--lr',
        '1e30',
        '--checkpoint-every',
        '1',
        '--eval-every',
        '0',
        '--out',
        run,
      ]);
      expect(r.code, describeRun(r)).toBe(1);
      const step = Number(
        /NonFiniteLossError: non-finite (?:loss|gradient norm) \([^)]*\) at step (\d+)/.exec(r.stderr)?.[1],
      );
      expect(step, r.stderr).toBeGreaterThanOrEqual(2);
      await initBackend({ backend: 'cpu' });
      const ck = await loadTrainerCheckpoint(join(run, 'checkpoints/latest'));
      expect(ck.state.step).toBe(step - 1);
      ck.model.dispose();
    },
  );

  it.skipIf(DATA_DIR === undefined)('a corrupt checkpoint is reported as such by eval and --resume', () => {
    const run = join(tmp(), 'run');
    const trained = cli([
      'train',
      '--model',
      'transformer-dpa',
      ...TINY,
      '--steps',
      '2',
      '--eval-every',
      '0',
      '--out',
      run,
    ]);
    expect(trained.code, describeRun(trained)).toBe(0);
    const broken = join(tmp(), 'broken');
    cpSync(run, broken, { recursive: true });
    const file = join(broken, 'checkpoints/latest/model.safetensors');
    truncateSync(file, statSync(file).size - 100);
    cpSync(join(broken, 'checkpoints/latest'), join(broken, 'checkpoints/best'), { recursive: true });
    const ev = cli(['eval', '--checkpoint', broken, '--split', 'valid']);
    expect(ev.code, describeRun(ev)).toBe(1);
    expect(ev.stderr).toMatch(/CheckpointError: .*model\.safetensors/);
    const res = cli(['train', '--resume', broken, '--quiet']);
    expect(res.code, describeRun(res)).toBe(1);
    expect(res.stderr).toMatch(/CheckpointError/);
    expect(res.stderr).toMatch(/checkpoints\/best cannot be read either: start the run again/);
    // with an intact best, --resume says how to continue from it
    cpSync(join(run, 'checkpoints/latest'), join(broken, 'checkpoints/best'), { recursive: true, force: true });
    const hint = cli(['train', '--resume', broken, '--quiet']);
    expect(hint.code, describeRun(hint)).toBe(1);
    expect(hint.stderr).toMatch(
      /checkpoints\/best \(step 2\) is intact: to resume from it, move .*checkpoints\/latest aside/,
    );
  });
});

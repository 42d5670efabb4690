import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, metrics, TINY, tmp } from './helpers';

describe.skipIf(DATA_DIR === undefined)('train, resume, generate (tiny, WikiText-2; needs GRASSFLOW_DATA_DIR)', () => {
  const root = tmp();
  const run = join(root, 'run');

  it('training a tiny model for a few dozen steps lowers the loss and writes the run folder', () => {
    const r = cli([
      'train',
      '--model',
      'grassmann',
      ...TINY,
      '--steps',
      '40',
      '--lr',
      '1e-2',
      '--warmup',
      '5',
      '--eval-every',
      '20',
      '--out',
      run,
    ]);
    expect(r.stderr).toContain('backend: wasm');
    expect(r.code, r.stderr).toBe(0);
    const train = metrics(run).filter((m) => m['type'] === 'train');
    expect(train.map((m) => m['step'])).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const first = train[0]!['loss'] as number;
    const lastFive = train.slice(-5).reduce((s, m) => s + (m['loss'] as number), 0) / 5;
    expect(first).toBeGreaterThan(Math.log(30522) - 0.5); // ≈ ln V at init
    expect(lastFive).toBeLessThan(first - 1.5);
    const evals = metrics(run).filter((m) => m['type'] === 'eval');
    expect(evals.map((m) => m['step'])).toEqual([20, 40]);
    for (const f of [
      'config.json',
      'report.md',
      'loss.svg',
      'loss.png',
      'val-ppl.svg',
      'val-ppl.png',
      'checkpoints/latest/model.safetensors',
      'checkpoints/best/extra.safetensors',
    ]) {
      expect(existsSync(join(run, f)), f).toBe(true);
    }
    const cfg = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      modelKind: 'grassmann',
      totalSteps: 40,
      model: { vocabSize: 30522, dModel: 16 },
      training: { seed: 1, batch: 8, block: 16 },
    });
    expect(readFileSync(join(run, 'report.md'), 'utf8')).toContain('| steps | train tokens |');
  });

  it('generate is deterministic for a seed', () => {
    const args = ['generate', '--checkpoint', run, '--prompt', 'the game was', '--max-tokens', '12'];
    const a = cli([...args, '--seed', '3']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout.startsWith('the game was')).toBe(true);
    expect(cli([...args, '--seed', '3']).stdout).toBe(a.stdout);
    expect(cli([...args, '--seed', '4']).stdout).not.toBe(a.stdout);
  });

  it('resume gives the loss sequence of an uninterrupted run (dropout on)', () => {
    const base = [
      'train',
      '--model',
      'transformer-ea',
      ...TINY,
      '--steps',
      '12',
      '--warmup',
      '3',
      '--lr',
      '3e-3',
      '--eval-every',
      '4',
    ];
    const straight = join(root, 'straight');
    const split = join(root, 'split');
    expect(cli([...base, '--out', straight]).code).toBe(0);
    const first = cli([...base, '--out', split, '--stop-at-step', '6']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('stopped at step 6');
    const second = cli(['train', '--resume', split, '--quiet']);
    expect(second.code, second.stderr).toBe(0);
    const losses = (d: string) =>
      metrics(d)
        .filter((m) => m['type'] === 'train')
        .map((m) => [m['step'], m['loss'], m['lr']]);
    expect(losses(split)).toEqual(losses(straight));
    expect(losses(split)).toHaveLength(12);
    const ppl = (d: string) =>
      metrics(d)
        .filter((m) => m['type'] === 'eval')
        .map((m) => m['val_ppl']);
    expect(ppl(split)).toEqual(ppl(straight));
    expect(cli(['train', '--resume', split, '--lr', '1']).stderr).toMatch(/--lr cannot be combined with --resume/);
  });
});

describe.skipIf(DATA_DIR === undefined)('--seed 0 (needs GRASSFLOW_DATA_DIR)', () => {
  it('is honoured like any other seed: two runs with --seed 0 give the same losses, --seed 1 others', () => {
    const root = tmp();
    const losses = (seed: string, name: string): number[] => {
      const out = join(root, name);
      const args = ['train', '--model', 'grassmann', ...TINY, '--steps', '3', '--eval-every', '0'];
      const r = cli([...args, '--seed', seed, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      return metrics(out)
        .filter((m) => m['type'] === 'train')
        .map((m) => m['loss'] as number);
    };
    const zero = losses('0', 'a');
    expect(zero).toHaveLength(3);
    expect(losses('0', 'b')).toEqual(zero);
    expect(losses('1', 'c')).not.toEqual(zero);
  });
});

describe.skipIf(DATA_DIR === undefined)(
  'an adaptive head through train, resume, eval and generate (needs GRASSFLOW_DATA_DIR)',
  () => {
    const root = tmp();
    const run = join(root, 'adaptive');
    const base = ['train', '--model', 'transformer-dpa', ...TINY, '--head', 'adaptive', '--cutoffs', '2000,10000'];

    it('trains (the loss falls), records the head in config.json and resumes', () => {
      const r = cli([
        ...base,
        '--steps',
        '30',
        '--lr',
        '1e-2',
        '--eval-every',
        '15',
        '--stop-at-step',
        '15',
        '--out',
        run,
      ]);
      expect(r.code, r.stderr).not.toBe(1);
      const resumed = cli(['train', '--resume', run]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const train = metrics(run).filter((m) => m['type'] === 'train');
      expect(train.map((m) => m['step'])).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      const first = train[0]!['loss'] as number;
      const lastFive = train.slice(-5).reduce((s, m) => s + (m['loss'] as number), 0) / 5;
      expect(lastFive).toBeLessThan(first - 1);
      const cfg = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as { model: Record<string, unknown> };
      expect(cfg.model).toMatchObject({ head: 'adaptive', cutoffs: [2000, 10000] });
    });

    it('eval scores the checkpoint and generate samples from it, deterministically for a seed', () => {
      const ev = cli(['eval', '--checkpoint', run, '--split', 'valid', '--batch', '512']);
      expect(ev.code, ev.stderr).toBe(0);
      const result = JSON.parse(ev.stdout.trim().split('\n').pop() as string) as { ppl: number };
      expect(result.ppl).toBeGreaterThan(1);
      expect(result.ppl).toBeLessThan(30522);
      const args = ['generate', '--checkpoint', run, '--prompt', 'the game was', '--max-tokens', '8', '--seed', '3'];
      const a = cli(args);
      expect(a.code, a.stderr).toBe(0);
      expect(a.stdout.startsWith('the game was')).toBe(true);
      expect(cli(args).stdout).toBe(a.stdout);
    });

    it('refuses options of another model kind, and cutoffs without an adaptive head, by name', () => {
      const refuse = (extra: string[], message: RegExp) => {
        const r = cli([
          'train',
          '--model',
          'transformer-dpa',
          ...TINY,
          '--steps',
          '1',
          ...extra,
          '--out',
          join(root, 'x'),
        ]);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(message);
      };
      refuse(['--gate', 'additive'], /--gate applies to --model grassmann, not to --model transformer-dpa/);
      refuse(['--ea-eps', 'relative'], /--ea-eps applies to --model transformer-ea/);
      refuse(['--cutoffs', '100'], /--cutoffs needs --head adaptive/);
    });
  },
);

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, metrics, TINY, tmp } from './helpers.js';

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
      'lr.svg',
      'lr.png',
      'grad-norm.svg',
      'grad-norm.png',
      'metrics.csv',
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
    const report = readFileSync(join(run, 'report.md'), 'utf8');
    expect(report).toContain('| steps | train tokens |');
    expect(report).toContain('![Learning rate](lr.png)');
    expect(report).toContain('![Gradient norm (before clipping)](grad-norm.png)');
    expect(report).toMatch(/validation on the first 256 of [\d,]+ wiki\.valid tokens \(--eval-tokens\)/);
    expect(readFileSync(join(run, 'lr.svg'), 'utf8')).toContain('learning rate');
  });

  it('generate is deterministic for a seed', () => {
    const args = ['generate', '--checkpoint', run, '--prompt', 'the game was', '--max-tokens', '12'];
    const a = cli([...args, '--seed', '3']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout.startsWith('the game was')).toBe(true);
    // the speed line: wall time, the CPU seconds of the sampling (the steadier figure on a shared machine), tokens/s
    expect(a.stderr).toMatch(/^generate: 12 tokens in \d+\.\d\d s \(CPU \d+\.\d\d s\), \d+\.\d tokens\/s /m);
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

describe.skipIf(DATA_DIR === undefined)(
  'the screen without a terminal, and extending a run (needs GRASSFLOW_DATA_DIR)',
  () => {
    const root = tmp();
    const quietless = TINY.filter((a) => a !== '--quiet'); // stderr is a pipe: not a TTY, as in a log or CI

    it('prints a line every 10% of the run, evals with their time, the default eval, a warmup warning', () => {
      const dir = join(root, 'log');
      const args = [
        'train',
        '--model',
        'grassmann',
        ...quietless.filter((a, i, all) => a !== '--eval-tokens' && all[i - 1] !== '--eval-tokens'),
      ];
      const r = cli([...args, '--steps', '20', '--warmup', '30', '--eval-every', '10', '--out', dir]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stderr.split('\n');
      const train = lines.filter((l) => /^step \d+\/20 loss /.test(l));
      expect(train.map((l) => Number(/^step (\d+)/.exec(l)?.[1]))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
      for (const l of train)
        expect(l).toMatch(/ lr \d\.\d\de-\d+ [\d,]+ tok\/s elapsed (?:\d+m)?\d+s ETA (?:\d+m)?\d+s$/);
      expect(lines.filter((l) => /^step (10|20)\/20 eval val_ppl .* in (?:\d+m)?\d+s$/.test(l))).toHaveLength(2);
      expect(r.stderr).not.toContain('\r');
      // the default evaluation: a quarter of 20·8·16 = 2,560 training tokens is below the floor of 16,384
      expect(r.stderr).toMatch(/validation on the first 16,384 of [\d,]+ wiki\.valid tokens \(the default: a quarter/);
      expect(metrics(dir).find((m) => m['type'] === 'eval')?.['val_tokens']).toBe(16383);
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
        training: { evalTokens: unknown };
        data: { evalTokens: number };
      };
      expect(cfg.training.evalTokens).toBeNull(); // the resolved config a study key hashes is as before
      expect(cfg.data.evalTokens).toBe(16384);
      expect(r.stderr).toMatch(
        /warning: --warmup 30 is not shorter than the run's 20 steps: the learning rate never reaches/,
      );
      // durations as formatDuration writes them (45s, 1m02s, 1h05m): the machine's speed decides which
      const d = String.raw`(?:\d+h)?(?:\d+m)?\d+[sm]`;
      expect(r.stderr).toMatch(
        new RegExp(String.raw`^done: 20 steps in ${d} wall time \(${d} in training steps\), best val PPL`, 'm'),
      );
      expect(cli([...args, '--full-eval', '--eval-tokens', '300', '--out', join(root, 'x')]).stderr).toMatch(
        /give --full-eval or --eval-tokens, not both/,
      );
    });

    it('extends a finished run to more --steps (config.json history, steps go on), refuses fewer', () => {
      const dir = join(root, 'extend');
      const base = ['train', '--model', 'grassmann', ...TINY, '--lr', '3e-3', '--eval-every', '0'];
      const first = cli([...base, '--steps', '8', '--out', dir]);
      expect(first.code, first.stderr).toBe(0);
      const more = cli(['train', '--resume', dir, '--steps', '12', '--quiet']);
      expect(more.code, more.stderr).toBe(0);
      expect(more.stderr).toMatch(
        /extending the run from 8 to 12 steps at step 8: the cosine decay now runs over 12 steps/,
      );
      const train = metrics(dir).filter((m) => m['type'] === 'train');
      expect(train.map((m) => m['step'])).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(
        metrics(dir)
          .filter((m) => m['type'] === 'eval')
          .map((m) => m['step']),
      ).toEqual([8, 12]);
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
        totalSteps: number;
        training: { length: unknown; warmup: number };
        history: Array<{ fromSteps: number; toSteps: number; atStep: number; length: unknown; time: string }>;
      };
      expect(cfg.totalSteps).toBe(12);
      expect(cfg.training.length).toEqual({ steps: 12 });
      expect(cfg.training.warmup).toBe(1); // the automatic warmup of 8 steps, kept
      expect(cfg.history).toHaveLength(1);
      expect(cfg.history[0]).toMatchObject({ fromSteps: 8, toSteps: 12, atStep: 8, length: { steps: 12 } });
      expect(Number.isNaN(Date.parse(cfg.history[0]!.time))).toBe(false);
      // the lr after the resumed step: the cosine over 12 steps, min + ½(1 + cos(π·(s − 1)/11))·(peak − min)
      const lr9 = train[8]!['lr'] as number;
      expect(lr9).toBeCloseTo(3e-4 + 0.5 * (1 + Math.cos((Math.PI * 7) / 11)) * (3e-3 - 3e-4), 10);
      // metrics.csv holds the records of both sittings, like metrics.jsonl
      const csv = readFileSync(join(dir, 'metrics.csv'), 'utf8').trimEnd().split('\n');
      const header = (csv[0] as string).split(',');
      expect(header.slice(0, 2)).toEqual(['type', 'step']);
      const rows = csv.slice(1).map((l) => l.split(','));
      expect(rows).toEqual(
        metrics(dir).map((m) => header.map((k) => (m[k] === undefined || m[k] === null ? '' : String(m[k])))),
      );
      expect(readFileSync(join(dir, 'report.md'), 'utf8')).toMatch(/Extended on .* from 8 to 12 steps at step 8/);
      const fewer = cli(['train', '--resume', dir, '--steps', '10']);
      expect(fewer.code).not.toBe(0);
      expect(fewer.stderr).toMatch(/--steps: that is 10 steps, fewer than the run's 12: a run can be extended/);
      expect(cli(['train', '--resume', dir, '--steps', '14', '--tokens', '99']).stderr).toMatch(/give only one of/);
    });
  },
);

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
      expect(ev.stderr).toMatch(/^eval: [\d,]+ targets of wiki\.valid in \d+(m\d+)?s$/m); // the line at the end
      const result = JSON.parse(ev.stdout.trim().split('\n').pop() as string) as { ppl: number };
      expect(result.ppl).toBeGreaterThan(1);
      expect(result.ppl).toBeLessThan(30522);
      // --by-position: the NLL at each window position, and its chart; with windows of the model's length every
      // position but those of the last, partial window is scored equally often, so their mean is near the whole's
      const chart = join(tmp(), 'by-position');
      const bp = cli(['eval', '--checkpoint', run, '--split', 'valid', '--batch', '512', '--by-position', chart]);
      expect(bp.code, bp.stderr).toBe(0);
      const pos = JSON.parse(bp.stdout.trim().split('\n').pop() as string) as {
        nll: number;
        ppl: number;
        nll_by_position: number[];
        ppl_by_position: number[];
      };
      expect(pos.ppl).toBe(result.ppl);
      expect(pos.nll_by_position).toHaveLength(16);
      const meanNll = pos.nll_by_position.reduce((a, b) => a + b, 0) / 16;
      expect(Math.abs(meanNll - pos.nll)).toBeLessThan(0.01 * pos.nll);
      expect(pos.ppl_by_position[0]).toBeCloseTo(Math.exp(pos.nll_by_position[0] as number), 1);
      expect(existsSync(`${chart}.svg`) && existsSync(`${chart}.png`)).toBe(true);
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

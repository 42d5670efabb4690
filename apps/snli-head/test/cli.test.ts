// The CLI end to end on small files: resume equality, eval output, and clear errors for bad input.
import { existsSync, readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, headOf, metrics, tmp } from './helpers.js';

describe('flags', () => {
  it('unknown flags and invalid values name the flag (exit 2); --help works', () => {
    const unknown = cli(['train', '--haed', 'grassmann']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown flag --haed');
    const bad = cli(['train', '--head', 'lstm']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--head must be one of grassmann, transformer, got 'lstm'");
    // flags are not kept under old names: --max-len was --seq-len's
    expect(cli(['train', '--max-len', '32']).stderr).toContain('unknown flag --max-len');
    expect(cli(['train', '--epochs', '0']).stderr).toContain('--epochs must be >= 1, got 0');
    expect(cli(['train', '--lr', 'fast']).stderr).toContain("--lr must be a number, got 'fast'");
    expect(cli(['train', '--resume', '/tmp', '--lr', '1']).stderr).toContain('--lr cannot be combined with --resume');
    expect(cli(['eval', '--split', 'train']).stderr).toContain("--split must be one of dev, test, got 'train'");
    expect(cli(['eval']).stderr).toContain('--checkpoint DIR is required');
    expect(cli(['frobnicate']).stderr).toContain("unknown command 'frobnicate'");
    const help = cli(['train', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--backbone');
    expect(cli(['eval', '--help']).stdout).toContain('--split');
    const params = cli(['params']);
    expect(params.code).toBe(0);
    expect(params.stdout).toMatch(/\| grassmann \| 892,739 \| 1,956,608 \| 2,849,347 \|/);
    expect(params.stdout).toMatch(/\| transformer \| 1,073,923 \| 1,956,608 \| 3,030,531 \|/);
  });

  it('a missing data folder says which one and how to fix it', () => {
    const r = cli(['train', '--data-dir', '/nonexistent/grassflow-data', '--out', join(tmp(), 'r')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'DataDirError: data folder /nonexistent/grassflow-data (from --data-dir) does not exist',
    );
  });
});

describe.skipIf(DATA_DIR === undefined)('with data', () => {
  it('a malformed jsonl line is reported with file:line', () => {
    const dir = tmp();
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      `${readFileSync(join(DATA_DIR as string, 'snli/snli_1.0_dev.jsonl'), 'utf8').split('\n')[0]}\n{"sentence1": "a", oops\n`,
    );
    const r = cli(['train', '--train-file', file, '--out', join(dir, 'run')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`DatasetError: ${file}:2: not valid JSON`);
    const missing = cli(['train', '--train-file', join(dir, 'nope.jsonl'), '--out', join(dir, 'run2')]);
    expect(missing.stderr).toContain(`DataDirError: ${join(dir, 'nope.jsonl')} does not exist`);
  });

  it('train 6 steps = train 3 steps + --resume 3 steps (losses, lr, validation); eval prints accuracy and confusion; a corrupt checkpoint is refused', () => {
    const dir = tmp();
    const train = headOf('train_0.01', 48, dir, 'train.jsonl');
    const dev = headOf('dev', 24, dir, 'dev.jsonl');
    const common = [
      '--head',
      'grassmann',
      '--train-file',
      train,
      '--dev-file',
      dev,
      '--batch',
      '8',
      '--epochs',
      '1',
      '--eval-every',
      '3',
      '--log-every',
      '1',
      '--warmup',
      '2',
      '--quiet',
    ];
    const straight = cli(['train', ...common, '--out', join(dir, 'a')]);
    expect(straight.code, straight.stderr).toBe(0);
    const first = cli(['train', ...common, '--out', join(dir, 'b'), '--stop-at-step', '3']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('stopped at step 3');
    const second = cli(['train', '--resume', join(dir, 'b'), '--quiet']);
    expect(second.code, second.stderr).toBe(0);
    const strip = (rs: Array<Record<string, number | string>>) =>
      rs.map(({ tokens_per_s: _a, eval_seconds: _b, ...r }) => r);
    const a = strip(metrics(join(dir, 'a')));
    expect(a.filter((r) => r['type'] === 'train')).toHaveLength(6);
    expect(strip(metrics(join(dir, 'b')))).toEqual(a);
    for (const f of [
      'config.json',
      'report.md',
      'loss.svg',
      'val-acc.png',
      'checkpoints/best/model.safetensors',
      'checkpoints/latest/extra.safetensors',
    ]) {
      expect(existsSync(join(dir, 'a', f)), f).toBe(true);
    }

    const ev = cli(['eval', '--checkpoint', join(dir, 'a'), '--file', dev]);
    expect(ev.code, ev.stderr).toBe(0);
    const out = JSON.parse(ev.stdout) as { pairs: number; accuracy: number; loss: number; confusion: number[][] };
    expect(out.pairs).toBe(24);
    expect(out.confusion.flat().reduce((s, v) => s + v, 0)).toBe(24);
    expect(out.accuracy).toBeCloseTo((out.confusion[0]![0]! + out.confusion[1]![1]! + out.confusion[2]![2]!) / 24, 12);
    // the best checkpoint's validation loss (on the same 24 pairs) is what eval recomputes
    const best = metrics(join(dir, 'a'))
      .filter((r) => r['type'] === 'eval')
      .reduce((b, r) => ((r['val_loss'] as number) < (b['val_loss'] as number) ? r : b));
    expect(out.loss).toBeCloseTo(best['val_loss'] as number, 5);
    expect(out.accuracy).toBeCloseTo(best['val_acc'] as number, 12);

    const model = join(dir, 'a', 'checkpoints', 'best', 'model.safetensors');
    truncateSync(model, statSync(model).size - 100);
    const corrupt = cli(['eval', '--checkpoint', join(dir, 'a', 'checkpoints', 'best'), '--file', dev]);
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toMatch(
      /CheckpointError: .*model\.safetensors has \d+ bytes but config\.json records \d+: the file is truncated/,
    );
  });
});

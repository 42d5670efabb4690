// Two trainers started on one --out: one runs, the other is refused; nothing of the two is mixed.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAsync, DATA_DIR, metrics, TINY, tmp } from './helpers.js';

function finished(p: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  p.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((done) => p.on('close', (code) => done({ code, stderr })));
}

describe.skipIf(DATA_DIR === undefined)('a run folder has one writer (needs GRASSFLOW_DATA_DIR)', () => {
  it('of two trainers started on one --out, one finishes and the other is refused naming the first', async () => {
    const out = join(tmp(), 'run');
    const args = (seed: string) => [
      'train',
      '--model',
      'grassmann',
      ...TINY,
      '--steps',
      '12',
      '--checkpoint-every',
      '2',
      '--eval-every',
      '0',
      '--seed',
      seed,
      '--out',
      out,
    ];
    const [a, b] = await Promise.all([finished(cliAsync(args('1'))), finished(cliAsync(args('2')))]);
    const results = [a, b].sort((x, y) => (x.code ?? 9) - (y.code ?? 9));
    expect(results[0]?.code, results[0]?.stderr).toBe(0);
    expect(results[1]?.code).toBe(2);
    expect(results[1]?.stderr).toMatch(/is being written by pid \d+|already holds a run/);
    const steps = metrics(out)
      .filter((m) => m['type'] === 'train')
      .map((m) => m['step']);
    expect(steps).toEqual(Array.from({ length: 12 }, (_, i) => i + 1)); // one line per step, one run's
  });
});

// `grassflow-snli study`: a real 2-head × 2-seed study of tiny runs (a random embedding encoder, 6 steps each, on
// small files cut from the shared SNLI data), its ledger, status, and the report's paired difference with n = 2.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_DIR, DATA_DIR, env, headOf, tmp } from './helpers.js';

/** `grassflow-snli ...args` from source, with room for several runs on a loaded machine. */
function snli(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(APP_DIR, 'src/cli.ts'), ...args], {
    cwd: APP_DIR,
    env: env(),
    encoding: 'utf8',
    timeout: 840_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(DATA_DIR === undefined)('study', () => {
  it('head × seed: four runs in the ledger once, status, and Grassmann − Transformer paired by seed (n = 2)', () => {
    const dir = tmp();
    const study = join(dir, 'study.json');
    const base = {
      'train-file': headOf('train_0.01', 48, dir, 'train.jsonl'),
      'dev-file': headOf('dev', 24, dir, 'dev.jsonl'),
      batch: 8,
      epochs: 1,
      'embed-dim': 8,
      'seq-len': 16,
      warmup: 2,
    };
    const spec = { name: 'heads', heldOut: false, base, grid: { head: ['grassmann', 'transformer'], seed: [1, 2] } };
    writeFileSync(study, JSON.stringify(spec));
    const runs = join(dir, 'runs');
    const run = snli(['study', 'run', study, '--runs', runs, '--quiet']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('study heads: 4 runs, 0 in');
    expect(run.stderr).toContain('study heads: all 4 runs in');
    const ledger = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').trim().split('\n');
    expect(ledger).toHaveLength(4);
    const records = ledger.map((l) => JSON.parse(l) as { key: string; config: { head: string } });
    expect(records.map((r) => r.config.head)).toEqual(['grassmann', 'grassmann', 'transformer', 'transformer']);
    for (const r of records) expect(existsSync(join(runs, r.key, 'checkpoints', 'latest'))).toBe(true);

    const again = snli(['study', 'run', study, '--runs', runs, '--quiet']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('4 in');
    expect(again.stderr).toContain('0 to run');
    const status = snli(['study', 'status', study, '--runs', runs]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('4/4 runs in');

    const report = snli(['study', 'report', study]);
    expect(report.code, report.stderr).toBe(0);
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(md).toContain('## Groups');
    // each head a group of the two seeds
    expect(md).toMatch(/^\| grassmann \| 2 \| 1 2 \| /m);
    expect(md).toMatch(/^\| transformer \| 2 \| 1 2 \| /m);
    expect(md).toContain('## grassmann − transformer, paired by seed');
    // the pair: 2 seeds, Δ val acc with its sd and 95% interval (lo … hi), then Δ val loss
    // the pairs table's header starts as its rows do (the two kinds name its first columns): the row after it
    const pair = md.split('\n').filter((l) => l.startsWith('| grassmann | transformer |'))[1];
    expect(pair).toBeDefined();
    const cells = (pair as string).split('|').map((c) => c.trim());
    expect(cells[3]).toBe('2');
    expect(cells[6]).toMatch(/^-?[\d.e-]+ … -?[\d.e-]+$/);
    expect(cells[9]).toMatch(/^-?[\d.e-]+ … -?[\d.e-]+$/);
    const acc = (head: string, seed: number): number => {
      const r = ledger
        .map((l) => JSON.parse(l) as { config: { head: string; training: { seed: number } }; finalValAcc: number })
        .find((x) => x.config.head === head && x.config.training.seed === seed);
      return (r as { finalValAcc: number }).finalValAcc;
    };
    const mean = (acc('grassmann', 1) - acc('transformer', 1) + acc('grassmann', 2) - acc('transformer', 2)) / 2;
    expect(Number(cells[4])).toBeCloseTo(mean, 3);
    expect(existsSync(join(dir, 'curves-1.svg'))).toBe(true);
  }, 900_000);

  it('a study file sets train flags only: a sitting flag and an unknown flag name the field (exit 2)', () => {
    const dir = tmp();
    const study = join(dir, 'study.json');
    writeFileSync(study, JSON.stringify({ name: 'bad', base: { out: 'x' } }));
    const sitting = snli(['study', 'run', study]);
    expect(sitting.code).toBe(2);
    expect(sitting.stderr).toContain('base.out: --out belongs to a sitting');
    writeFileSync(study, JSON.stringify({ name: 'bad', grid: { haed: ['grassmann'] } }));
    const unknown = snli(['study', 'status', study]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('grid.haed[0]: not a train flag');
    const queue = snli(['study', 'run', study, '--queue', 'redis://localhost:6379/0']);
    expect(queue.stderr).toContain('unknown flag --queue');
  });
});

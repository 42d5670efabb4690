// A record is scored only from its own run: `study rescore` and `study run` refuse another run's folder (or another
// run's checkpoint) placed at runs/<key>, before anything is scored or trained.
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, tmp } from './helpers.js';

type Rec = { key: string; flags: { seed: number }; heldOut?: unknown };
const ledgerOf = (dir: string): Rec[] =>
  readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);

describe.skipIf(DATA_DIR === undefined)('a run folder that is not the record’s (tiny, WikiText-2)', () => {
  it('rescore and run refuse another run’s folder or checkpoint at runs/<key>; nothing scored', () => {
    const root = tmp();
    const study = join(root, 'two.json');
    const base = { preset: 'tiny', batch: 8, 'eval-tokens': 256, 'log-every': 1, warmup: 1, lr: 3e-3, steps: 3 };
    writeFileSync(study, JSON.stringify({ name: 'two', base, grid: { seed: [1, 2] }, heldOut: false }));
    const out = join(root, 'out');
    const runs = join(out, 'runs');
    const sitting = ['--out', out, '--runs', runs, '--quiet', '--allow-dirty'];
    const first = cli(['study', 'run', study, ...sitting]);
    expect(first.code, first.stderr).toBe(0);
    const [a, b] = ledgerOf(out) as [Rec, Rec];
    expect([a.flags.seed, b.flags.seed, a.heldOut, b.heldOut]).toEqual([1, 2, undefined, undefined]);
    const ledgerText = readFileSync(join(out, 'ledger.jsonl'), 'utf8');
    const dirA = join(runs, a.key);
    const dirB = join(runs, b.key);

    // the whole folder of run b placed at a's key
    renameSync(dirA, join(root, 'a-aside'));
    cpSync(dirB, dirA, { recursive: true });
    const whole = cli(['study', 'rescore', study, ...sitting]);
    expect(whole.code, whole.stderr).toBe(2);
    expect(whole.stderr).toContain(
      `${dirA}: its config.json resolves to key ${b.key}, not ${a.key}: it is another run's folder`,
    );
    expect(whole.stderr).not.toMatch(/valid PPL|rescored/);
    expect(readFileSync(join(out, 'ledger.jsonl'), 'utf8')).toBe(ledgerText);

    // `study run` with a's record gone: the folder is not resumed into or recorded
    writeFileSync(join(out, 'ledger.jsonl'), `${JSON.stringify(b)}\n`);
    const again = cli(['study', 'run', study, ...sitting]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(`its config.json resolves to key ${b.key}, not ${a.key}`);
    expect(ledgerOf(out).map((r) => r.key)).toEqual([b.key]);
    writeFileSync(join(out, 'ledger.jsonl'), ledgerText);

    // a's own folder back, but with b's final checkpoint in it (same step, other seed)
    rmSync(dirA, { recursive: true });
    renameSync(join(root, 'a-aside'), dirA);
    rmSync(join(dirA, 'checkpoints', 'latest'), { recursive: true });
    cpSync(join(dirB, 'checkpoints', 'latest'), join(dirA, 'checkpoints', 'latest'), { recursive: true });
    const swapped = cli(['study', 'rescore', study, ...sitting]);
    expect(swapped.code, swapped.stderr).toBe(2);
    expect(swapped.stderr).toContain(`is a checkpoint of step 3 and seed 2, but the record of ${a.key}`);
    expect(readFileSync(join(out, 'ledger.jsonl'), 'utf8')).toBe(ledgerText);
    expect(existsSync(join(dirA, 'config.json'))).toBe(true);
  }, 400_000);
});

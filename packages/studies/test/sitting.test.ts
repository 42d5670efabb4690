// The sitting on a toy trainer (no tfjs, no data): every run of a study once into the ledger, a stopped run resumed
// from its folder on the next sitting, a folder without a checkpoint started again, and the seed report's pairs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseRunLocks, RUN_LOCK_FILE } from '@grassflow/training';
import {
  flagsToArgv,
  readLedger,
  runKey,
  runSitting,
  seedComparison,
  trainStudyRun,
  type PlannedRun,
  type RunFlags,
  type StudyTrainer,
  type Sitting,
} from '@grassflow/studies';

interface ToyConfig {
  kind: string;
  model: { kind: string };
  training: { seed: number; steps: number };
}
interface ToyPlanned extends PlannedRun {
  config: ToyConfig;
}
interface ToyRecord {
  format: 'toy-run';
  study: string;
  key: string;
  config: ToyConfig;
  flags: RunFlags;
  score: number;
  resumed: boolean;
}

/** A trainer whose "training" writes config.json and a checkpoint; the runs of `stopOnce` stop once (interrupted). */
function toyTrainer(events: string[], stopOnce: Set<string>): StudyTrainer<ToyPlanned, ToyRecord> {
  const writeRun = (p: ToyPlanned, dir: string): void => {
    mkdirSync(join(dir, 'checkpoints', 'latest'), { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(p.config));
  };
  const finish = (p: ToyPlanned, dir: string): number => {
    if (stopOnce.delete(p.key)) return 143; // stopped with its checkpoint
    writeFileSync(join(dir, 'done'), '');
    return 0;
  };
  return {
    program: 'toy',
    flags: {
      flags: {
        kind: { type: 'string', choices: ['a', 'b'], help: 'kind' },
        seed: { type: 'int', help: 'seed' },
        steps: { type: 'int', help: 'steps' },
        out: { type: 'string', help: 'run folder' },
      },
      sitting: ['out'],
      pairable: [],
    },
    ledger: { format: 'toy-run', what: 'toy record', problem: () => null },
    plan: (entry) => {
      const kind = entry.flags['kind'] as string;
      const config = {
        kind,
        model: { kind },
        training: { seed: entry.flags['seed'] as number, steps: (entry.flags['steps'] as number | undefined) ?? 3 },
      };
      return Promise.resolve({ entry, argv: flagsToArgv(entry.flags), config, key: runKey(config) });
    },
    storedKey: (dir) => Promise.resolve(runKey(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')))),
    start: (p, dir) => {
      events.push(`start ${p.entry.where}`);
      writeRun(p, dir);
      return Promise.resolve(finish(p, dir));
    },
    resume: (p, dir) => {
      events.push(`resume ${p.entry.where}`);
      return Promise.resolve(finish(p, dir));
    },
    record: (a) =>
      Promise.resolve({
        format: 'toy-run',
        study: a.study,
        key: a.planned.key,
        config: a.planned.config,
        flags: a.planned.entry.flags,
        // kind a scores 1 more than kind b, plus the seed
        score: (a.planned.config.kind === 'a' ? 1 : 0) + a.planned.config.training.seed,
        resumed: a.resumed,
      }),
    asStudyRecord: (r, _p, study) => ({ ...r, study }),
    describe: (r) => `score ${r.score}`,
    report: () => Promise.resolve(''),
  };
}

describe('the sitting on any trainer', () => {
  it('refuses a checkout with uncommitted changes unless --allow-dirty, whose records then say -dirty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-studies-dirty-'));
    const spec = {
      name: 'toy',
      base: {},
      grid: [{ kind: ['a'], seed: [1] }],
      runs: [],
      heldOut: false,
      pairAcross: [],
    };
    const sitting: Sitting = {
      study: join(dir, 'study.json'),
      spec,
      ledger: join(dir, 'ledger.jsonl'),
      runs: join(dir, 'runs'),
      trainArgv: [],
      dataDir: undefined,
      backend: undefined,
      queue: undefined,
      retryFailed: false,
      code: 'c0ffee-dirty',
      allowDirty: false,
    };
    const events: string[] = [];
    const trainer = toyTrainer(events, new Set());
    await expect(runSitting(trainer, sitting, false)).rejects.toThrow(
      /uncommitted changes \(c0ffee-dirty\): commit them .* or give --allow-dirty/,
    );
    expect(events).toEqual([]);
    expect(existsSync(sitting.ledger)).toBe(false);
    expect(await runSitting(trainer, { ...sitting, allowDirty: true }, false)).toBe(0);
    releaseRunLocks();
    expect(events).toEqual(['start grid #1']);
  });

  it('runs each run once, resumes a stopped one from its folder, restarts one without a checkpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-studies-test-'));
    const events: string[] = [];
    const spec = {
      name: 'toy',
      base: {},
      grid: [{ kind: ['a', 'b'], seed: [1, 2] }],
      runs: [{ kind: 'a', seed: 1 }], // the same run as grid #1: one run
      heldOut: false,
      pairAcross: [],
    };
    const sitting: Sitting = {
      study: join(dir, 'study.json'),
      spec,
      ledger: join(dir, 'ledger.jsonl'),
      runs: join(dir, 'runs'),
      trainArgv: [],
      dataDir: undefined,
      backend: undefined,
      queue: undefined,
      retryFailed: false,
      code: 'c0ffee',
      allowDirty: false,
    };
    const planned = await toyTrainer([], new Set()).plan({ flags: { kind: 'a', seed: 2 }, where: 'x' }, []);
    // grid #2 stops once; grid #3's folder was left without a checkpoint by an earlier crash
    const trainer = toyTrainer(events, new Set([planned.key]));
    const b1 = await trainer.plan({ flags: { kind: 'b', seed: 1 }, where: 'x' }, []);
    mkdirSync(join(sitting.runs, b1.key), { recursive: true });
    expect(await runSitting(trainer, sitting, false)).toBe(143);
    releaseRunLocks();
    expect(events).toEqual(['start grid #1', 'start grid #2']);
    expect((await readLedger(sitting.ledger, trainer.ledger)).records).toHaveLength(1);

    expect(await runSitting(trainer, sitting, false)).toBe(0);
    releaseRunLocks();
    expect(events).toEqual(['start grid #1', 'start grid #2', 'resume grid #2', 'start grid #3', 'start grid #4']);
    const { records } = await readLedger(sitting.ledger, trainer.ledger);
    expect(records.map((r) => [r.config.kind, r.config.training.seed, r.resumed])).toEqual([
      ['a', 1, false],
      ['a', 2, true],
      ['b', 1, false],
      ['b', 2, false],
    ]);
    expect(existsSync(join(sitting.runs, b1.key, 'done'))).toBe(true);
    expect(await runSitting(trainer, sitting, false)).toBe(0); // nothing left to run
    releaseRunLocks();
    expect(events).toHaveLength(5);

    const { groups, pairs } = seedComparison<ToyConfig, ToyRecord>({
      title: 'toy',
      intro: [],
      records,
      kindColumn: 'kind',
      kinds: ['a', 'b'],
      metrics: [{ name: 'score', of: (r) => r.score }],
    });
    expect(groups.map((g) => [g.config.kind, g.spreads[0]?.n, g.spreads[0]?.mean])).toEqual([
      ['a', 2, 2.5],
      ['b', 2, 1.5],
    ]);
    expect(pairs).toHaveLength(1);
    expect(pairs[0]?.seeds).toEqual([1, 2]);
    expect(pairs[0]?.diffs[0]).toEqual({ n: 2, mean: 1, sd: 0, lo: 1, hi: 1 });
  });

  it('leaves a run folder alone while another live process holds its lock: neither deleted nor resumed into', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-studies-test-'));
    const events: string[] = [];
    const trainer = toyTrainer(events, new Set());
    const other = spawn('sleep', ['60']); // the other worker's training process
    try {
      for (const withCheckpoint of [false, true]) {
        const p = await trainer.plan({ flags: { kind: 'a', seed: withCheckpoint ? 2 : 1 }, where: 'x' }, []);
        const runDir = join(dir, 'runs', p.key);
        mkdirSync(join(runDir, withCheckpoint ? 'checkpoints/latest' : ''), { recursive: true });
        writeFileSync(join(runDir, 'config.json'), JSON.stringify(p.config));
        writeFileSync(join(runDir, 'metrics.jsonl'), '{"step":1}\n');
        const lock = { pid: other.pid, host: hostname(), since: new Date().toISOString() };
        writeFileSync(join(runDir, RUN_LOCK_FILE), `${JSON.stringify(lock)}\n`);
        await expect(trainStudyRun(trainer, 'toy', p, join(dir, 'runs'), [], 'run')).rejects.toThrow(
          `is being written by pid ${other.pid}`,
        );
        expect(readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')).toBe('{"step":1}\n'); // untouched
        expect(existsSync(join(runDir, RUN_LOCK_FILE))).toBe(true);
      }
      expect(events).toEqual([]); // nothing started or resumed
    } finally {
      other.kill();
    }
  });
});

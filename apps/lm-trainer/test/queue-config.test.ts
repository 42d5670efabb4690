// A queue configured wrong, or a Redis that goes away, on a real redis-server on 127.0.0.1: a database out of range
// and a worker's --runs that is a file are refused at start with one line; a worker whose run folders become
// unwritable hands its job back (another worker trains it, no attempt used); a Redis restart during a study is one
// line when lost and one when back, in the coordinator and in the worker, and the study ends as if nothing happened.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliAsync, DATA_DIR, metrics, startRedis, stop, tmp, until, watch, type Proc } from './helpers.js';

const HAVE_REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
const skip =
  DATA_DIR === undefined
    ? 'set GRASSFLOW_DATA_DIR to the WikiText-2 data folder'
    : !HAVE_REDIS && process.env['GRASSFLOW_REQUIRE_REDIS'] !== '1'
      ? 'redis-server is not installed (apt-get install redis-server; GRASSFLOW_REQUIRE_REDIS=1 makes this a failure)'
      : undefined;
if (skip !== undefined) console.log(`queue-config.test.ts skipped: ${skip}`);

const ledger = (dir: string): Array<{ key: string }> =>
  existsSync(join(dir, 'ledger.jsonl'))
    ? readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { key: string })
    : [];

describe.skipIf(skip !== undefined)('a queue configured wrong, a Redis that goes away (real redis-server)', () => {
  it.runIf(!HAVE_REDIS)('needs redis-server (GRASSFLOW_REQUIRE_REDIS=1)', () => {
    expect.fail('redis-server is not on PATH: apt-get install -y redis-server, or unset GRASSFLOW_REQUIRE_REDIS');
  });
  if (!HAVE_REDIS) return;

  const root = tmp();
  const base = { preset: 'tiny', batch: 8, 'eval-tokens': 256, 'log-every': 1, warmup: 1, lr: 3e-3 };
  const studyOf = (name: string, steps: number, seed: number): string => {
    const file = join(root, `${name}.json`);
    writeFileSync(file, JSON.stringify({ name, base, runs: [{ model: 'grassmann', seed, steps }], heldOut: false }));
    return file;
  };
  const sitting = (out: string): string[] => ['--out', out, '--runs', join(out, 'runs'), '--quiet'];
  let redis: Proc | undefined;
  let url = '';
  let port = 0;
  const procs: Proc[] = [];
  const start = (args: string[]): Proc => {
    const p = watch(cliAsync(args));
    procs.push(p);
    return p;
  };
  const logs = (): string => procs.map((p) => p.out()).join('\n-----\n');

  beforeAll(async () => {
    ({ redis, url, port } = await startRedis(root));
  });
  afterAll(async () => {
    for (const p of procs) await stop(p);
    writeFileSync(join(root, 'logs.txt'), logs());
    await stop(redis);
  });

  it('a database out of range, a --runs that is a file, --concurrency 1e6: refused at start in one line', async () => {
    const study = studyOf('db', 2, 1);
    const status = cli(['study', 'status', study, ...sitting(join(root, 'db')), '--queue', url.replace(/0$/, '99')]);
    expect(status.code, status.stderr).toBe(2);
    expect(status.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/--queue redis:\/\/127\.0\.0\.1:\d+\/99: that server has no database 99 .*setting is 16/),
    ]);
    const worker = cli(['worker', '--queue', url.replace(/0$/, '99')]);
    expect(worker.code, worker.stderr).toBe(2);
    expect(worker.stderr).toContain('no database 99');

    const file = join(root, 'a-file');
    writeFileSync(file, '');
    const w = start(['worker', '--queue', url, '--runs', file]);
    const code = await Promise.race([w.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]);
    expect(code, w.out()).toBe(2); // before any job is taken, not a failure of each job it takes
    expect(w.out()).toMatch(/--runs \S+a-file is a file: give a folder/);
    expect(w.out()).not.toContain('taking jobs');

    const many = cli(['worker', '--queue', url, '--concurrency', '1e6']);
    expect(many.code).toBe(2);
    expect(many.stderr).toContain('--concurrency must be <= 64, got 1e6');
  }, 180_000);

  it('a worker that cannot write its run folders hands the job back; a healthy worker trains it', async () => {
    const mine = join(root, 'bad-worker-runs');
    mkdirSync(mine);
    const bad = start(['worker', '--queue', url, '--runs', mine]);
    await until('the first worker to take jobs', () => bad.out().includes('taking jobs'), 90_000, logs);
    rmSync(mine, { recursive: true });
    writeFileSync(mine, ''); // its folder is gone, a file in its place: this machine cannot run any job now
    const out = join(root, 'handback');
    const c = start(['study', 'run', studyOf('handback', 2, 2), ...sitting(out), '--queue', url]);
    await until('the job to be handed back', () => bad.out().includes('handed back to the queue'), 90_000, logs);
    await stop(bad);
    const good = start(['worker', '--queue', url]);
    expect(await c.exited, logs()).toBe(0);
    expect(ledger(out)).toHaveLength(1);
    expect(good.out()).toMatch(/: \w{16} \(study handback, runs\[0\]\) → /);
    expect(good.out()).not.toContain('(a retry)'); // the hand-back used no attempt
    expect(c.out()).not.toContain('failed');
    await stop(good);
  }, 240_000);

  it('Redis restarted during a study: one line when lost, one when back, in coordinator and worker', async () => {
    const out = join(root, 'outage');
    const w = start(['worker', '--queue', url]);
    const c = start(['study', 'run', studyOf('outage', 30, 3), ...sitting(out), '--queue', url]);
    const runs = join(out, 'runs');
    await until(
      'the run to train a few steps',
      () =>
        ledger(out).length === 0 &&
        existsSync(runs) &&
        readdirSync(runs).some(
          (k) =>
            existsSync(join(runs, k, 'metrics.jsonl')) &&
            metrics(join(runs, k)).some((m) => m['type'] === 'train' && (m['step'] as number) >= 2),
        ),
      150_000,
      logs,
    );
    await stop(redis); // SIGTERM: redis-server writes its append-only file and exits
    await new Promise((r) => setTimeout(r, 6000));
    ({ redis } = await startRedis(root, port));
    expect(await c.exited, logs()).toBe(0);
    expect(ledger(out)).toHaveLength(1);
    for (const p of [c, w]) {
      const said = p.out().split('\n');
      expect(said.filter((l) => /ECONNREFUSED|ECONNRESET|Connection is closed/.test(l)).length, p.out()).toBe(1);
      expect(
        said.filter((l) => /is unreachable \(.*\); reconnecting/.test(l)),
        p.out(),
      ).toHaveLength(1);
      expect(
        said.filter((l) => /Redis at \S+ is back after \d+ s/.test(l)),
        p.out(),
      ).toHaveLength(1);
      expect(p.out()).not.toMatch(/^\s+at /m); // no stack
    }
    await stop(w);
  }, 240_000);
  it('a Redis restart that loses the queue while a worker trains: the job waits for that worker, nothing fails', async () => {
    const out = join(root, 'lost');
    const w = start(['worker', '--queue', url, '--concurrency', '2']);
    const c = start(['study', 'run', studyOf('lost', 40, 4), ...sitting(out), '--queue', url, '--allow-dirty']);
    const runs = join(out, 'runs');
    const lockOf = (): { pid: number } | undefined => {
      const key = existsSync(runs) ? readdirSync(runs)[0] : undefined;
      const lock = key === undefined ? '' : join(runs, key, '.grassflow-run.lock');
      return key !== undefined && existsSync(lock) && existsSync(join(runs, key, 'metrics.jsonl'))
        ? (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number })
        : undefined;
    };
    await until('the run to start training', () => lockOf() !== undefined, 150_000, logs);
    // the training process pauses (its worker keeps renewing the job's lock), so the run outlasts what follows
    const trainer = (lockOf() as { pid: number }).pid;
    process.kill(trainer, 'SIGSTOP');
    try {
      await stop(redis);
      const fresh = join(root, 'redis-fresh');
      mkdirSync(fresh);
      ({ redis } = await startRedis(fresh, port)); // the same server back without its data: the job is gone
      // the coordinator queues the run again; the worker's free slot takes it while the first process holds the
      // folder. Before, that used the job's 5 attempts (10 s apart) and the run ended failed
      await until(
        'the job to be handed back three times, or the coordinator to give up',
        () => w.out().split('handed back to the queue until that process ends').length > 3 || c.child.exitCode !== null,
        150_000,
        logs,
      );
    } finally {
      process.kill(trainer, 'SIGCONT');
    }
    expect(await c.exited, logs()).toBe(0);
    expect(ledger(out)).toHaveLength(1);
    expect(c.out()).not.toContain('failed');
    expect(w.out()).toContain('is being written by pid');
    // the first process's result is not dropped: it waits on the queued job, which hands it on without training
    expect(w.out()).toContain('the result waits on the job for the next taker');
    expect(w.out()).toContain('its result handed on');
    expect(w.out().split('resuming from its checkpoint').length - 1).toBe(0);
    await stop(w);
  }, 400_000);
});

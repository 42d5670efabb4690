// `study run --queue` on a real redis-server with two `grassflow-lm worker` processes: every run once, the ledger of
// the in-process sitting, a worker killed mid-run (its job stalls and is resumed elsewhere), a failing run failed once,
// and a killed coordinator that re-attaches. Everything listens on 127.0.0.1 and is stopped at the end.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  cliAsync,
  DATA_DIR,
  freePort,
  metrics,
  sleep,
  startRedis,
  stop,
  tmp,
  until,
  watch,
  type Proc,
} from './helpers.js';

const REQUIRE_REDIS = process.env['GRASSFLOW_REQUIRE_REDIS'] === '1';
const HAVE_REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
const skip =
  DATA_DIR === undefined
    ? 'set GRASSFLOW_DATA_DIR to the WikiText-2 data folder'
    : !HAVE_REDIS && !REQUIRE_REDIS
      ? 'redis-server is not installed (apt-get install redis-server; GRASSFLOW_REQUIRE_REDIS=1 makes this a failure)'
      : undefined;
if (skip !== undefined) console.log(`study-queue.test.ts skipped: ${skip}`);

/** Pids whose parent is `pid` (from /proc: field 4 of stat, after the command name in parentheses). */
const childrenOf = (pid: number): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(join('/proc', d, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

type Rec = Record<string, unknown> & { key: string; timing: Record<string, unknown>; totalSteps: number };
const ledger = (dir: string): Rec[] =>
  existsSync(join(dir, 'ledger.jsonl'))
    ? readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Rec)
    : [];
// timing and the commit (other work may be committed while a test runs) differ between sittings; order by key
const untimed = (rs: Rec[]): Array<Record<string, unknown>> =>
  [...rs].sort((a, b) => (a.key < b.key ? -1 : 1)).map(({ timing: _t, code: _c, ...r }) => r);
describe.skipIf(skip !== undefined)('study run --queue: a real redis-server and two workers (tiny, WikiText-2)', () => {
  it.runIf(!HAVE_REDIS)('needs redis-server (GRASSFLOW_REQUIRE_REDIS=1)', () => {
    expect.fail(
      'redis-server is not on PATH: apt-get install -y redis-server (.ci/run does), or unset GRASSFLOW_REQUIRE_REDIS',
    );
  });
  if (!HAVE_REDIS) return;

  const root = tmp();
  const base = { preset: 'tiny', batch: 8, 'eval-tokens': 256, 'log-every': 1, warmup: 2, lr: 3e-3, 'eval-every': 3 };
  const runs = [
    { model: 'transformer-dpa', seed: 1, steps: 40, 'checkpoint-every': 1 }, // the one a worker is killed during
    { model: 'grassmann', seed: 1, steps: 4 },
    { model: 'grassmann', seed: 2, steps: 4 },
    { model: 'transformer-ea', seed: 1, steps: 4 },
    { model: 'transformer-dpa', seed: 2, steps: 4 },
    { model: 'grassmann', seed: 3, steps: 6 },
  ];
  const failing = { model: 'grassmann', seed: 9, steps: 4, lr: 1e30 }; // NaN at step 2: fails deterministically
  const study = join(root, 'tiny.json');
  const queued = join(root, 'tiny-queued.json');
  // held-out scoring (all of wiki.valid and wiki.test per run) is study.test.ts's; here it would cost more than the runs
  writeFileSync(study, JSON.stringify({ name: 'tiny', base, runs, heldOut: false }));
  writeFileSync(queued, JSON.stringify({ name: 'tiny', base, runs: [...runs, failing], heldOut: false }));
  const inProcess = join(root, 'in-process');
  const onQueue = join(root, 'queue');
  const sitting = (out: string): string[] => ['--out', out, '--runs', join(out, 'runs'), '--quiet'];

  let redis: Proc | undefined;
  let url = '';
  const workers: Proc[] = [];
  const coordinators: Proc[] = [];

  beforeAll(async () => {
    ({ redis, url } = await startRedis(root));
  });

  afterAll(async () => {
    for (const p of [...coordinators, ...workers]) await stop(p);
    writeFileSync(join(root, 'logs.txt'), logs()); // what every coordinator and worker said, for a failure's reader
    await stop(redis);
  });

  const logs = (): string => [...coordinators, ...workers].map((p) => p.out()).join('\n-----\n');
  const startWorker = (): Proc => {
    const w = watch(cliAsync(['worker', '--queue', url, '--stall-seconds', '5']));
    workers.push(w);
    return w;
  };

  it('in process (no server): the reference ledger', () => {
    const r = cli(['study', 'run', study, ...sitting(inProcess)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('queue in-process');
    expect(ledger(inProcess)).toHaveLength(6);
  });

  it('on two workers: each run once, a killed worker and coordinator, a failed run; the same ledger', async () => {
    const reference = ledger(inProcess);
    const victim = reference.find((r) => r.totalSteps === 40)!.key;
    const w1 = startWorker();
    const w2 = startWorker();
    const c1 = watch(cliAsync(['study', 'run', queued, ...sitting(onQueue), '--queue', url]));
    coordinators.push(c1);

    // kill the worker of the long run once it has a checkpoint and a few steps
    const dir = join(onQueue, 'runs', victim);
    await until(
      'the long run to checkpoint a few steps',
      () =>
        existsSync(join(dir, 'checkpoints', 'latest', 'config.json')) &&
        existsSync(join(dir, 'metrics.jsonl')) &&
        metrics(dir).some((m) => m['type'] === 'train' && (m['step'] as number) >= 5),
      150_000,
      logs,
    );
    // The worker sends a run's progress every 2 s (PROGRESS_MS): with native products the tiny run reaches step 5
    // sooner than that, so give it one interval to be in Redis before status reads it.
    await sleep(2500);
    const killed = w1.out().includes(`: ${victim} (study tiny`) ? w1 : w2;
    const survivor = killed === w1 ? w2 : w1;
    expect(killed.out()).toContain(`: ${victim} (study tiny`);
    // what status says meanwhile: the long run running on that worker at its step (or, once its lock has expired
    // and the stall been seen, queued for a retry)
    const during = watch(cliAsync(['study', 'status', queued, ...sitting(onQueue), '--queue', url]));
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(await during.exited, during.out()).toBe(0);
    expect(during.out()).toMatch(
      new RegExp(`${victim}  (running on \\S+:\\d+, step \\d+/40 in \\S+${victim}|queued \\(a retry\\))`),
    );

    // and the coordinator, once the first result is in the ledger; a new one re-attaches
    await until('a first record', () => ledger(onQueue).length >= 1, 150_000, logs);
    c1.child.kill('SIGKILL'); // its supervised child notices and stops (the ledger lock is then free)
    await c1.exited;
    const lock = join(onQueue, '.grassflow-run.lock'); // the ledger's, released when the coordinator has stopped
    await until('the first coordinator to stop', () => !existsSync(lock), 20_000, logs);
    const c2 = watch(cliAsync(['study', 'run', queued, ...sitting(onQueue), '--queue', url]));
    coordinators.push(c2);
    const code = await c2.exited;
    const out = c2.out();
    expect(code, logs()).toBe(1); // one run failed
    expect(out).toMatch(/0 runs queued, \d+ already in the queue/); // nothing queued again

    const recs = ledger(onQueue);
    expect(recs.map((r) => r.key).sort(), logs()).toEqual(reference.map((r) => r.key).sort()); // each once, none lost
    expect(untimed(recs)).toEqual(untimed(reference));
    // the killed run was taken back from the dead worker and resumed from its checkpoint by the other one
    expect(survivor.out()).toContain(`${victim}: its worker stopped renewing the lock`);
    expect(survivor.out()).toMatch(
      new RegExp(`\\[${victim}\\] study tiny: ${victim} .*: resuming from its checkpoint`),
    );
    expect(recs.find((r) => r.key === victim)!.timing['resumed']).toBe(true);
    expect(recs.filter((r) => r.timing['resumed'] === true)).toHaveLength(1);

    // the failing run: failed once, with its error, never retried and not in the ledger
    const failedKey = /(\w{16}) failed on /.exec(logs())?.[1];
    expect(failedKey, logs()).toBeDefined();
    expect(recs.map((r) => r.key)).not.toContain(failedKey);
    expect(logs().split(`: ${failedKey} (study tiny`).length - 1).toBe(1); // taken by a worker once
    expect(out).toMatch(/1 of 7 runs failed/);

    const status = cli(['study', 'status', queued, ...sitting(onQueue), '--queue', url]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`${failedKey}  failed .*\\n    error: NonFiniteLossError: non-finite loss`),
    );
    expect(status.stdout).toContain('6/7 runs in');
    expect(status.stdout).toContain('(1 failed)');

    // a new sitting records nothing twice and queues nothing; with --retry-failed the run fails once more
    const again = cli(['study', 'run', queued, ...sitting(onQueue), '--queue', url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('7 runs, 6 in');
    expect(again.stderr).toContain('0 runs queued, 1 already in the queue');
    expect(ledger(onQueue)).toEqual(recs);
  }, 420_000);

  it('a ladder through the same queue: each rung a job, the results of the in-process ladder', async () => {
    if (!workers.some((w) => w.child.exitCode === null && w.child.signalCode === null)) startWorker();
    const ladder = (out: string, ...more: string[]): string[] => [
      'ladder',
      ...['--levels', '1', '--models', 'grassmann,transformer-dpa', '--seeds', '1', '--vocab', '4'],
      ...['--layers', '1', '--d-model', '16', '--heads', '2', '--r', '4', '--offsets', '1', '--seq-len', '12'],
      ...['--steps', '20', '--batch', '16', '--lr', '1e-2', '--eval-seqs', '16', '--out', out, ...more],
    ];
    const local = cli(ladder(join(root, 'ladder-local')));
    expect(local.code, local.stderr).toBe(0);
    const queuedLadder = watch(cliAsync(ladder(join(root, 'ladder-queue'), '--queue', url)));
    coordinators.push(queuedLadder);
    expect(await queuedLadder.exited, logs()).toBe(0);
    expect(queuedLadder.out()).toContain('2 runs queued, 0 already in the queue');
    expect(queuedLadder.out()).toMatch(/\[2\/2\] level 1 \S+ seed 1 on \S+:\d+: accuracy/);
    type Results = { complete: boolean; runs: Array<Record<string, unknown>> };
    const results = (dir: string): Results => JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Results;
    const untimedRuns = (r: Results): unknown[] => r.runs.map(({ trainSeconds: _t, evalSeconds: _e, ...x }) => x);
    const [a, b] = [results(join(root, 'ladder-local')), results(join(root, 'ladder-queue'))];
    expect(b.complete).toBe(true);
    expect(untimedRuns(b)).toEqual(untimedRuns(a)); // same rungs, same order, same numbers
    expect(logs()).toMatch(/\(ladder \S+ladder-queue, level 1 grassmann seed 1\)/); // a worker took it
  }, 240_000);

  /** Until a run under `runsDir` has a checkpoint and has trained 3 steps: the moment to stop or kill it. */
  const untilCheckpointed = (runsDir: string): Promise<void> =>
    until(
      'the run to checkpoint a few steps',
      () =>
        existsSync(runsDir) &&
        readdirSync(runsDir).some(
          (k) =>
            existsSync(join(runsDir, k, 'checkpoints', 'latest', 'config.json')) &&
            metrics(join(runsDir, k)).some((m) => m['type'] === 'train' && (m['step'] as number) >= 3),
        ),
      150_000,
      logs,
    );

  it('a worker stopped by SIGTERM: its run checkpoints, goes back to the queue and is resumed by the next worker', async () => {
    for (const w of workers) await stop(w); // none of the earlier workers may take the run
    const one = join(root, 'one.json');
    const longRun = { model: 'transformer-ea', seed: 2, steps: 40, 'checkpoint-every': 1 };
    writeFileSync(one, JSON.stringify({ name: 'one', base, runs: [longRun] }));
    const out = join(root, 'one');
    const first = startWorker();
    const c = watch(cliAsync(['study', 'run', one, ...sitting(out), '--queue', url]));
    coordinators.push(c);
    const runsDir = join(out, 'runs');
    await untilCheckpointed(runsDir);
    first.child.kill('SIGTERM');
    expect(await first.exited, first.out()).toBe(0);
    expect(first.out()).toMatch(/stopped \(SIGTERM\); back in the queue/);
    startWorker();
    expect(await c.exited, logs()).toBe(0);
    const [rec] = ledger(out);
    expect(rec?.timing['resumed'], logs()).toBe(true);
    expect(rec?.totalSteps).toBe(40);
  }, 240_000);

  it("a training process SIGKILLed from outside (the OOM killer's way): one line that says so, retried with an attempt, resumed", async () => {
    for (const w of workers) await stop(w);
    const oom = join(root, 'oom.json');
    const longRun = { model: 'grassmann', seed: 4, steps: 40, 'checkpoint-every': 1 };
    writeFileSync(oom, JSON.stringify({ name: 'oom', base, runs: [longRun], heldOut: false }));
    const out = join(root, 'oom');
    const worker = startWorker();
    const c = watch(cliAsync(['study', 'run', oom, ...sitting(out), '--queue', url]));
    coordinators.push(c);
    const runsDir = join(out, 'runs');
    await untilCheckpointed(runsDir);
    // the training process is the worker's child: SIGKILL it as the kernel's OOM killer would, not the worker
    const children = childrenOf(worker.child.pid ?? 0);
    expect(children, logs()).toHaveLength(1);
    process.kill(children[0] ?? 0, 'SIGKILL');
    // the same worker takes it again after the backoff (10 s) and resumes the run's checkpoint
    expect(await c.exited, logs()).toBe(0);
    expect(worker.out()).toMatch(
      /killed by SIGKILL, not by this worker: most likely the kernel's OOM killer .*; retried \(attempt 1 of 5\)/,
    );
    expect(worker.out().match(/killed by SIGKILL/g), worker.out()).toHaveLength(1);
    expect(worker.out()).toMatch(/\(a retry\)/);
    const [rec] = ledger(out);
    expect(rec?.timing['resumed'], logs()).toBe(true);
    expect(rec?.totalSteps).toBe(40);
  }, 240_000);

  it('clear errors: Redis not answering, a bad URL', async () => {
    const port = await freePort();
    const r = cli(['study', 'status', study, ...sitting(onQueue), '--queue', `redis://127.0.0.1:${port}/0`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+\/0: .*ECONNREFUSED.*Start redis-server/);
    const bad = cli(['worker', '--queue', 'http://127.0.0.1:6379']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the scheme must be redis: or rediss:');
  });
});

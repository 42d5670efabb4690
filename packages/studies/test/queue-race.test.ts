// The coordinator's poll against a worker that finishes between its reads, on a real redis-server (127.0.0.1, a free
// port, no persistence): a job read while running and judged by a state read after the worker finished must not pass
// on a result it does not hold. The interleaving is forced: the job is finished right after the coordinator reads it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QUEUE_NAME, QUEUE_PREFIX, queueUrlOf, redisConnection, RedisRunQueue } from '@grassflow/studies';

const HAVE_REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
const skip =
  !HAVE_REDIS && process.env['GRASSFLOW_REQUIRE_REDIS'] !== '1'
    ? 'redis-server is not installed (apt-get install redis-server; GRASSFLOW_REQUIRE_REDIS=1 makes this a failure)'
    : undefined;
if (skip !== undefined) console.log(`queue-race.test.ts skipped: ${skip}`);

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))));
    });
  });

describe.skipIf(skip !== undefined)('the coordinator against a job that finishes between its reads', () => {
  it.runIf(!HAVE_REDIS)('needs redis-server (GRASSFLOW_REQUIRE_REDIS=1)', () => {
    expect.fail('redis-server is not on PATH: apt-get install -y redis-server, or unset GRASSFLOW_REQUIRE_REDIS');
  });
  if (!HAVE_REDIS) return;

  const dir = mkdtempSync(join(tmpdir(), 'grassflow-queue-race-'));
  let redis: ChildProcess | undefined;
  let url = '';
  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir]);
    let said = '';
    redis.stdout?.on('data', (b: Buffer) => (said += b.toString()));
    for (let i = 0; i < 200 && !said.includes('Ready to accept'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(said, 'redis-server did not start').toContain('Ready to accept');
    url = `redis://127.0.0.1:${port}/0`;
  }, 30_000);
  afterAll(() => {
    redis?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes on the result the worker returned, never the running job read before it finished', async () => {
    const q = queueUrlOf(url);
    if (q === undefined) throw new Error(`queueUrlOf(${url}) gave nothing`);
    const queue = await RedisRunQueue.open(q, { program: 'test' });
    const connection = redisConnection(q);
    // a worker driven by hand: it takes the job now and finishes it exactly when the test says
    const worker = new Worker(QUEUE_NAME, null, { connection, prefix: QUEUE_PREFIX, autorun: false });
    try {
      await queue.queue.add('race', { n: 1 }, { jobId: 'k1' });
      const token = 'test-token';
      const running = (await worker.getNextJob(token)) as Job | undefined;
      expect(running?.id).toBe('k1');
      if (running === undefined) return;

      // Job.fromId's 2nd call is the first poll (the 1st is the sitting's look for jobs already queued): the worker
      // finishes right after that read, before anything else the coordinator asks
      const fromId = Job.fromId.bind(Job);
      let calls = 0;
      const spy = vi.spyOn(Job, 'fromId').mockImplementation(async (...args: Parameters<typeof Job.fromId>) => {
        const job = await fromId(...args);
        if (++calls === 2) await running.moveToCompleted({ answer: 42 }, token, false);
        return job;
      });
      const results: unknown[] = [];
      const said: string[] = [];
      const outcome = await queue.runJobs(
        [{ key: 'k1', name: 'race', data: { n: 1 }, where: 'runs[0]' }],
        (line) => said.push(line),
        (_job, result) => {
          results.push(result);
          return Promise.resolve();
        },
      );
      spy.mockRestore();
      expect(calls, said.join('\n')).toBeGreaterThanOrEqual(2); // the forced interleaving happened
      expect(outcome.failed).toEqual([]);
      expect(results).toEqual([{ answer: 42 }]);
      expect(await queue.job('k1')).toBeUndefined(); // recorded, then removed from the queue
    } finally {
      await worker.close();
      connection.disconnect();
      await queue.close();
    }
  }, 60_000);
});

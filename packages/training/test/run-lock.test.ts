// The run-folder lock: one writer per run folder; a live writer refuses others, a dead one's lock is taken over.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRun, lockRunFolder, releaseRunLocks, RUN_LOCK_FILE, UsageError } from '@grassflow/training';

const root = mkdtempSync(join(tmpdir(), 'grassflow-lock-'));
afterAll(() => releaseRunLocks());

function lockOf(dir: string, pid: number, host = hostname()): void {
  writeFileSync(join(dir, RUN_LOCK_FILE), JSON.stringify({ pid, host, since: '2026-01-01T00:00:00.000Z' }));
}

describe('lockRunFolder', () => {
  it('takes the lock atomically, holds it for this process, and lets this process take it again', async () => {
    const dir = join(root, 'mine');
    await createRun(dir, { format: 'x' });
    const owner = JSON.parse(readFileSync(join(dir, RUN_LOCK_FILE), 'utf8')) as { pid: number; host: string };
    expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => lockRunFolder(dir)).not.toThrow();
    releaseRunLocks();
    expect(existsSync(join(dir, RUN_LOCK_FILE))).toBe(false);
  });

  it('refuses a folder a live process writes, naming its pid and start time', () => {
    const dir = join(root, 'live');
    const sleeper = spawn('sleep', ['30']);
    try {
      lockRunFolder(dir); // creates the folder
      releaseRunLocks();
      lockOf(dir, sleeper.pid as number);
      let err: unknown;
      try {
        lockRunFolder(dir);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(
        `${dir} is being written by pid ${sleeper.pid} on ${hostname()} since 2026-01-01T00:00:00.000Z: ` +
          'wait for that run to end (or stop it), or choose another --out',
      );
      lockOf(dir, 1, 'another-host'); // another machine's writer: its pid cannot be checked from here
      expect(() => lockRunFolder(dir, 'resume')).toThrow(/on another-host since .* choose another --resume/);
    } finally {
      sleeper.kill();
    }
  });

  it('takes over the lock of a process that is gone, saying so', () => {
    const dir = join(root, 'stale');
    lockRunFolder(dir);
    releaseRunLocks();
    const gone = spawnSync('true').pid; // has exited by now
    lockOf(dir, gone);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      lockRunFolder(dir);
      expect(String(stderr.mock.calls[0]?.[0])).toMatch(new RegExp(`taking over the lock of .* from pid ${gone}`));
    } finally {
      stderr.mockRestore();
    }
    expect(JSON.parse(readFileSync(join(dir, RUN_LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('a folder that cannot be made is one clear line naming the path and what to do, never a hang', () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    expect(() => lockRunFolder(join(file, 'run'))).toThrow(
      `--out ${join(file, 'run')}: ${file} is a file, not a folder: give a folder path`,
    );
    expect(() => lockRunFolder(file, 'resume')).toThrow(/^--resume .* is a file: give a folder/);
    if (existsSync('/proc/self')) {
      // Node's recursive mkdir loops forever under /proc: refused before any mkdir
      expect(() => lockRunFolder('/proc/grassflow-x/run')).toThrow(
        /--out \/proc\/grassflow-x\/run is inside the system folder \/proc/,
      );
    }
  });
});

describe('lockRunFolder across processes', () => {
  // Each contender waits for one start instant, then makes the same missing nested folder and takes its lock:
  // the mkdir race and the lock race both happen, on every round.
  const lockTs = join(dirname(fileURLToPath(import.meta.url)), '../src/run/lock.ts');
  const contender = `
    import { lockRunFolder } from ${JSON.stringify(lockTs)};
    const [dir, at] = process.argv.slice(-2);
    while (Date.now() < Number(at)) {}
    try { lockRunFolder(dir); console.log('ok'); } catch (e) { console.log(e.message); }
    setTimeout(() => {}, 1500); // hold the lock while the others try
  `;
  const run = (dir: string, at: number): Promise<string> =>
    new Promise((done) => {
      const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', contender, dir, String(at)]);
      let out = '';
      p.stdout.on('data', (b: Buffer) => (out += b.toString()));
      p.on('close', () => done(out.trim()));
    });

  it('of six processes racing for one new folder, exactly one takes it and the others are told who has it', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = join(root, `race-${round}`, 'deep', 'run');
      const at = Date.now() + 4000; // after every contender has started
      const said = await Promise.all(Array.from({ length: 6 }, () => run(dir, at)));
      expect(
        said.filter((s) => s === 'ok'),
        said.join('\n'),
      ).toHaveLength(1);
      for (const s of said.filter((x) => x !== 'ok')) expect(s).toMatch(/is being written by pid \d+ on /);
    }
  });
});

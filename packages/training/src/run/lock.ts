// An exclusive lock on a run folder for the life of its writer: two processes never write one run.
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from '../flags.js';
import { folderProblem, makeFolder } from './out-folder.js';

/** The lock file inside a run folder; readers (eval, generate, reports) never need it. */
export const RUN_LOCK_FILE = '.grassflow-run.lock';

/** Whether a file name in a run folder is the lock or a lock being taken (`<lock>.<pid>.tmp`, for a moment). */
export function isRunLockFile(name: string): boolean {
  return name === RUN_LOCK_FILE || (name.startsWith(`${RUN_LOCK_FILE}.`) && name.endsWith('.tmp'));
}

/** Who holds a run folder. */
export interface RunLockOwner {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
}

const held = new Set<string>(); // lock files this process holds, removed at exit
let exitHookInstalled = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

function readOwner(path: string): RunLockOwner | null {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<RunLockOwner>;
    return typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.since === 'string'
      ? { pid: o.pid, host: o.host, since: o.since }
      : null;
  } catch {
    return null; // torn or removed meanwhile: treated as stale
  }
}

/** Whether another live process (on this host, or any process on another host) holds the lock of `dir`. */
export function lockedByOther(dir: string): RunLockOwner | null {
  const path = join(resolve(dir), RUN_LOCK_FILE);
  if (held.has(path)) return null;
  const owner = readOwner(path);
  return owner !== null && (owner.host !== hostname() || alive(owner.pid)) ? owner : null;
}

/**
 * Take the exclusive lock of run folder `dir` (created if missing) for this process, until it exits: the lock
 * file is created atomically (O_EXCL) and holds pid, host and start time. A lock this process holds is taken again
 * at once; a stale lock (its process is gone, same host) is taken over with a line on stderr; a live one refuses:
 * "X is being written by pid N on H since T".
 */
export function lockRunFolder(dir: string, flag = 'out'): void {
  const path = join(resolve(dir), RUN_LOCK_FILE);
  if (held.has(path)) return;
  makeFolder(resolve(dir), flag);
  const me: RunLockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    // Written whole to a private file, then hard-linked into place: link() fails with EEXIST atomically, and a
    // reader never sees an empty lock (which it would take for a stale one and take over).
    const mine = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(mine, `${JSON.stringify(me)}\n`);
      try {
        linkSync(mine, path);
      } finally {
        try {
          unlinkSync(mine);
        } catch {
          // already gone
        }
      }
      held.add(path);
      if (!exitHookInstalled) {
        process.on('exit', releaseRunLocks);
        exitHookInstalled = true;
      }
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
        throw folderProblem(resolve(dir), err as NodeJS.ErrnoException, flag);
    }
    const owner = readOwner(path);
    if (owner !== null && (owner.host !== me.host || alive(owner.pid))) {
      throw new UsageError(
        `${resolve(dir)} is being written by pid ${owner.pid} on ${owner.host} since ${owner.since}: ` +
          `wait for that run to end (or stop it), or choose another --${flag}`,
        flag,
      );
    }
    process.stderr.write(
      owner === null
        ? `taking over an unreadable lock of ${resolve(dir)}\n`
        : `taking over the lock of ${resolve(dir)} from pid ${owner.pid} (no longer running, since ${owner.since})\n`,
    );
    try {
      unlinkSync(path);
    } catch {
      // another process took it over first: the next attempt finds its lock
    }
  }
  throw new UsageError(`${resolve(dir)}: another process took over its lock at the same moment; try again`, flag);
}

/** Remove every lock this process holds (run at exit; idempotent). */
export function releaseRunLocks(): void {
  for (const path of held) {
    if (readOwner(path)?.pid === process.pid) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
    held.delete(path);
  }
}

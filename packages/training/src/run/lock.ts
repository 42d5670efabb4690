// An exclusive lock on a run folder for the life of its writer: two processes never write one run.
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../flags.js';

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

/**
 * What to tell a user whose file or folder `path` cannot be made, read or written, by errno code: what is wrong and
 * what to do, with the code in brackets (e.g. "the disk is full: free space or choose another disk [ENOSPC]").
 */
export function fileSystemProblem(path: string, err: NodeJS.ErrnoException): string {
  const code = err.code ?? 'unknown error';
  const what =
    code === 'ENOTDIR' || code === 'EEXIST'
      ? `a file is in the way (${err.path ?? path} is not a folder): choose a folder path`
      : code === 'EISDIR'
        ? `a folder is in the way (${err.path ?? path} is a folder, not a file): move it away or choose another path`
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'it cannot be written here (permission denied or a read-only file system): choose a writable folder'
          : code === 'ENOSPC' || code === 'EDQUOT'
            ? 'the disk is full: free space or choose another disk'
            : code === 'ENOENT'
              ? 'its parent cannot hold folders here (a special file system?): choose a normal folder'
              : `the file system refused it (${err.message})`;
  return `${what} [${code}]`;
}

/** What to tell a user whose run folder cannot be made or written, naming the flag. */
function folderProblem(dir: string, err: NodeJS.ErrnoException, flag: string): UsageError {
  return new UsageError(`--${flag} ${dir}: ${fileSystemProblem(dir, err)}`, flag);
}

/**
 * Create `dir` and its missing parents one level at a time from the nearest existing one. Node's recursive mkdir
 * loops forever on some special file systems (mkdir -p /proc/x); level by level it fails at once instead.
 */
function makeFolder(dir: string, flag: string): void {
  const missing: string[] = [];
  let at = dir;
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  try {
    if (!statSync(at).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR', path: at });
    for (const d of missing) {
      try {
        mkdirSync(d);
      } catch (err) {
        // another process made it between our look and our mkdir: fine if it is a folder (checked below)
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR', path: dir });
  } catch (err) {
    throw folderProblem(dir, err as NodeJS.ErrnoException, flag);
  }
}

/**
 * Make sure `dir` is a folder this process can write (created with its missing parents if needed): a file in the way,
 * a read-only or full file system, /proc/x are refused at once, naming the flag, before anything is trained into it.
 * A lock does this for the folder it takes; this is for folders of many runs (`--runs`), which hold no lock.
 */
export function checkWritableFolder(dir: string, flag: string): void {
  const at = resolve(dir);
  makeFolder(at, flag);
  const probe = join(at, `.grassflow-write-check.${process.pid}.tmp`);
  try {
    writeFileSync(probe, 'x');
  } catch (err) {
    throw folderProblem(at, err as NodeJS.ErrnoException, flag);
  } finally {
    rmSync(probe, { force: true });
  }
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

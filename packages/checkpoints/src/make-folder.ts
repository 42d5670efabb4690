// Folders made without a hang: Node's recursive mkdir never returns on some kernel file systems (mkdir -p /proc/x/y),
// so a folder is made one level at a time from the nearest existing one, after a look at what that one is (a file in
// the way, a kernel file system), and the async form gives up after a deadline (a hung network mount). The one place
// that makes the folders of commands (training's output-folder guard) and of caches (downloads).
import { existsSync, mkdirSync, statfsSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** statfs(2) magic numbers of kernel file systems that are no place for files (proc, sysfs, cgroup, debugfs, …). */
const SPECIAL_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x1cd1, 'devpts'],
  [0xcafe4a11, 'bpf'],
  [0x6165676c, 'pstore'],
  [0x62656570, 'configfs'],
  [0xde5e81e4, 'efivarfs'],
]);

/**
 * An error as Node's file-system calls throw it (NodeJS.ErrnoException's fields this package reads), spelled out so
 * that the declarations need no @types/node in a consumer.
 */
export interface ErrnoError extends Error {
  code?: string;
  path?: string;
  syscall?: string;
}

/** Why a folder cannot be made at a path, found without creating anything (see {@link folderPlaceProblem}). */
export type FolderPlaceProblem =
  /** `at` (the path itself, or a folder above it) is a file. */
  | { readonly kind: 'file'; readonly at: string }
  /** The nearest existing folder is on a kernel file system (`fileSystem`: proc, sysfs, …). */
  | { readonly kind: 'special'; readonly fileSystem: string }
  /** The nearest existing path cannot be looked at (permissions, …). */
  | { readonly kind: 'error'; readonly error: ErrnoError };

/** The nearest path above (or at) `path` that exists. */
function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at)) {
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  return at;
}

/**
 * What stands in the way of a folder at `dir`, without creating anything: a file at or above it, a kernel file system
 * (where Node's recursive mkdir never returns), a path that cannot be looked at; undefined when nothing does.
 */
export function folderPlaceProblem(dir: string): FolderPlaceProblem | undefined {
  const at = nearestExisting(resolve(dir));
  try {
    if (!statSync(at).isDirectory()) return { kind: 'file', at };
  } catch (err) {
    return { kind: 'error', error: err as NodeJS.ErrnoException };
  }
  let fsType: number | undefined;
  try {
    fsType = statfsSync(at).type;
  } catch {
    fsType = undefined; // no statfs here: the level-by-level mkdir fails at once where it cannot work
  }
  const special = fsType === undefined ? undefined : SPECIAL_FILE_SYSTEMS.get(fsType);
  return special === undefined ? undefined : { kind: 'special', fileSystem: special };
}

/** An errno-style error (as node:fs throws) for a folder problem, so that {@link fileSystemProblem} can word it. */
function placeError(dir: string, p: FolderPlaceProblem): NodeJS.ErrnoException {
  if (p.kind === 'error') return p.error;
  if (p.kind === 'file') return Object.assign(new Error(`${p.at} is not a folder`), { code: 'ENOTDIR', path: p.at });
  return Object.assign(new Error(`${dir} is on the kernel's ${p.fileSystem} file system`), {
    code: 'ESPECIALFS',
    path: dir,
  });
}

/**
 * What to tell a user whose file or folder `path` cannot be made, read or written, by errno code: what is wrong and
 * what to do, with the code in brackets (e.g. "the disk is full: free space or choose another disk [ENOSPC]").
 */
export function fileSystemProblem(path: string, err: ErrnoError): string {
  const code = err.code ?? 'unknown error';
  const what =
    code === 'ENOTDIR' || code === 'EEXIST'
      ? `a file is in the way (${err.path ?? path} is not a folder): give a folder`
      : code === 'EISDIR'
        ? `a folder is in the way (${err.path ?? path} is a folder, not a file): move it away or choose another path`
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'it cannot be written here (permission denied or a read-only file system): choose a writable folder'
          : code === 'ENOSPC' || code === 'EDQUOT'
            ? 'the disk is full: free space or choose another disk'
            : code === 'ENOENT'
              ? 'its parent cannot hold folders here (a special file system?): choose a normal folder'
              : code === 'ESPECIALFS'
                ? `${err.message}, which holds no files: choose a folder on a disk`
                : code === 'ETIMEDOUT'
                  ? `${err.message} (a hung network mount?): choose a folder on a local disk`
                  : `the file system refused it (${err.message})`;
  return `${what} [${code}]`;
}

/** The folders from the nearest existing one down to `dir`, top first, that do not exist yet. */
function missingLevels(dir: string): string[] {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  return missing;
}

/** `err` unless it says the folder exists (another process made it between our look and our mkdir). */
function unlessExists(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
}

/**
 * Make the folder `dir` and its missing parents one level at a time, after {@link folderPlaceProblem}. Throws an
 * errno-style error (ENOTDIR for a file in the way, ESPECIALFS for a kernel file system, or what mkdir threw), which
 * {@link fileSystemProblem} words for a user.
 */
export function makeFolderSync(dir: string): void {
  const at = resolve(dir);
  const problem = folderPlaceProblem(at);
  if (problem !== undefined) throw placeError(at, problem);
  for (const d of missingLevels(at)) {
    try {
      mkdirSync(d);
    } catch (err) {
      unlessExists(err);
    }
  }
  if (!statSync(at).isDirectory()) throw placeError(at, { kind: 'file', at });
}

/** Options of {@link makeFolder}. */
export interface MakeFolderOptions {
  /** Give up (ETIMEDOUT) when the file system has not answered within this many ms (default 10,000). */
  readonly timeoutMs?: number;
}

/** {@link makeFolderSync}, without blocking, and refused with ETIMEDOUT when the file system does not answer in time. */
export async function makeFolder(dir: string, options: MakeFolderOptions = {}): Promise<void> {
  const at = resolve(dir);
  const timeoutMs = options.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, fail) => {
    timer = setTimeout(() => {
      const err = new Error(`the file system did not make ${at} within ${timeoutMs / 1000} s`);
      fail(Object.assign(err, { code: 'ETIMEDOUT', path: at }));
    }, timeoutMs);
    timer.unref();
  });
  const make = async () => {
    const problem = folderPlaceProblem(at);
    if (problem !== undefined) throw placeError(at, problem);
    for (const d of missingLevels(at)) await mkdir(d).catch(unlessExists);
    if (!(await stat(at)).isDirectory()) throw placeError(at, { kind: 'file', at });
  };
  const made = make();
  made.catch(() => undefined); // a late failure after the deadline is not an unhandled rejection
  try {
    await Promise.race([made, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

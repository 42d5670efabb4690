// The one guard of every folder a command writes into (a run, an export, inspect's or bench's reports, a study's
// ledger): never `/` or a system folder, never a file, never over a user's own files, and never a hang on a special
// file system; all checked before any slow work.
import { existsSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../flags.js';

/**
 * What to tell a user whose file or folder `path` cannot be made, read or written, by errno code: what is wrong and
 * what to do, with the code in brackets (e.g. "the disk is full: free space or choose another disk [ENOSPC]").
 */
export function fileSystemProblem(path: string, err: NodeJS.ErrnoException): string {
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
              : `the file system refused it (${err.message})`;
  return `${what} [${code}]`;
}

/** What to tell a user whose output folder cannot be made or written, naming the flag. */
export function folderProblem(dir: string, err: NodeJS.ErrnoException, flag: string): UsageError {
  return new UsageError(`--${flag} ${dir}: ${fileSystemProblem(dir, err)}`, flag);
}

/** Folders whose whole tree belongs to the system: nothing is ever written below them. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev', '/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/boot'];
/** Folders that hold other folders (users', the system's): a command writes into a folder below them, not into them. */
const SHARED_ROOTS = ['/', '/var', '/tmp', '/home', '/root', '/opt', '/srv', '/mnt', '/media', '/run', '/var/tmp'];

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

function under(path: string, tree: string): boolean {
  return path === tree || path.startsWith(`${tree}/`);
}

/** The nearest folder above (or at) `path` that exists. */
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
 * Refuse `dir` (absolute) as an output folder at once, without creating anything: `/`, a system folder or a folder
 * that holds users' or the system's folders, a path that is or runs through a file, a kernel file system (where
 * Node's recursive mkdir never returns).
 */
export function refuseOutputPlace(dir: string, flag: string): void {
  const tree = SYSTEM_TREES.find((t) => under(dir, t));
  const home = homedir();
  if (tree !== undefined || SHARED_ROOTS.includes(dir) || dir === home) {
    throw new UsageError(
      `--${flag} ${dir} is ${tree !== undefined ? `inside the system folder ${tree}` : 'a folder of other folders'}: ` +
        `give a folder of its own, e.g. --${flag} ${join(tree === undefined && dir !== '/' ? dir : home, 'grassflow-out')}`,
      flag,
    );
  }
  const at = nearestExisting(dir);
  let isDir: boolean;
  try {
    isDir = statSync(at).isDirectory();
  } catch (err) {
    throw folderProblem(dir, err as NodeJS.ErrnoException, flag);
  }
  if (!isDir) {
    throw new UsageError(
      at === dir
        ? `--${flag} ${dir} is a file: give a folder (a new or empty one)`
        : `--${flag} ${dir}: ${at} is a file, not a folder: give a folder path`,
      flag,
    );
  }
  let fsType: number | undefined;
  try {
    fsType = statfsSync(at).type;
  } catch {
    fsType = undefined; // no statfs here: the mkdir below is level by level and fails at once where it cannot work
  }
  const special = fsType === undefined ? undefined : SPECIAL_FILE_SYSTEMS.get(fsType);
  if (special !== undefined) {
    throw new UsageError(`--${flag} ${dir} is on the kernel's ${special} file system: give a folder on a disk`, flag);
  }
}

/**
 * Create `dir` and its missing parents one level at a time from the nearest existing one, after
 * {@link refuseOutputPlace}. Node's recursive mkdir loops forever on some special file systems (mkdir -p /proc/x);
 * a plain mkdir of one level returns at once there.
 */
export function makeFolder(dir: string, flag: string): void {
  refuseOutputPlace(dir, flag);
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  try {
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

/** Write a probe file into the folder `dir` and remove it: refused (naming the flag and errno) when it cannot. */
function probeWritable(dir: string, flag: string): void {
  const probe = join(dir, `.grassflow-write-check.${process.pid}.tmp`);
  try {
    writeFileSync(probe, 'x');
  } catch (err) {
    throw folderProblem(dir, err as NodeJS.ErrnoException, flag);
  } finally {
    rmSync(probe, { force: true });
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
  probeWritable(at, flag);
}

/** The file that marks a folder as a command's own output (so that the command may write it again). */
export const OUTPUT_MARKER_FILE = '.grassflow-output.json';

/** How {@link prepareOutputFolder} judges a folder that already holds files. */
export interface OutputFolderOptions {
  /** The flag that named the folder (default `out`). */
  flag?: string;
  /** The command whose output it is (`inspect`, `bench --scaling`): recorded in the marker, matched on reuse. */
  command: string;
  /** Whether a folder without the marker is this command's own earlier output all the same (an earlier export). */
  isOwn?: (dir: string) => boolean;
}

function markerCommand(dir: string): string | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, OUTPUT_MARKER_FILE), 'utf8')) as { command?: unknown };
    return typeof m.command === 'string' ? m.command : null;
  } catch {
    return null;
  }
}

/**
 * Check the folder `dir` for a command's output before any work, and make it: refuses `/` and system folders, a file,
 * a kernel file system, a folder that cannot be written, and a non-empty folder that is not this command's earlier
 * output (its marker file, or `isOwn`), naming what is there, so that a user's own files are never overwritten.
 * Writes the marker; returns the absolute path.
 */
export function prepareOutputFolder(dir: string, o: OutputFolderOptions): string {
  const flag = o.flag ?? 'out';
  const at = resolve(dir);
  refuseOutputPlace(at, flag);
  if (existsSync(at)) {
    const names = readdirSync(at).sort();
    const own = markerCommand(at) === o.command || (o.isOwn?.(at) ?? false);
    if (names.length > 0 && !own) {
      throw new UsageError(
        `--${flag} ${at} holds files ${o.command} did not write (${names.slice(0, 3).join(', ')}` +
          `${names.length > 3 ? ', …' : ''}): give a new or empty folder`,
        flag,
      );
    }
  }
  makeFolder(at, flag);
  probeWritable(at, flag);
  if (markerCommand(at) !== o.command && !(o.isOwn?.(at) ?? false)) {
    try {
      writeFileSync(
        join(at, OUTPUT_MARKER_FILE),
        `${JSON.stringify({ command: o.command, created: new Date().toISOString() })}\n`,
      );
    } catch (err) {
      throw folderProblem(at, err as NodeJS.ErrnoException, flag);
    }
  }
  return at;
}

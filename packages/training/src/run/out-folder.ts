// The one guard of every folder a command writes into (a run, an export, inspect's or bench's reports, a study's
// ledger): never `/` or a system folder, never a file, never over a user's own files, and never a hang on a special
// file system; all checked before any slow work.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileSystemProblem, folderPlaceProblem, makeFolderSync } from '@grassflow/checkpoints';
import { UsageError } from '../flags.js';

/** What to tell a user whose output folder cannot be made or written, naming the flag. */
export function folderProblem(dir: string, err: NodeJS.ErrnoException, flag: string): UsageError {
  return new UsageError(`--${flag} ${dir}: ${fileSystemProblem(dir, err)}`, flag);
}

/** Folders whose whole tree belongs to the system: nothing is ever written below them. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev', '/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/boot'];
/** Folders that hold other folders (users', the system's): a command writes into a folder below them, not into them. */
const SHARED_ROOTS = ['/', '/var', '/tmp', '/home', '/root', '/opt', '/srv', '/mnt', '/media', '/run', '/var/tmp'];

function under(path: string, tree: string): boolean {
  return path === tree || path.startsWith(`${tree}/`);
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
  const problem = folderPlaceProblem(dir);
  if (problem?.kind === 'error') throw folderProblem(dir, problem.error, flag);
  if (problem?.kind === 'file') {
    throw new UsageError(
      problem.at === dir
        ? `--${flag} ${dir} is a file: give a folder (a new or empty one)`
        : `--${flag} ${dir}: ${problem.at} is a file, not a folder: give a folder path`,
      flag,
    );
  }
  if (problem?.kind === 'special') {
    throw new UsageError(
      `--${flag} ${dir} is on the kernel's ${problem.fileSystem} file system: give a folder on a disk`,
      flag,
    );
  }
}

/**
 * Create `dir` and its missing parents after {@link refuseOutputPlace}, one level at a time (checkpoints'
 * makeFolderSync: Node's recursive mkdir loops forever on some special file systems, mkdir -p /proc/x).
 */
export function makeFolder(dir: string, flag: string): void {
  refuseOutputPlace(dir, flag);
  try {
    makeFolderSync(dir);
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

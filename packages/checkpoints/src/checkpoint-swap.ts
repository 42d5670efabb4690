// Replace a checkpoint folder as a whole: build it in a temp sibling, then swap it in with renames.
//
// POSIX rename(2) cannot atomically replace a non-empty directory, so a save takes two renames:
//   1. write everything into  <dir>.tmp-<id>/  (each file fsynced, then the folder fsynced)
//   2. rename <dir> → <dir>.old-<id>          (only if <dir> exists)
//   3. rename <dir>.tmp-<id> → <dir>, fsync the parent
//   4. rename <dir>.old-<id> → <dir>.trash-<id>, then delete it
// A crash before 2 leaves <dir> untouched (plus a stale tmp); between 2 and 3 leaves no <dir> but a
// complete <dir>.old-<id>, which `locateCheckpoint` reads instead and the next save renames back;
// after 3 <dir> is the new checkpoint. Trash folders are never read, so a half-deleted one is harmless.

import { lstat, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { temporarySibling, type FileSystemOps } from './atomic-write.js';
import { CHECKPOINT_FILES, CHECKPOINT_FORMAT, CheckpointError } from './checkpoint-config.js';

const SIBLING = /^\.(tmp|old|trash)-\d+-[0-9a-f]{12}$/;

interface Sibling {
  readonly path: string;
  readonly kind: 'tmp' | 'old' | 'trash';
}

async function siblingsOf(target: string): Promise<Sibling[]> {
  const base = basename(target);
  let names: string[];
  try {
    names = await readdir(dirname(target));
  } catch {
    return [];
  }
  const out: Sibling[] = [];
  for (const name of names) {
    if (!name.startsWith(base)) continue;
    const m = SIBLING.exec(name.slice(base.length));
    if (m !== null) out.push({ path: join(dirname(target), name), kind: m[1] as Sibling['kind'] });
  }
  return out;
}

/**
 * Whether `path` is a folder (undefined: nothing there). `follow`: a symbolic link to a folder counts as one (reading:
 * pnpm installs packages as links); writing swaps the entry itself, so it does not follow.
 */
async function isDirectory(path: string, follow = false): Promise<boolean | undefined> {
  try {
    return (await (follow ? stat : lstat)(path)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The newest `<dir>.old-*` folder: the complete previous checkpoint of a save that crashed mid-swap. */
async function newestOld(target: string): Promise<string | undefined> {
  const olds = (await siblingsOf(target)).filter((s) => s.kind === 'old');
  let best: { path: string; mtime: number } | undefined;
  for (const o of olds) {
    const mtime = (await stat(o.path)).mtimeMs;
    if (best === undefined || mtime > best.mtime) best = { path: o.path, mtime };
  }
  return best?.path;
}

/**
 * The folder to read for checkpoint `target`: `target` itself, or, when it is missing because a save
 * crashed between its two renames, the complete previous checkpoint left at `<target>.old-*`.
 */
export async function locateCheckpoint(target: string): Promise<{ dir: string; recovered: boolean }> {
  const kind = await isDirectory(target, true);
  if (kind === true) return { dir: target, recovered: false };
  if (kind === false) {
    throw new CheckpointError(
      'NOT_A_DIRECTORY',
      `${target} is a file, not a checkpoint folder: pass a checkpoint folder (a run's checkpoints/best or checkpoints/latest, or the folder saveCheckpoint() wrote)`,
    );
  }
  const old = await newestOld(target);
  if (old !== undefined) return { dir: old, recovered: true };
  throw new CheckpointError(
    'NOT_FOUND',
    `checkpoint folder ${target} does not exist: check the path (relative paths resolve against ${process.cwd()}); a run folder's checkpoints are in <run>/checkpoints/best and <run>/checkpoints/latest`,
  );
}

/** Refuses to replace a folder that is not a checkpoint, or that holds files a save would delete. */
async function checkReplaceable(target: string): Promise<void> {
  const entries = await readdir(target);
  if (entries.length === 0) return;
  const configPath = join(target, CHECKPOINT_FILES.config);
  let format: unknown;
  try {
    format = (JSON.parse(await readFile(configPath, 'utf8')) as { format?: unknown } | null)?.format;
  } catch {
    format = undefined;
  }
  if (format !== CHECKPOINT_FORMAT) {
    throw new CheckpointError(
      'TARGET_NOT_CHECKPOINT',
      `refusing to replace ${target}: it is not empty and not a grassflow checkpoint (no ${CHECKPOINT_FILES.config} with format "${CHECKPOINT_FORMAT}"); save to a new or empty folder`,
    );
  }
  const ours = new Set<string>(Object.values(CHECKPOINT_FILES));
  const foreign = entries.filter((e) => !ours.has(e));
  if (foreign.length > 0) {
    throw new CheckpointError(
      'TARGET_NOT_CHECKPOINT',
      `refusing to replace ${target}: saving swaps the whole folder and would delete ${foreign.map((f) => JSON.stringify(f)).join(', ')}; move those files elsewhere first`,
    );
  }
}

/**
 * Makes `target` hold exactly what `fill(tmpDir)` writes, crash-safely (see the file comment).
 * Before writing it repairs what an earlier crashed save left: restores a lone `<target>.old-*`
 * when `target` is missing, and removes stale tmp/old/trash siblings. One writer per folder at a time.
 * `checkTarget` refuses an existing `target` that may not be replaced (default: anything but a checkpoint folder);
 * a folder of another format (e.g. a pretrained export, which holds more files) passes its own.
 */
export async function replaceDirectory(
  target: string,
  fs: FileSystemOps,
  fill: (tmp: string) => Promise<void>,
  checkTarget: (target: string) => Promise<void> = checkReplaceable,
): Promise<void> {
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });

  // Repair after an earlier crash.
  if ((await isDirectory(target)) === undefined) {
    const old = await newestOld(target);
    if (old !== undefined) {
      await fs.rename(old, target);
      await fs.syncDirectory(parent);
    }
  }
  const exists = await isDirectory(target);
  if (exists === false) {
    throw new CheckpointError(
      'NOT_A_DIRECTORY',
      `${target} is a file; a checkpoint is saved to a folder path (new, empty or an earlier checkpoint)`,
    );
  }
  if (exists === true) await checkTarget(target);
  for (const s of await siblingsOf(target)) await fs.remove(s.path);

  const tmp = temporarySibling(target, 'tmp');
  const id = tmp.slice(tmp.lastIndexOf('.tmp-') + '.tmp-'.length);
  const old = join(parent, `${basename(target)}.old-${id}`);
  let movedAside = false;
  try {
    await fs.mkdir(tmp);
    await fill(tmp);
    await fs.syncDirectory(tmp);
    if (exists === true) {
      await fs.rename(target, old);
      movedAside = true;
    }
    await fs.rename(tmp, target);
  } catch (error) {
    // An ordinary failure (disk full, permissions): put the previous checkpoint back and clean up.
    if (movedAside) await fs.rename(old, target).catch(() => undefined);
    await fs.remove(tmp).catch(() => undefined);
    throw error;
  }
  // Committed: `target` is the new checkpoint.
  try {
    await fs.syncDirectory(parent);
  } catch (cause) {
    throw new CheckpointError(
      'WRITE_FAILED',
      `the new checkpoint is in place at ${target}, but syncing ${parent} failed (${(cause as Error).message}): it may not survive a power loss; save again to be sure`,
      { cause },
    );
  }
  if (exists === true) {
    // Best effort: a leftover old/trash folder is removed by the next save and never read while `target` exists.
    const trash = join(parent, `${basename(target)}.trash-${id}`);
    try {
      await fs.rename(old, trash);
      await fs.remove(trash);
    } catch {
      // ignored on purpose (see above)
    }
  }
}

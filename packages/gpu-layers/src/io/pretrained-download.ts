// A served pretrained folder, downloaded into the user cache (Node): config.json first, then the files the loader
// needs (tokenizer_config.json, the files it names, model.safetensors; never the card or anything else config.json
// records), through @grassflow/checkpoints' downloadFile (SHA-256 checked, atomic) — the workspace's one download. The
// limits are the client's: each file within the size its role allows (model.safetensors: the parameters the config
// implies), all of them within a total, and an overall deadline. A file already in the cache with the recorded
// SHA-256 is not fetched again; config.json is, every time (it is small, and says whether the folder changed).
import { createHash } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CHECKPOINT_CONFIG_MAX_BYTES,
  CHECKPOINT_MAX_TOTAL_BYTES,
  CheckpointError,
  DownloadError,
  downloadDeadlineMs,
  downloadFile,
  fileSystemProblem,
  makeFolder,
  sha256File,
  userCacheDir,
} from '@grassflow/checkpoints';
import {
  isPretrainedConfigJson,
  mismatchMessage,
  checkTotalBytes,
  neededFileBytes,
  notPretrainedError,
  parseTokenizerConfig,
  PRETRAINED_FILES,
  tokenizerFilesRead,
  pretrainedFileRecords,
  pretrainedFileUrl,
  pretrainedFolderUrl,
  pretrainedModelConfig,
  shownUrl,
} from './pretrained-model.js';

/** Options of {@link downloadPretrained}. */
export interface DownloadPretrainedOptions {
  /**
   * Cache root (default `$GRASSFLOW_CACHE_DIR`, else `userCacheDir()` of @grassflow/checkpoints:
   * `$XDG_CACHE_HOME/grassflow` or `~/.cache/grassflow`); a URL's files go to
   * `<root>/pretrained/<host and path>-<hash of the URL>/`.
   */
  readonly cacheDir?: string;
  /** Environment to read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Overall deadline of the whole download in ms (default `$GRASSFLOW_DOWNLOAD_DEADLINE_S` seconds, else the bytes
   * needed at 256 KiB/s, at least 30 s).
   */
  readonly deadlineMs?: number;
  /** Most bytes of all the files fetched together (default 4 GiB). */
  readonly maxTotalBytes?: number;
  /** Fetch weights config.json records no size and SHA-256 of, within their cap (refused `UNVERIFIED` without it). */
  readonly trust?: boolean;
  /**
   * Where a model package's name is looked up, as Node resolves a package from a file of this folder (default
   * `process.cwd()`): `fromPretrained('@scope/model')` after `npm install @scope/model`.
   */
  readonly resolveFrom?: string;
}

const MiB = 1024 * 1024;
// One connection per file: Node's global agent keeps sockets alive, and a socket the server closes between two files
// (its keep-alive timeout, a few seconds while a large file is hashed) fails the next GET with ECONNRESET.
const HEADERS = { connection: 'close' } as const;

/** Whether `s` is an http(s) URL (anything else is a folder, or a file: URL of one). */
export function isPretrainedUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/** Where the cache root comes from: the option, GRASSFLOW_CACHE_DIR, or the user cache. */
function cacheRoot(options: DownloadPretrainedOptions): { root: string; from: string } {
  const env = options.env ?? process.env;
  const fromEnv = env['GRASSFLOW_CACHE_DIR'];
  if (options.cacheDir !== undefined) return { root: resolve(options.cacheDir), from: 'the cacheDir option' };
  if (fromEnv !== undefined && fromEnv !== '') return { root: resolve(fromEnv), from: 'GRASSFLOW_CACHE_DIR' };
  return { root: resolve(userCacheDir(env)), from: 'the user cache; set GRASSFLOW_CACHE_DIR to move it' };
}

/** The cache folder of a URL: readable (host and path) and unique (a hash of the whole URL). */
export function pretrainedCacheDir(url: string, options: DownloadPretrainedOptions = {}): string {
  const u = new URL(url);
  const readable = `${u.host}${u.pathname}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|_+$/g, '');
  const hash = createHash('sha256').update(u.href).digest('hex').slice(0, 12);
  return join(cacheRoot(options).root, 'pretrained', `${readable.slice(0, 80)}-${hash}`);
}

/** The overall deadline: the option, else GRASSFLOW_DOWNLOAD_DEADLINE_S, else undefined (proportional to the bytes). */
function deadlineOption(options: DownloadPretrainedOptions): number | undefined {
  if (options.deadlineMs !== undefined) return options.deadlineMs;
  const s = (options.env ?? process.env)['GRASSFLOW_DOWNLOAD_DEADLINE_S'];
  if (s === undefined || s === '') return undefined;
  const seconds = Number(s);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new CheckpointError(
      'INVALID_ARGUMENT',
      `GRASSFLOW_DOWNLOAD_DEADLINE_S must be a number of seconds > 0, got '${s}'`,
    );
  }
  return seconds * 1000;
}

/** downloadFile's error for a file, as a CheckpointError naming the file and what to do (a mismatch above all). */
function downloadError(error: unknown, url: string, name: string): unknown {
  if (!(error instanceof DownloadError)) return error;
  if (error.code === 'SIZE_LIMIT' && name === PRETRAINED_FILES.config) {
    return new CheckpointError(
      'INVALID_CONFIG',
      `${url}: ${name} is too large (more than ${CHECKPOINT_CONFIG_MAX_BYTES / MiB} MiB; an export's is a few KiB): ` +
        'not a pretrained folder; refused before keeping it',
      { cause: error },
    );
  }
  if (error.code === 'CHECKSUM_MISMATCH' || error.code === 'SIZE_LIMIT' || error.code === 'TRUNCATED') {
    const why = error.code === 'CHECKSUM_MISMATCH' ? 'has another SHA-256' : 'has other bytes';
    return new CheckpointError('CORRUPT_FILE', `${mismatchMessage(url, name, why)}. (${error.message})`, {
      cause: error,
    });
  }
  if (error.code === 'TIMED_OUT') {
    return new CheckpointError(
      'NOT_FOUND',
      `${url}: ${name} did not arrive in time (${error.message.replace(/ Retry,.*$/, '')}); retry, or allow longer ` +
        'with GRASSFLOW_DOWNLOAD_DEADLINE_S=SECONDS (the deadlineMs option)',
      { cause: error },
    );
  }
  return new CheckpointError('NOT_FOUND', `${url}: cannot download ${name}: ${error.message}`, { cause: error });
}

/**
 * Downloads the pretrained folder served at `url` (`grassflow-lm export`'s folder behind any static HTTP server) into
 * its cache folder and returns that folder, which loadPretrained reads. config.json first, then only what the loader
 * needs, each file within the size the client allows for it (a larger record, or Content-Length, is refused before
 * reading) and checked against its recorded size and SHA-256; all within a total and an overall deadline. A mismatch
 * is a CheckpointError naming the file, and the cached copy keeps its last good bytes.
 */
export async function downloadPretrained(url: string, options: DownloadPretrainedOptions = {}): Promise<string> {
  const folder = pretrainedFolderUrl(url);
  const shown = shownUrl(folder);
  const dir = pretrainedCacheDir(folder.href, options);
  const started = Date.now();
  const given = deadlineOption(options);
  let deadline = started + (given ?? downloadDeadlineMs(CHECKPOINT_CONFIG_MAX_BYTES));
  try {
    await makeFolder(dir);
  } catch (err) {
    const { root, from } = cacheRoot(options);
    throw new CheckpointError(
      'WRITE_FAILED',
      `the download cache ${root} (from ${from}) cannot hold ${shown}: ` +
        `${fileSystemProblem(dir, err as NodeJS.ErrnoException)}; set GRASSFLOW_CACHE_DIR to a writable folder`,
      { cause: err },
    );
  }
  const fetchOne = async (name: string, maxBytes: number, sha256?: string) => {
    const path = join(dir, name);
    if (sha256 !== undefined && (await sha256File(path).catch(() => undefined)) === sha256) return;
    try {
      await downloadFile(pretrainedFileUrl(folder, name), path, {
        maxBytes,
        headers: HEADERS,
        deadlineMs: Math.max(1, deadline - Date.now()),
        notWritableHint: 'Set GRASSFLOW_CACHE_DIR to a writable folder.',
        ...(sha256 === undefined ? {} : { sha256 }),
      });
    } catch (error) {
      throw downloadError(error, shown, name);
    }
  };
  await fetchOne(PRETRAINED_FILES.config, CHECKPOINT_CONFIG_MAX_BYTES);
  const configPath = join(dir, PRETRAINED_FILES.config);
  let cfg: unknown;
  try {
    cfg = JSON.parse(await readFile(configPath, 'utf8'));
  } catch {
    cfg = undefined;
  }
  if (!isPretrainedConfigJson(cfg)) {
    await rm(configPath, { force: true });
    throw notPretrainedError(shown);
  }
  const where = `${shown}${PRETRAINED_FILES.config}`;
  const records = pretrainedFileRecords(cfg, where);
  if (records.size === 0 || !records.has(PRETRAINED_FILES.tokenizer)) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} records no files to fetch (an export older than the file records): export the run again ` +
        '(grassflow-lm export RUN --out DIR), or copy the folder and give its path',
    );
  }
  const model = pretrainedModelConfig(cfg, where);
  const sha = (name: string) => records.get(name)?.sha256;
  const tokenizerBytes = neededFileBytes(PRETRAINED_FILES.tokenizer, records, model, where);
  await fetchOne(PRETRAINED_FILES.tokenizer, tokenizerBytes, sha(PRETRAINED_FILES.tokenizer));
  const tokenizer = parseTokenizerConfig(await readFile(join(dir, PRETRAINED_FILES.tokenizer), 'utf8'), shown);
  const rest = [...new Set([...tokenizerFilesRead(tokenizer), PRETRAINED_FILES.model])];
  const sizes = rest.map((name) => neededFileBytes(name, records, model, where, options.trust === true));
  const total = tokenizerBytes + sizes.reduce((a, b) => a + b, 0);
  const maxTotal = options.maxTotalBytes ?? CHECKPOINT_MAX_TOTAL_BYTES;
  checkTotalBytes(where, total, maxTotal);
  if (given === undefined) deadline = started + downloadDeadlineMs(total + CHECKPOINT_CONFIG_MAX_BYTES);
  for (const [k, name] of rest.entries()) await fetchOne(name, sizes[k] as number, sha(name));
  return dir;
}

/**
 * The folder on disk of what a loader was given: an http(s) URL's download (downloadPretrained), a file: URL's path, or
 * the folder itself.
 */
export async function localFolderOf(dirOrUrl: string, options: DownloadPretrainedOptions = {}): Promise<string> {
  if (isPretrainedUrl(dirOrUrl)) return downloadPretrained(dirOrUrl, options);
  if (dirOrUrl.startsWith('file:')) return fileURLToPath(dirOrUrl);
  const isDir = async (path: string) => (await stat(path).catch(() => undefined))?.isDirectory() === true;
  if (!NPM_PACKAGE_NAME.test(dirOrUrl) || (await isDir(dirOrUrl))) return dirOrUrl;
  return installedModelPackage(dirOrUrl, resolve(options.resolveFrom ?? process.cwd()), isDir);
}

/** An npm package's name, `name` or `@scope/name` (a folder of that name, where there is one, comes first). */
const NPM_PACKAGE_NAME = /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/;

/**
 * The folder of the model package `name` installed where Node would find it from `from` (each node_modules up the
 * tree); a name neither a folder nor installed is refused with both ways out.
 */
async function installedModelPackage(
  name: string,
  from: string,
  isDir: (path: string) => Promise<boolean>,
): Promise<string> {
  // Node's own lookup paths, not require.resolve: a model package need not export its package.json or any JS.
  const paths = createRequire(join(from, 'package.json')).resolve.paths(name) ?? [];
  for (const modules of paths) if (await isDir(join(modules, name))) return join(modules, name);
  throw new CheckpointError(
    'MISSING_FILE',
    `${name}: no such folder, and no package of that name installed (looked up from ${from}): give the path or URL ` +
      `of an exported folder, or install the model package first (npm install ${name})`,
  );
}

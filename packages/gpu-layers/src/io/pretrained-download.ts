// A served pretrained folder, downloaded into the user cache (Node): config.json first, then each file it records,
// through @grassflow/checkpoints' downloadFile (size-bounded, SHA-256 checked, atomic) — the workspace's one download.
// A file already in the cache with the recorded SHA-256 is not fetched again; config.json is, every time (it is
// small, and it is what says whether the folder at the URL changed). Trainer state is never in an export's records,
// so it is never fetched.
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointError, DownloadError, downloadFile, sha256File, userCacheDir } from '@grassflow/checkpoints';
import {
  isPretrainedConfigJson,
  mismatchMessage,
  notPretrainedError,
  PRETRAINED_FILES,
  pretrainedFileRecords,
} from './pretrained-model.js';

/** Options of {@link downloadPretrained}. */
export interface DownloadPretrainedOptions {
  /**
   * Cache root (default `$GRASSFLOW_CACHE_DIR`, else `userCacheDir()` of @grassflow/checkpoints: `$XDG_CACHE_HOME/grassflow`
   * or `~/.cache/grassflow`); a URL's files go to `<root>/pretrained/<host and path>-<hash of the URL>/`.
   */
  readonly cacheDir?: string;
  /** Environment to read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const MiB = 1024 * 1024;
// One connection per file: Node's global agent keeps sockets alive, and a socket the server closes between two files
// (its keep-alive timeout, a few seconds while a large file is hashed) fails the next GET with ECONNRESET.
const HEADERS = { connection: 'close' } as const;

/** Whether `s` is an http(s) URL (anything else is a folder, or a file: URL of one). */
export function isPretrainedUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/** The cache folder of a URL: readable (host and path) and unique (a hash of the whole URL). */
export function pretrainedCacheDir(url: string, options: DownloadPretrainedOptions = {}): string {
  const env = options.env ?? process.env;
  const fromEnv = env['GRASSFLOW_CACHE_DIR'];
  const root = options.cacheDir ?? (fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : userCacheDir(env));
  const u = new URL(url);
  const readable = `${u.host}${u.pathname}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|_+$/g, '');
  const hash = createHash('sha256').update(u.href).digest('hex').slice(0, 12);
  return join(resolve(root), 'pretrained', `${readable.slice(0, 80)}-${hash}`);
}

/** downloadFile's error for a file, as a CheckpointError naming the file and what to do (a mismatch above all). */
function downloadError(error: unknown, url: string, name: string): unknown {
  if (!(error instanceof DownloadError)) return error;
  if (error.code === 'CHECKSUM_MISMATCH' || error.code === 'SIZE_LIMIT' || error.code === 'TRUNCATED') {
    const why = error.code === 'CHECKSUM_MISMATCH' ? 'has another SHA-256' : 'has other bytes';
    return new CheckpointError('CORRUPT_FILE', `${mismatchMessage(url, name, why)}. (${error.message})`, {
      cause: error,
    });
  }
  return new CheckpointError('NOT_FOUND', `${url}: cannot download ${name}: ${error.message}`, { cause: error });
}

/**
 * Downloads the pretrained folder served at `url` (`grassflow-lm export`'s folder behind any static HTTP server) into
 * its cache folder and returns that folder, which loadPretrained reads. Every file config.json records is fetched
 * once and checked against its size and SHA-256; a mismatch is a CheckpointError naming the file, and the cached copy
 * keeps its last good bytes.
 */
export async function downloadPretrained(url: string, options: DownloadPretrainedOptions = {}): Promise<string> {
  const base = url.endsWith('/') ? url : `${url}/`;
  const dir = pretrainedCacheDir(base, options);
  const configUrl = new URL(PRETRAINED_FILES.config, base).href;
  const configPath = join(dir, PRETRAINED_FILES.config);
  try {
    await downloadFile(configUrl, configPath, { maxBytes: 16 * MiB, headers: HEADERS });
  } catch (error) {
    throw downloadError(error, base, PRETRAINED_FILES.config);
  }
  let cfg: unknown;
  try {
    cfg = JSON.parse(await readFile(configPath, 'utf8'));
  } catch {
    cfg = undefined;
  }
  if (!isPretrainedConfigJson(cfg)) {
    await rm(configPath, { force: true });
    throw notPretrainedError(base);
  }
  const records = pretrainedFileRecords(cfg, configUrl);
  if (records.size === 0 || !records.has(PRETRAINED_FILES.tokenizer)) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${configUrl} records no files to fetch (an export older than the file records): export the run again ` +
        '(grassflow-lm export RUN --out DIR), or copy the folder and give its path',
    );
  }
  for (const [name, rec] of records) {
    const path = join(dir, name);
    const cached = await sha256File(path).catch(() => undefined);
    if (cached === rec.sha256) continue;
    try {
      await downloadFile(new URL(name, base).href, path, { sha256: rec.sha256, maxBytes: rec.bytes, headers: HEADERS });
    } catch (error) {
      throw downloadError(error, base, name);
    }
  }
  return dir;
}

/**
 * The folder on disk of what a loader was given: an http(s) URL's download (downloadPretrained), a file: URL's path, or
 * the folder itself.
 */
export async function localFolderOf(dirOrUrl: string, options: DownloadPretrainedOptions = {}): Promise<string> {
  if (isPretrainedUrl(dirOrUrl)) return downloadPretrained(dirOrUrl, options);
  return dirOrUrl.startsWith('file:') ? fileURLToPath(dirOrUrl) : dirOrUrl;
}

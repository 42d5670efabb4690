// Size-bounded, checksum-verified HTTP(S) download to a file, with redirects; node:http/https only.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { open, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { commitFileAtomic, temporarySibling } from './atomic-write.js';
import { downloadDeadlineMs, redactUrl } from './bounded-fetch.js';
import { CodedError } from './coded-error.js';
import { fileSystemProblem, makeFolder } from './make-folder.js';

/** Machine-readable reason of a {@link DownloadError}. */
export type DownloadErrorCode =
  | 'DOWNLOAD_FAILED' // network error, refused connection, idle timeout, a bad redirect
  | 'TIMED_OUT' // the overall deadline passed before the last byte
  | 'HTTP_STATUS' // the server answered with a non-2xx status
  | 'TOO_MANY_REDIRECTS'
  | 'SIZE_LIMIT' // more bytes than declared or than the allowed maximum
  | 'TRUNCATED' // fewer bytes than the server declared
  | 'CHECKSUM_MISMATCH'
  | 'NOT_WRITABLE' // the target folder cannot be written
  | 'INVALID_ARGUMENT'; // not an http(s) URL

/** Error of {@link downloadFile}: `code` says what failed, `file` the URL or path. */
export class DownloadError extends CodedError<DownloadErrorCode> {
  override readonly name = 'DownloadError';
}

/** User-Agent of {@link downloadFile} unless the caller names its own. */
const DEFAULT_USER_AGENT = 'grassflow (+https://www.npmjs.com/org/grassflow; node)';

/**
 * The user cache of grassflow's packages, absolute: `$XDG_CACHE_HOME/grassflow`, else `~/.cache/grassflow`.
 * Downloaded data, exports and models are kept under it unless a folder is given.
 */
export function userCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return resolve(base, 'grassflow');
}

/** SHA-256 of a file, hex, computed in a stream (constant memory). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Options of {@link downloadFile}. */
export interface DownloadOptions {
  /** Expected SHA-256 (hex) of the body; a mismatch throws `CHECKSUM_MISMATCH` and leaves nothing behind. */
  sha256?: string | null;
  /** Most bytes accepted (default 2 GiB). A larger Content-Length is refused before reading. */
  maxBytes?: number;
  /** User-Agent header (default `grassflow (+https://www.npmjs.com/org/grassflow; node)`). */
  userAgent?: string;
  /**
   * Extra request headers (e.g. an Authorization header for a private Hugging Face repo); credentials are dropped on a
   * redirect to another origin.
   */
  headers?: Readonly<Record<string, string>>;
  /** Redirects followed before `TOO_MANY_REDIRECTS` (default 10). */
  maxRedirects?: number;
  /** Socket idle timeout in ms (default 60,000). */
  timeoutMs?: number;
  /**
   * Overall deadline in ms, from the request to the last byte, redirects included (default: `maxBytes` at 256 KiB/s,
   * at least 30 s: {@link downloadDeadlineMs}). A server that trickles bytes is cut off with `TIMED_OUT`.
   */
  deadlineMs?: number;
  /** What to tell a user whose destination folder cannot be written (default: give a folder this process can write). */
  notWritableHint?: string;
  /** Called as bytes arrive: (received, declared total or null). */
  onProgress?: (received: number, total: number | null) => void;
}

/** What {@link downloadFile} fetched. */
export interface DownloadResult {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  /** URL after redirects. */
  readonly finalUrl: string;
}

const GiB = 1024 * 1024 * 1024;

/**
 * Download `url` to `dest` atomically: stream to a temp file beside `dest` while hashing and counting,
 * check size (≤ declared Content-Length, ≤ maxBytes, = declared at the end) and SHA-256, then fsync it,
 * rename it over `dest` and fsync the folder ({@link commitFileAtomic}).
 * On every error the temp file is removed and `dest` is untouched; errors are {@link DownloadError}s.
 */
export async function downloadFile(url: string, dest: string, opts: DownloadOptions = {}): Promise<DownloadResult> {
  const maxBytes = opts.maxBytes ?? 2 * GiB;
  const deadlineMs = opts.deadlineMs ?? downloadDeadlineMs(maxBytes);
  const progress = { received: 0, timedOut: false };
  const controller = new AbortController();
  const timer = setTimeout(() => {
    progress.timedOut = true;
    controller.abort();
  }, deadlineMs);
  try {
    return await fetchToFile(url, dest, { ...opts, maxBytes }, controller.signal, progress);
  } catch (err) {
    if (!progress.timedOut) throw err;
    throw new DownloadError(
      'TIMED_OUT',
      `Download of ${redactUrl(url)} did not finish within ${deadlineMs / 1000} s (${progress.received} bytes ` +
        'arrived): the server is stalled or too slow. Retry, or allow longer (the deadlineMs option). Nothing was kept.',
      { file: redactUrl(url), cause: err },
    );
  } finally {
    clearTimeout(timer);
  }
}

async function fetchToFile(
  url: string,
  dest: string,
  opts: DownloadOptions & { maxBytes: number },
  signal: AbortSignal,
  progress: { received: number },
): Promise<DownloadResult> {
  const maxRedirects = opts.maxRedirects ?? 10;
  let current = parseUrl(url, url);
  let extra: Readonly<Record<string, string>> = opts.headers ?? {};
  for (let hop = 0; ; hop++) {
    const res = await request(current, opts, extra, signal);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location !== undefined) {
      res.resume(); // discard the redirect body
      if (hop >= maxRedirects) {
        throw new DownloadError(
          'TOO_MANY_REDIRECTS',
          `Download of ${redactUrl(url)} followed ${maxRedirects} redirects without reaching the file (last: ` +
            `${redactUrl(current.href)}).`,
          { file: redactUrl(url) },
        );
      }
      const next = parseUrl(res.headers.location, url, current);
      if (next.origin !== current.origin) extra = withoutCredentials(extra); // never forward a token to another host
      current = next;
      if (current.protocol !== 'http:' && current.protocol !== 'https:') {
        throw new DownloadError(
          'DOWNLOAD_FAILED',
          `Download of ${redactUrl(url)} was redirected to unsupported protocol ${current.protocol}`,
          { file: redactUrl(url) },
        );
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new DownloadError(
        'HTTP_STATUS',
        `Download of ${redactUrl(current.href)} failed: HTTP ${status} ${res.statusMessage ?? ''}`.trim() + '.',
        { file: redactUrl(current.href) },
      );
    }
    return await saveBody(res, redactUrl(current.href), dest, opts.maxBytes, opts, progress);
  }
}

function parseUrl(href: string, original: string, base?: URL): URL {
  try {
    return new URL(href, base);
  } catch {
    throw new DownloadError(
      base === undefined ? 'INVALID_ARGUMENT' : 'DOWNLOAD_FAILED',
      base === undefined
        ? `Not a valid URL: '${redactUrl(href)}'.`
        : `Download of ${redactUrl(original)} was redirected to an invalid URL '${redactUrl(href)}'.`,
      { file: redactUrl(original) },
    );
  }
}

function withoutCredentials(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(
      ([k]) => !['authorization', 'cookie', 'proxy-authorization'].includes(k.toLowerCase()),
    ),
  );
}

function request(
  url: URL,
  opts: DownloadOptions,
  extra: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const get = url.protocol === 'https:' ? https.get : url.protocol === 'http:' ? http.get : undefined;
  if (get === undefined) {
    return Promise.reject(
      new DownloadError(
        'INVALID_ARGUMENT',
        `Unsupported URL protocol ${url.protocol} in ${redactUrl(url.href)}: use http or https.`,
        { file: redactUrl(url.href) },
      ),
    );
  }
  const headers = { 'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT, 'accept-encoding': 'identity', ...extra };
  return new Promise((resolvePromise, reject) => {
    const req = get(url, { headers, timeout: opts.timeoutMs ?? 60_000, signal }, resolvePromise);
    req.on('timeout', () => req.destroy(new Error(`no data for ${opts.timeoutMs ?? 60_000} ms`)));
    req.on('error', (err) => {
      reject(
        new DownloadError(
          'DOWNLOAD_FAILED',
          `Download of ${redactUrl(url.href)} failed: ${messageOf(err)}. Check the network, or fetch the file by hand.`,
          { file: redactUrl(url.href), cause: err },
        ),
      );
    });
  });
}

async function saveBody(
  res: http.IncomingMessage,
  href: string,
  dest: string,
  maxBytes: number,
  opts: DownloadOptions,
  progress: { received: number },
): Promise<DownloadResult> {
  const lengthHeader = res.headers['content-length'];
  const declared = lengthHeader === undefined ? null : Number(lengthHeader);
  if (declared !== null && (!Number.isSafeInteger(declared) || declared < 0)) {
    res.destroy();
    throw new DownloadError(
      'DOWNLOAD_FAILED',
      `Download of ${href}: invalid Content-Length '${String(lengthHeader)}'.`,
      { file: href },
    );
  }
  if (declared !== null && declared > maxBytes) {
    res.destroy();
    throw new DownloadError(
      'SIZE_LIMIT',
      `Download of ${href} declares ${declared} bytes, more than the allowed ${maxBytes}.`,
      { file: href },
    );
  }
  const limit = declared ?? maxBytes;
  const hash = createHash('sha256');
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      progress.received = received;
      if (received > limit) {
        const why =
          declared !== null
            ? `more bytes than the declared Content-Length ${declared}`
            : `more than the allowed ${maxBytes} bytes`;
        done(new DownloadError('SIZE_LIMIT', `Download of ${href} aborted: the server sent ${why}.`, { file: href }));
        return;
      }
      hash.update(chunk);
      opts.onProgress?.(received, declared);
      done(null, chunk);
    },
  });
  // level by level, with a timeout: Node's recursive mkdir never returns under /proc
  await makeFolder(dirname(dest)).catch((err: unknown) => {
    res.destroy();
    throw notWritable(dest, err, opts);
  });
  const tmp = temporarySibling(dest);
  // Open the temp file before streaming: a stream that opens it lazily can create it after an early
  // network error has already run the cleanup below, leaving a stray temp file behind.
  const file = await open(tmp, 'wx').catch((err: unknown) => {
    res.destroy();
    throw notWritable(dest, err, opts);
  });
  const out = file.createWriteStream();
  try {
    try {
      await pipeline(res, counter, out);
    } catch (err) {
      if (err instanceof DownloadError) throw err;
      if (declared !== null && received < declared) throw truncated(href, received, declared, err);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') throw notWritable(dest, err, opts);
      throw new DownloadError(
        'DOWNLOAD_FAILED',
        `Download of ${href} failed after ${received} bytes: ${messageOf(err)}.`,
        { file: href, cause: err },
      );
    }
    if (declared !== null && received < declared) throw truncated(href, received, declared);
    const digest = hash.digest('hex');
    if (opts.sha256 != null && digest !== opts.sha256.toLowerCase()) {
      throw new DownloadError(
        'CHECKSUM_MISMATCH',
        `Download of ${href}: SHA-256 ${digest} differs from the expected ${opts.sha256}. The file was not kept.`,
        { file: href },
      );
    }
    await commitFileAtomic(tmp, dest); // fsync the temp file, rename it over dest, fsync the folder
    return { path: dest, bytes: received, sha256: digest, finalUrl: href };
  } finally {
    if (!out.closed) await once(out, 'close').catch(() => undefined);
    await rm(tmp, { force: true });
  }
}

function truncated(href: string, received: number, declared: number, cause?: unknown): DownloadError {
  return new DownloadError(
    'TRUNCATED',
    `Download of ${href} is truncated: ${received} of ${declared} declared bytes arrived. Retry; nothing was kept.`,
    { file: href, cause },
  );
}

function notWritable(dest: string, cause: unknown, opts: DownloadOptions): DownloadError {
  const hint = opts.notWritableHint ?? 'Give a folder this process can write to.';
  return new DownloadError(
    'NOT_WRITABLE',
    `Cannot write ${dest}: ${fileSystemProblem(dest, cause as NodeJS.ErrnoException)}. ${hint}`,
    { file: dest, cause },
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

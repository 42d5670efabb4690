// Limits every network read of a folder sets for itself, whatever the server says: an overall deadline (by default
// proportional to the bytes expected, with a floor), a size cap (a larger Content-Length refused before reading, a
// longer body cut off while it streams), and URLs whose password is never printed. No node: modules (browsers too).
import { CheckpointError } from './checkpoint-config.js';

/**
 * What `fetchBytes` (and so `fetchCheckpointBytes`) needs of `fetch`'s response (a real Response has all of it;
 * without `body` the size cap is checked only after the whole body arrived).
 */
export interface FetchResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers?: { get(name: string): string | null };
  readonly body?: ReadableStream<Uint8Array> | null;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** `fetch`, or anything that fetches a URL the same way (the signal aborts it at the deadline). */
export type FetchLike = (url: string, init?: { signal?: AbortSignal }) => Promise<FetchResponseLike>;

/** Slowest transfer rate the default deadline allows for: 256 KiB/s. */
export const DOWNLOAD_MIN_BYTES_PER_SECOND = 256 * 1024;
/** Shortest default deadline of a download, however small: 30 s. */
export const DOWNLOAD_DEADLINE_FLOOR_MS = 30_000;

/** The default overall deadline of a download of `bytes` bytes: `bytes` at 256 KiB/s, at least 30 s. */
export function downloadDeadlineMs(bytes: number): number {
  return Math.max(DOWNLOAD_DEADLINE_FLOOR_MS, Math.ceil((bytes / DOWNLOAD_MIN_BYTES_PER_SECOND) * 1000));
}

/** `href` with its user name and password (`https://user:secret@host/`) replaced by `***`, for messages. */
export function redactUrl(href: string): string {
  try {
    const u = new URL(href);
    if (u.username === '' && u.password === '') return href;
    u.username = '***';
    u.password = '';
    return u.href;
  } catch {
    return href.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/** Options of {@link fetchBytes}. */
export interface FetchBytesOptions {
  /** Most bytes accepted: a larger Content-Length is refused before reading, a longer body cut off. */
  readonly maxBytes: number;
  /** Overall deadline in ms, headers and body (default {@link downloadDeadlineMs} of `maxBytes`). */
  readonly deadlineMs?: number;
  /** How to raise the deadline, for the message (default: the `deadlineMs` option). */
  readonly deadlineHint?: string;
}

function tooLarge(href: string, bytes: number | string, maxBytes: number): CheckpointError {
  return new CheckpointError(
    'CORRUPT_FILE',
    `${href} is larger (${bytes} bytes) than the ${maxBytes} bytes it may have: not the file this folder needs; ` +
      'refused before keeping it',
  );
}

/**
 * The body of `url`, read within `maxBytes` and the deadline: a CheckpointError names the URL (its password hidden)
 * and what to do when the server is unreachable, answers non-2xx, announces or sends too many bytes, or is too slow.
 */
export async function fetchBytes(fetchFn: FetchLike, url: string, options: FetchBytesOptions): Promise<Uint8Array> {
  const href = redactUrl(url);
  const { maxBytes } = options;
  const deadlineMs = options.deadlineMs ?? downloadDeadlineMs(maxBytes);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let received = 0;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => {
      controller.abort();
      fail(
        new CheckpointError(
          'NOT_FOUND',
          `${href} did not arrive within ${deadlineMs / 1000} s (${received} bytes came): the server is stalled ` +
            `or too slow; retry, or allow longer (${options.deadlineHint ?? 'the deadlineMs option'})`,
        ),
      );
    }, deadlineMs);
  });
  const read = async (): Promise<Uint8Array> => {
    let res: FetchResponseLike;
    try {
      res = await fetchFn(url, { signal: controller.signal });
    } catch (cause) {
      throw new CheckpointError(
        'NOT_FOUND',
        `fetching ${href} failed (${(cause as Error).message}): is the server running, and does it allow this ` +
          "page's origin (CORS)?",
        { cause },
      );
    }
    if (!res.ok) {
      throw new CheckpointError(
        'MISSING_FILE',
        `${href}: HTTP ${res.status} ${res.statusText}; serve the whole folder`,
      );
    }
    const declared = res.headers?.get('content-length');
    if (declared != null && declared !== '' && Number(declared) > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(href, declared, maxBytes);
    }
    if (res.body == null) {
      const whole = new Uint8Array(await res.arrayBuffer());
      if (whole.byteLength > maxBytes) throw tooLarge(href, whole.byteLength, maxBytes);
      return whole;
    }
    const chunks: Uint8Array[] = [];
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(href, `more than ${maxBytes}`, maxBytes);
      }
      chunks.push(value);
    }
    const out = new Uint8Array(received);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  };
  const reading = read();
  reading.catch(() => undefined); // after the deadline, the aborted read's own error is not unhandled
  try {
    return await Promise.race([reading, late]);
  } finally {
    clearTimeout(timer);
  }
}

// The Redis a study queue lives in: the URL (--queue or GRASSFLOW_QUEUE), checked, and connections to it.
import { Redis } from 'ioredis';
import { UsageError } from '@grassflow/training';

/** The environment variable that names the queue when --queue is not given. */
export const QUEUE_ENV = 'GRASSFLOW_QUEUE';
/** The one BullMQ queue every study (and ladder) job goes through, under the key prefix {@link QUEUE_PREFIX}. */
export const QUEUE_NAME = 'runs';
export const QUEUE_PREFIX = 'grassflow';

/** A checked queue URL: the URL itself and how to show it (password hidden). */
export interface QueueUrl {
  url: string;
  shown: string;
}

const URL_FORM = 'redis://[user:password@]host:port/db (rediss:// for TLS)';

/** The queue URL of --queue, else of GRASSFLOW_QUEUE; undefined when neither is set (the in-process queue). */
export function queueUrlOf(flag: string | undefined): QueueUrl | undefined {
  const raw = flag ?? process.env[QUEUE_ENV];
  if (raw === undefined || raw === '') return undefined;
  const from = flag === undefined ? QUEUE_ENV : '--queue';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`${from} ${raw} is not a URL: give ${URL_FORM}`, 'queue');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new UsageError(`${from} ${raw}: the scheme must be redis: or rediss:, as in ${URL_FORM}`, 'queue');
  }
  if (u.hostname === '') throw new UsageError(`${from} ${raw} names no host: give ${URL_FORM}`, 'queue');
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) {
    throw new UsageError(`${from} ${raw}: the path is the database number (/0, /1, …), not '${db}'`, 'queue');
  }
  const shown = new URL(raw);
  if (shown.password !== '') shown.password = '***';
  return { url: raw, shown: shown.toString() };
}

/** Raised when Redis cannot be reached or refuses the connection: says where and what to check. */
export class QueueUnreachableError extends Error {
  constructor(q: QueueUrl, why: string) {
    super(
      `cannot reach Redis at ${q.shown}: ${why}. Start redis-server there (or check the host, port, password and ` +
        `TLS in --queue / ${QUEUE_ENV}: ${URL_FORM})`,
    );
    this.name = 'QueueUnreachableError';
  }
}

/**
 * Check that Redis answers (one connection attempt, 5 s at most), so a wrong URL fails at once with a clear error
 * rather than with BullMQ's endless reconnects.
 */
export async function probeRedis(q: QueueUrl): Promise<void> {
  const probe = new Redis(q.url, {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let cause: string | undefined; // the socket's error (ECONNREFUSED, ENOTFOUND, WRONGPASS…) says more than connect()'s
  probe.on('error', (e: Error) => (cause ??= e.message));
  try {
    await probe.connect();
    await probe.ping();
  } catch (e) {
    throw new QueueUnreachableError(q, (cause ?? (e as Error).message).replace(/\.$/, ''));
  } finally {
    probe.disconnect();
  }
}

/**
 * A connection for BullMQ (maxRetriesPerRequest null, as its workers need): it reconnects by itself when Redis
 * restarts; its errors are printed once per kind rather than on every retry.
 */
export function redisConnection(q: QueueUrl): Redis {
  const r = new Redis(q.url, { maxRetriesPerRequest: null });
  const seen = new Set<string>();
  r.on('error', (e: Error) => {
    if (seen.has(e.message)) return;
    seen.add(e.message);
    process.stderr.write(`warning: Redis at ${q.shown}: ${e.message} (reconnecting)\n`);
  });
  return r;
}

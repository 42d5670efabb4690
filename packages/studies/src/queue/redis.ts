// The Redis a study queue lives in: the URL (--queue or GRASSFLOW_QUEUE), checked, and connections to it.
import type { Redis } from 'ioredis';
import { UsageError } from '@grassflow/training';
import { loadQueueModules, queueModules } from './deps.js';

/** The environment variable that names the queue when --queue is not given. */
export const QUEUE_ENV = 'GRASSFLOW_QUEUE';
/** The one BullMQ queue every study (and ladder) job goes through, under the key prefix {@link QUEUE_PREFIX}. */
export const QUEUE_NAME = 'runs';
export const QUEUE_PREFIX = 'grassflow';

/** A checked queue URL: the URL itself, how to show it (password hidden), where it came from, its database. */
export interface QueueUrl {
  url: string;
  shown: string;
  /** '--queue' or GRASSFLOW_QUEUE, for messages. */
  from: string;
  /** The database number of the URL's path (0 when it has none). */
  db: number;
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
  return { url: raw, shown: shown.toString(), from, db: db === '' ? 0 : Number(db) };
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
 * rather than with BullMQ's endless reconnects; and that the URL's database exists there (Redis refuses a SELECT
 * out of range, and ioredis would then go on in database 0: a study on another study's queue).
 */
export async function probeRedis(q: QueueUrl): Promise<void> {
  // connected to database 0 (the URL without its path): the SELECT of the URL's database is made below, where its
  // error can be told apart from an unreachable server
  const at0 = new URL(q.url);
  at0.pathname = '';
  const { Redis } = (await loadQueueModules()).ioredis;
  const probe = new Redis(at0.toString(), {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let cause: string | undefined; // the socket's error (ECONNREFUSED, ENOTFOUND, WRONGPASS…) says more than connect()'s
  probe.on('error', (e: Error) => (cause ??= e.message));
  try {
    try {
      await probe.connect();
      await probe.ping();
    } catch (e) {
      throw new QueueUnreachableError(q, (cause ?? (e as Error).message).replace(/\.$/, ''));
    }
    try {
      await probe.select(q.db);
    } catch (e) {
      throw new UsageError(
        `${q.from} ${q.shown}: that server has no database ${q.db} (${await databasesOf(probe)}): ` +
          `give one in range in the URL's path, e.g. /0 (${(e as Error).message})`,
        'queue',
      );
    }
  } finally {
    probe.disconnect();
  }
}

/** How many databases a server has (its `databases` setting), as a message says it. */
async function databasesOf(r: Redis): Promise<string> {
  try {
    const [, n] = (await r.config('GET', 'databases')) as [string, string];
    return `its \`databases\` setting is ${n}: /0 to /${Number(n) - 1}`;
  } catch {
    return 'CONFIG GET databases is not allowed there; the default is 16: /0 to /15'; // managed Redis often refuses CONFIG
  }
}

/** Whether an error of a Redis client is the connection being down (refused, reset, closed), not a command's. */
function isConnectionError(e: Error & { code?: string }): boolean {
  const codes = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'];
  return (
    (e.code !== undefined && codes.includes(e.code)) ||
    codes.some((c) => e.message.includes(c)) ||
    /Connection is closed|Socket closed unexpectedly/i.test(e.message)
  );
}

/**
 * What a process says about its Redis connections: one line when Redis is lost, one when it is back, however many
 * clients (BullMQ's own and their duplicates) and reconnect attempts report it meanwhile; any other error once per
 * message.
 */
export class RedisOutage {
  private since: number | null = null;
  private readonly warned = new Set<string>();

  constructor(
    private readonly q: QueueUrl,
    private readonly say: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
  ) {}

  /** An error event of any client (or of BullMQ's Queue or Worker). */
  error(e: Error): void {
    if (isConnectionError(e)) {
      if (this.since !== null) return;
      this.since = Date.now();
      this.say(`Redis at ${this.q.shown} is unreachable (${e.message}); reconnecting, jobs wait meanwhile`);
      return;
    }
    if (this.warned.has(e.message)) return;
    this.warned.add(e.message);
    this.say(`warning: Redis at ${this.q.shown}: ${e.message}`);
  }

  /** A client is connected (again). */
  ready(): void {
    if (this.since === null) return;
    const s = Math.round((Date.now() - this.since) / 1000);
    this.since = null;
    this.say(`Redis at ${this.q.shown} is back after ${s} s`);
  }
}

/**
 * A connection for BullMQ (maxRetriesPerRequest null, as its workers need): it reconnects by itself when Redis
 * restarts; an outage is reported by `outage` (one line when lost, one when back).
 */
export function redisConnection(q: QueueUrl, outage: RedisOutage = new RedisOutage(q)): Redis {
  const { Redis } = queueModules().ioredis;
  const r = new Redis(q.url, { maxRetriesPerRequest: null });
  r.on('error', (e: Error) => outage.error(e));
  r.on('ready', () => outage.ready());
  return r;
}

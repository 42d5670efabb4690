// bullmq and ioredis: optional peer dependencies, loaded only where a Redis queue is used (`study run --queue`,
// `worker`, a ladder on a queue), so that installing a trainer does not install the queue stack.
import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';
import { UsageError } from '@grassflow/training';

/** What to install for the queue: the versions this package is tested with. */
export const QUEUE_INSTALL = 'npm install bullmq@6.7.0 ioredis@5.11.1';

/** The two modules, once loaded. */
export interface QueueModules {
  readonly bullmq: typeof BullMQ;
  readonly ioredis: typeof IORedis;
}

let loaded: QueueModules | undefined;

/** Whether `e` says that bullmq or ioredis itself is missing (not a module one of them imports). */
const isModuleNotFound = (e: unknown): boolean => {
  const { code, message } = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /'(bullmq|ioredis)'/.test(String(message));
};

/** Loads bullmq and ioredis (once); absent, a UsageError with the line that installs them. */
export async function loadQueueModules(): Promise<QueueModules> {
  if (loaded !== undefined) return loaded;
  try {
    const [bullmq, ioredis] = await Promise.all([import('bullmq'), import('ioredis')]);
    loaded = { bullmq, ioredis };
    return loaded;
  } catch (cause) {
    if (!isModuleNotFound(cause)) throw cause;
    throw new UsageError(
      `the Redis queue needs bullmq and ioredis, which are not installed (only queues and workers use them): ` +
        `${QUEUE_INSTALL}`,
      'queue',
    );
  }
}

/** The modules {@link loadQueueModules} loaded (probeRedis loads them: every connection is probed first). */
export function queueModules(): QueueModules {
  if (loaded === undefined) {
    throw new UsageError(
      'the Redis queue is not set up: await probeRedis(q) first (it loads bullmq and ioredis)',
      'queue',
    );
  }
  return loaded;
}

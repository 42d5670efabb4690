// The limits the client sets on every fetch, against a real server on 127.0.0.1 that stalls and lies: the overall
// deadline, the size cap (an announced size refused before reading, an endless body cut off), passwords never
// printed; and folders made without hanging on a kernel file system.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointError,
  downloadDeadlineMs,
  fetchBytes,
  fetchCheckpointBytes,
  fileSystemProblem,
  makeFolder,
  makeFolderSync,
  redactUrl,
  writeFileAtomic,
  writeFileAtomicSync,
} from '@grassflow/checkpoints';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: Server;
let base: string;
let sent = 0;

/** Writes `chunk` every `ms` until the client goes away. */
function drip(res: ServerResponse, chunk: Buffer, ms: number): void {
  const tick = setInterval(() => {
    sent += chunk.length;
    res.write(chunk);
  }, ms);
  res.socket?.once('close', () => clearInterval(tick));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const handle = routes.get(req.url ?? '');
    if (handle === undefined) res.writeHead(404).end();
    else handle(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set('/trickle', (_req, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write('x');
    drip(res, Buffer.from('x'), 2000);
  });
  routes.set('/huge-length', (_req, res) => {
    res.writeHead(200, { 'content-length': String(3 * 1024 ** 3) });
    drip(res, Buffer.alloc(64 * 1024), 5);
  });
  routes.set('/endless', (_req, res) => {
    res.writeHead(200); // no Content-Length: the body goes on until the client stops it
    drip(res, Buffer.alloc(64 * 1024), 1);
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

async function refusal(p: Promise<unknown>): Promise<CheckpointError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CheckpointError);
  return err as CheckpointError;
}

describe('fetchBytes', () => {
  it('the default deadline is proportional to the bytes expected, with a floor of 30 s', () => {
    expect(downloadDeadlineMs(1000)).toBe(30_000);
    expect(downloadDeadlineMs(256 * 1024 * 1000)).toBe(1_000_000);
  });

  it('gives up on a server sending 1 byte every 2 s at its deadline', async () => {
    const started = Date.now();
    const err = await refusal(fetchBytes(fetch, `${base}/trickle`, { maxBytes: 1000, deadlineMs: 1500 }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(err.message).toMatch(/trickle did not arrive within 1\.5 s .*stalled or too slow/);
  });

  it('refuses a Content-Length above its cap before reading the body', async () => {
    sent = 0;
    const err = await refusal(fetchBytes(fetch, `${base}/huge-length`, { maxBytes: 2_000_000 }));
    expect(err.message).toMatch(/larger \(3221225472 bytes\) than the 2000000 bytes/);
    expect(sent).toBeLessThan(2_000_000);
  });

  it('cuts off a body without Content-Length at its cap', async () => {
    const err = await refusal(fetchBytes(fetch, `${base}/endless`, { maxBytes: 1_000_000 }));
    expect(err.message).toMatch(/larger \(more than 1000000 bytes\)/);
  });

  it('never prints the password of a URL', async () => {
    const url = `${base.replace('//', '//me:hunter2@')}/missing`;
    expect(redactUrl(url)).toBe(`${base.replace('//', '//***@')}/missing`);
    const err = await refusal(fetchBytes((u) => fetch(u.replace('me:hunter2@', '')), url, { maxBytes: 10 }));
    expect(err.message).toContain('HTTP 404');
    expect(err.message).not.toContain('hunter2');
  });
});

describe('fetchCheckpointBytes (the playground)', () => {
  it('reads model.safetensors no further than config.json records, however long the server streams', async () => {
    const config = JSON.stringify({
      format: 'grassflow-checkpoint',
      formatVersion: 1,
      model: {},
      files: { 'model.safetensors': { bytes: 1_980_000, sha256: '0'.repeat(64) } },
    });
    routes.set('/ck/config.json', (_req, res) => res.writeHead(200).end(config));
    routes.set('/ck/model.safetensors', (_req, res) => {
      res.writeHead(200);
      drip(res, Buffer.alloc(64 * 1024), 1);
    });
    const err = await refusal(fetchCheckpointBytes(`${base}/ck`));
    expect(err.message).toMatch(/model\.safetensors is larger \(more than 1980000 bytes\)/);
  });

  it('gives up on a config.json sent 1 byte every 2 s at its deadline instead of loading forever', async () => {
    routes.set('/slow/config.json', (_req, res) => {
      res.writeHead(200);
      drip(res, Buffer.from(' '), 2000);
    });
    const err = await refusal(fetchCheckpointBytes(`${base}/slow`, { deadlineMs: 1500 }));
    expect(err.message).toMatch(/slow\/config\.json did not arrive within 1\.5 s/);
  });

  it('refuses a config.json larger than 1 MiB as too large', async () => {
    routes.set('/big/config.json', (_req, res) => {
      res.writeHead(200, { 'content-length': String(20 * 1024 * 1024) });
      drip(res, Buffer.alloc(64 * 1024), 5);
    });
    const err = await refusal(fetchCheckpointBytes(`${base}/big`));
    expect(err.message).toMatch(/config\.json is larger \(20971520 bytes\) than the 1048576 bytes/);
  });
});

describe('makeFolder', () => {
  it('refuses a folder under /proc at once, sync and async, and so do atomic writes, instead of hanging in mkdir', async () => {
    const started = Date.now();
    let thrown: unknown;
    try {
      makeFolderSync('/proc/grassflow-x/y');
    } catch (e) {
      thrown = e;
    }
    expect(fileSystemProblem('/proc/grassflow-x/y', thrown as NodeJS.ErrnoException)).toMatch(
      /kernel's proc file system, which holds no files: choose a folder on a disk \[ESPECIALFS\]/,
    );
    await expect(makeFolder('/proc/grassflow-x/y')).rejects.toMatchObject({ code: 'ESPECIALFS' });
    // the atomic writes of every cache (token ids, downloads) make their folder the same way
    await expect(writeFileAtomic('/proc/grassflow-x/y/ids.bin', 'x')).rejects.toMatchObject({ code: 'ESPECIALFS' });
    expect(() => writeFileAtomicSync('/proc/grassflow-x/y/ids.bin', 'x')).toThrow(/proc file system/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('makes missing levels, and refuses a file in the way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'grassflow-make-folder-'));
    try {
      await makeFolder(join(dir, 'a', 'b', 'c'));
      expect((await stat(join(dir, 'a', 'b', 'c'))).isDirectory()).toBe(true);
      makeFolderSync(join(dir, 'a', 'b', 'c')); // an existing folder is fine
      await expect(makeFolder('/etc/hostname/x')).rejects.toMatchObject({ code: 'ENOTDIR' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DownloadError, downloadFile } from '@grassflow/checkpoints';
import {
  redirectTo,
  serveBytes,
  serveChunked,
  serveStatus,
  serveTruncated,
  startServer,
  type TestServer,
} from '../../../tooling/http-test-server.mjs';

const body = Buffer.from('grassflow '.repeat(5000)); // 50,000 bytes
const sha = createHash('sha256').update(body).digest('hex');

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startServer();
  server.route('/ok.bin', serveBytes(body));
  server.route('/chunked.bin', serveChunked(body));
  server.route('/short.bin', serveTruncated(body, 20_000));
  server.route('/e500', serveStatus(500));
  server.route('/hop1', redirectTo('/hop2'));
  server.route('/hop2', redirectTo(`${'/ok.bin'}`, 301));
  server.route('/loop', redirectTo('/loop'));
});
afterAll(() => server.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gf-dl-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function expectCode(p: Promise<unknown>, code: string): Promise<DownloadError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DownloadError);
  expect((err as DownloadError).code).toBe(code);
  return err as DownloadError;
}

describe('downloadFile', () => {
  it('downloads, verifies SHA-256, sends the User-Agent, and leaves only the target', async () => {
    const dest = join(dir, 'sub', 'ok.bin');
    const r = await downloadFile(`${server.base}/ok.bin`, dest, { sha256: sha, maxBytes: body.length });
    expect(r.bytes).toBe(body.length);
    expect(r.sha256).toBe(sha);
    expect((await readFile(dest)).equals(body)).toBe(true);
    expect(await readdir(join(dir, 'sub'))).toEqual(['ok.bin']);
    expect(server.requests.at(-1)).toMatch(/^\/ok\.bin grassflow \(/);
  });

  it('follows redirects (relative Location) and reports the final URL', async () => {
    const r = await downloadFile(`${server.base}/hop1`, join(dir, 'x'), { sha256: sha });
    expect(r.finalUrl).toBe(`${server.base}/ok.bin`);
  });

  it('drops credentials on a redirect to another origin, keeps them on the same origin', async () => {
    const other = await startServer();
    const seen: string[] = [];
    other.route('/file', (req, res) => {
      seen.push(`other:${req.headers.authorization ?? 'none'}`);
      serveBytes(body)(req, res);
    });
    server.route('/auth-same', (req, res) => {
      seen.push(`same:${req.headers.authorization ?? 'none'}`);
      redirectTo(`${other.base}/file`)(req, res);
    });
    server.route('/auth-start', (req, res) => {
      seen.push(`start:${req.headers.authorization ?? 'none'}`);
      redirectTo('/auth-same')(req, res);
    });
    try {
      await downloadFile(`${server.base}/auth-start`, join(dir, 'x'), {
        headers: { Authorization: 'Bearer t' },
        sha256: sha,
      });
      expect(seen).toEqual(['start:Bearer t', 'same:Bearer t', 'other:none']);
    } finally {
      await other.close();
    }
  });

  it('stops after maxRedirects', async () => {
    await expectCode(downloadFile(`${server.base}/loop`, join(dir, 'x'), { maxRedirects: 3 }), 'TOO_MANY_REDIRECTS');
  });

  it('rejects a checksum mismatch and keeps nothing', async () => {
    const err = await expectCode(
      downloadFile(`${server.base}/ok.bin`, join(dir, 'x'), { sha256: '0'.repeat(64) }),
      'CHECKSUM_MISMATCH',
    );
    expect(err.message).toContain(sha);
    expect(await readdir(dir)).toEqual([]);
  });

  it('detects a truncated body (server declares more than it sends, then closes)', async () => {
    await expectCode(downloadFile(`${server.base}/short.bin`, join(dir, 'x')), 'TRUNCATED');
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a declared Content-Length above maxBytes before reading', async () => {
    await expectCode(
      downloadFile(`${server.base}/ok.bin`, join(dir, 'x'), { maxBytes: body.length - 1 }),
      'SIZE_LIMIT',
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('aborts a body without Content-Length once it passes maxBytes', async () => {
    await expectCode(downloadFile(`${server.base}/chunked.bin`, join(dir, 'x'), { maxBytes: 10_000 }), 'SIZE_LIMIT');
    expect(await readdir(dir)).toEqual([]);
    const r = await downloadFile(`${server.base}/chunked.bin`, join(dir, 'x'), { sha256: sha });
    expect(r.bytes).toBe(body.length);
  });

  it('turns 500 and 404 into HTTP_STATUS errors naming the URL', async () => {
    const e500 = await expectCode(downloadFile(`${server.base}/e500`, join(dir, 'x')), 'HTTP_STATUS');
    expect(e500.message).toContain('HTTP 500');
    const e404 = await expectCode(downloadFile(`${server.base}/nope`, join(dir, 'x')), 'HTTP_STATUS');
    expect(e404.message).toContain(`${server.base}/nope`);
    expect(await readdir(dir)).toEqual([]);
  });

  it('gives up on a server that stalls mid-body (timeoutMs) and keeps nothing', async () => {
    server.route('/stall.bin', (_req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.write(body.subarray(0, 100)); // then nothing
    });
    const err = await expectCode(
      downloadFile(`${server.base}/stall.bin`, join(dir, 'x'), { timeoutMs: 300 }),
      'TRUNCATED',
    );
    expect(err.message).toContain('100 of 50000');
    expect(await readdir(dir)).toEqual([]);
  });

  it('gives up on a server that trickles 1 byte every 2 s at the overall deadline, though no read is ever idle', async () => {
    server.route('/trickle.bin', (req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      const tick = setInterval(() => res.write('g'), 2000);
      res.write('g');
      req.socket.once('close', () => clearInterval(tick));
    });
    const started = Date.now();
    const err = await expectCode(
      downloadFile(`${server.base}/trickle.bin`, join(dir, 'x'), { timeoutMs: 3000, deadlineMs: 2500 }),
      'TIMED_OUT',
    );
    expect(Date.now() - started).toBeLessThan(6000);
    expect(err.message).toMatch(/did not finish within 2\.5 s \([1-2] bytes arrived\).*Retry, or allow longer/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('never prints the password of a URL', async () => {
    const u = new URL(`${server.base}/nope`);
    u.username = 'me';
    u.password = 'hunter2';
    const err = await expectCode(downloadFile(u.href, join(dir, 'x')), 'HTTP_STATUS');
    expect(err.message).not.toContain('hunter2');
    expect(err.message).toContain('***@127.0.0.1');
  });

  it('refuses a destination under /proc at once instead of hanging in mkdir, saying what to do', async () => {
    const started = Date.now();
    const err = await expectCode(
      downloadFile(`${server.base}/ok.bin`, '/proc/grassflow-x/y/ok.bin', { notWritableHint: 'Use another folder.' }),
      'NOT_WRITABLE',
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.message).toMatch(/kernel's proc file system.*Use another folder\./);
  });

  it('rejects invalid URLs and unsupported protocols with INVALID_ARGUMENT', async () => {
    await expectCode(downloadFile('not a url', join(dir, 'x')), 'INVALID_ARGUMENT');
    await expectCode(downloadFile('ftp://127.0.0.1/x', join(dir, 'x')), 'INVALID_ARGUMENT');
  });

  it('reports a refused connection as DOWNLOAD_FAILED', async () => {
    const closed = await startServer();
    const url = `${closed.base}/x`;
    await closed.close();
    await expectCode(downloadFile(url, join(dir, 'x')), 'DOWNLOAD_FAILED');
  });
});

// The playground's static server against hostile requests, on 127.0.0.1 with real HTTP: what it must not serve, and
// that no request stops it. Its command line: --help, unknown flags, a busy port.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../scripts/serve.mjs';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'serve.mjs');

/** A raw GET (no URL normalisation by a client), with an optional Host header. */
function get(url: string, path: string, host?: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((done, fail) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: 'GET',
        headers: host === undefined ? {} : { host },
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

describe('serve: only what is mounted', () => {
  const base = mkdtempSync(join(tmpdir(), 'grassflow-serve-'));
  const site = join(base, 'site');
  const runs = join(base, 'runs');
  const outside = join(base, 'secret.txt');
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    mkdirSync(site);
    mkdirSync(join(runs, 'a', 'index.html'), { recursive: true }); // a folder named index.html
    mkdirSync(join(runs, '.git'));
    writeFileSync(join(site, 'index.html'), '<p>page</p>');
    writeFileSync(join(runs, 'a', 'config.json'), '{}');
    writeFileSync(join(runs, '.env'), 'TOKEN=1');
    writeFileSync(join(runs, '.git', 'config'), '[core]');
    writeFileSync(outside, 'secret');
    symlinkSync(outside, join(runs, 'link.txt'));
    symlinkSync(base, join(runs, 'up'));
    symlinkSync(join(runs, 'a', 'config.json'), join(runs, 'inside.json')); // a link within the folder is fine
    symlinkSync(join(runs, '.env'), join(runs, 'envlink'));
    symlinkSync(join(runs, '.git'), join(runs, 'gitlink'));
    execFileSync('mkfifo', [join(runs, 'fifo')]);
    server = await serve({ root: site, mounts: { '/runs/': runs } });
  });
  afterAll(async () => server.close());

  it('serves the page and the mounted files', async () => {
    expect(await get(server.url, '/')).toMatchObject({ status: 200, body: '<p>page</p>' });
    expect(await get(server.url, '/runs/a/config.json')).toMatchObject({ status: 200, body: '{}' });
    expect((await get(server.url, '/runs/inside.json')).status).toBe(200);
  });

  it('a malformed URL is 400 and the server stays up', async () => {
    expect((await get(server.url, '/runs/%E0%A4%A')).status).toBe(400);
    expect((await get(server.url, '/runs/%00')).status).toBe(400);
    expect((await get(server.url, '/')).status).toBe(200);
  });

  it('symlinks out of the mounted folder are refused, dotfiles are not served', async () => {
    expect((await get(server.url, '/runs/link.txt')).status).toBe(403);
    expect((await get(server.url, '/runs/up/secret.txt')).status).toBe(403);
    expect((await get(server.url, '/runs/.env')).status).toBe(404);
    expect((await get(server.url, '/runs/.git/config')).status).toBe(404);
    expect((await get(server.url, '/runs/%2e%2e/secret.txt')).status).not.toBe(200);
  });

  it('a symlink inside the folder to a dotfile or dot folder of it is not served', async () => {
    const env = await get(server.url, '/runs/envlink');
    expect(env.status).toBe(404);
    expect(env.body).not.toContain('TOKEN');
    expect((await get(server.url, '/runs/gitlink/config')).status).toBe(404);
  });

  it('only regular files: a FIFO and a folder named index.html answer 404 without hanging or crashing', async () => {
    expect((await get(server.url, '/runs/fifo')).status).toBe(404);
    expect((await get(server.url, '/runs/a/')).status).toBe(404);
    expect((await get(server.url, '/')).status).toBe(200);
  });

  it('a Host other than the bound address or localhost is refused (DNS rebinding)', async () => {
    expect((await get(server.url, '/', 'evil.example:80')).status).toBe(403);
    const port = new URL(server.url).port;
    expect((await get(server.url, '/', `localhost:${port}`)).status).toBe(200);
  });
});

describe('serve: the command line', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 10_000 });

  it('--help prints the usage and exits; an unknown flag exits 2 naming it', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('usage: node scripts/serve.mjs');
    const bad = run(['--prot', '8080']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown flag --prot');
    expect(run(['--port', 'abc']).stderr).toContain('--port must be an integer');
  });

  it('a busy port is one line that says what to do', async () => {
    const site = mkdtempSync(join(tmpdir(), 'grassflow-serve-busy-'));
    writeFileSync(join(site, 'index.html'), '<p>page</p>');
    const other = await serve({ root: site });
    try {
      const r = run(['--root', site, '--port', new URL(other.url).port]);
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toMatch(/^playground: cannot listen: port \d+ is in use .*--port 0/);
    } finally {
      await other.close();
    }
  });
});

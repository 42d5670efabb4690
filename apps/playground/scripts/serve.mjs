#!/usr/bin/env node
// Serves the built playground (dist/) on http://127.0.0.1:<port>/ with cross-origin isolation (wasm threads), and
// optional extra folders under their own paths (the tests mount a checkpoint at /checkpoint/).
// `pnpm playground` runs this: node scripts/serve.mjs [--port N] [--host H] [--mount /path/=DIR]…
import { createReadStream, existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

/** The headers that make the page cross-origin isolated, so that tfjs-backend-wasm may start its thread pool. */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Host names a request may carry (DNS rebinding: a page elsewhere may resolve its own name to 127.0.0.1). */
function allowedHosts(host, port) {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', host.includes(':') ? `[${host}]` : host]);
  return new Set([...names].flatMap((n) => [n, `${n}:${port}`]));
}

/**
 * Starts a static server. `root`: the folder served at /; `mounts`: URL prefix (ending in '/') → folder.
 * What it serves: regular files whose real path (symlinks resolved) lies inside the folder of their prefix, with no
 * path segment starting with '.' in the request or in the real path (no .env, no .git, no link to either); requests
 * whose Host is not the bound address or localhost are refused (403), a malformed URL is 400, and a failing read ends that response only. Returns its URL and `close()`.
 */
export async function serve({ root, mounts = {}, port = 0, host = '127.0.0.1', isolated = true }) {
  const folders = await Promise.all(
    [...Object.entries(mounts), ['/', root]].map(async ([prefix, dir]) => [prefix, await realpath(resolve(dir))]),
  );
  let hosts = new Set();
  const answer = (res, status, text) => {
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text);
  };
  const handle = async (req, res) => {
    if (!hosts.has(req.headers.host ?? '')) return answer(res, 403, 'forbidden: unexpected Host header\n');
    let path;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      return answer(res, 400, 'bad request: malformed URL\n');
    }
    if (path.includes('\0')) return answer(res, 400, 'bad request: malformed URL\n');
    const [prefix, dir] = folders.find(([p]) => path.startsWith(p)) ?? ['/', folders.at(-1)[1]];
    const rest = path.slice(prefix.length);
    if (rest.split('/').some((segment) => segment.startsWith('.'))) return answer(res, 404, `not found: ${path}\n`);
    let file = normalize(join(dir, rest));
    const inside = (f) => f === dir || f.startsWith(dir + sep);
    try {
      let real = await realpath(file);
      if ((await stat(real)).isDirectory()) real = await realpath(join(real, 'index.html'));
      file = real;
    } catch {
      return answer(res, 404, `not found: ${path}\n`);
    }
    if (!inside(file)) return answer(res, 403, 'forbidden: outside the served folder\n');
    // a link inside the folder to its own .env or .git is refused as the dotfile itself would be
    const hidden = file.slice(dir.length).split(sep);
    if (hidden.some((segment) => segment.startsWith('.'))) return answer(res, 404, `not found: ${path}\n`);
    if (!(await stat(file)).isFile()) return answer(res, 404, `not found: ${path}\n`);
    const stream = createReadStream(file);
    stream.once('error', () => answer(res, 500, 'read error\n'));
    stream.once('open', () => {
      res.writeHead(200, {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-store',
        ...(isolated ? ISOLATION_HEADERS : {}),
      });
      stream.pipe(res);
    });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => answer(res, 500, 'internal error\n'));
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, done);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  hosts = allowedHosts(host, bound);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`;
  return { url, close: () => new Promise((done) => server.close(() => done())) };
}

const USAGE = 'usage: node scripts/serve.mjs [--port N] [--host H] [--root DIR] [--mount /prefix/=FOLDER]…';

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(
      `${USAGE}\nServes the built playground (dist/, or --root) cross-origin isolated on 127.0.0.1:5173, and each --mount folder ` +
        'under its prefix (regular files only; no dotfiles; symlinks only within the folder).',
    );
    process.exit(0);
  }
  const values = { '--port': undefined, '--host': undefined, '--root': undefined };
  const mounts = {};
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i], args[i + 1]];
    if (!(name in values) && name !== '--mount') {
      console.error(`playground: unknown flag ${name}\n${USAGE}`);
      process.exit(2);
    }
    if (value === undefined) {
      console.error(`playground: ${name} needs a value\n${USAGE}`);
      process.exit(2);
    }
    if (name !== '--mount') {
      values[name] = value;
      continue;
    }
    const [prefix, dir] = value.split('=');
    if (!prefix?.startsWith('/') || !prefix.endsWith('/') || dir === undefined || dir === '') {
      console.error('playground: --mount takes /prefix/=FOLDER, e.g. --mount /runs/=runs');
      process.exit(2);
    }
    mounts[prefix] = resolve(process.env.INIT_CWD ?? process.cwd(), dir); // pnpm runs this from apps/playground
    if (!existsSync(mounts[prefix])) {
      console.error(`playground: --mount ${prefix}=${dir}: ${mounts[prefix]} does not exist`);
      process.exit(2);
    }
  }
  const port = Number(values['--port'] ?? 5173);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || String(port) !== String(values['--port'] ?? 5173).trim()) {
    console.error(`playground: --port must be an integer in 0 … 65535, got '${values['--port']}'`);
    process.exit(2);
  }
  const root =
    values['--root'] === undefined
      ? resolve(import.meta.dirname, '..', 'dist')
      : resolve(process.env.INIT_CWD ?? process.cwd(), values['--root']);
  if (!existsSync(join(root, 'index.html'))) {
    console.error(`playground: ${root} has no build (index.html); run \`pnpm --filter playground build\` first`);
    process.exit(1);
  }
  let url;
  try {
    ({ url } = await serve({ root, mounts, port, host: values['--host'] ?? '127.0.0.1' }));
  } catch (err) {
    const why =
      err.code === 'EADDRINUSE'
        ? `port ${port} is in use (another server?): give --port N, or --port 0 for a free one`
        : err.code === 'EACCES'
          ? `port ${port} needs privileges here: give --port above 1023`
          : err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND'
            ? `--host ${values['--host']} is not an address of this machine`
            : err.message;
    console.error(`playground: cannot listen: ${why}`);
    process.exit(1);
  }
  console.log(`playground: serving ${root} at ${url} (cross-origin isolated)`);
  for (const [prefix, dir] of Object.entries(mounts))
    console.log(`playground: ${resolve(dir)} at ${url.replace(/\/$/, '')}${prefix} — open ${url}?checkpoint=${prefix}`);
  console.log('Stop with Ctrl-C.');
}

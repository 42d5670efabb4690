#!/usr/bin/env node
// Serves the built playground (dist/) on http://127.0.0.1:<port>/ with cross-origin isolation (wasm threads), and
// optional extra folders under their own paths (the tests mount a checkpoint at /checkpoint/).
// `pnpm playground` runs this: node scripts/serve.mjs [--port N] [--host H] [--mount /path/=DIR]…
import { createReadStream, existsSync, statSync } from 'node:fs';
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

/**
 * Starts a static server. `root`: the folder served at /; `mounts`: URL prefix (ending in '/') → folder.
 * Returns its URL and `close()`.
 */
export async function serve({ root, mounts = {}, port = 0, host = '127.0.0.1', isolated = true }) {
  const folders = [...Object.entries(mounts), ['/', root]].map(([prefix, dir]) => [prefix, resolve(dir)]);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    const [prefix, dir] = folders.find(([p]) => path.startsWith(p)) ?? ['/', resolve(root)];
    let file = normalize(join(dir, path.slice(prefix.length)));
    if (file !== dir && !file.startsWith(dir + sep)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: ${path}`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-store',
      ...(isolated ? ISOLATION_HEADERS : {}),
    });
    createReadStream(file).pipe(res);
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, done);
  });
  const address = server.address();
  const url = `http://${host}:${typeof address === 'object' && address !== null ? address.port : port}/`;
  return { url, close: () => new Promise((done) => server.close(() => done())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const i = args.indexOf(name);
    return i < 0 ? undefined : args[i + 1];
  };
  const root = resolve(import.meta.dirname, '..', 'dist');
  if (!existsSync(join(root, 'index.html'))) {
    console.error(`playground: ${root} has no build; run \`pnpm --filter playground build\` first`);
    process.exit(1);
  }
  const mounts = {};
  args.forEach((a, i) => {
    if (a !== '--mount') return;
    const [prefix, dir] = (args[i + 1] ?? '').split('=');
    if (!prefix?.startsWith('/') || !prefix.endsWith('/') || dir === undefined) {
      console.error('playground: --mount takes /prefix/=FOLDER, e.g. --mount /runs/=runs');
      process.exit(2);
    }
    mounts[prefix] = resolve(process.env.INIT_CWD ?? process.cwd(), dir); // pnpm runs this from apps/playground
  });
  const { url } = await serve({
    root,
    mounts,
    port: Number(flag('--port') ?? 5173),
    host: flag('--host') ?? '127.0.0.1',
  });
  console.log(`playground: serving ${root} at ${url} (cross-origin isolated)`);
  for (const [prefix, dir] of Object.entries(mounts))
    console.log(`playground: ${resolve(dir)} at ${url.replace(/\/$/, '')}${prefix} — open ${url}?checkpoint=${prefix}`);
  console.log('Stop with Ctrl-C.');
}

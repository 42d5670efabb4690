// A local HTTP server on 127.0.0.1 (a free port) with a handler per path, for the download tests of the packages that
// download (checkpoints' downloadFile, datasets' ensureDataset).
import { createServer } from 'node:http';

/** Start the server; every request's "path user-agent" is recorded in `requests`. */
export async function startServer() {
  const routes = new Map();
  const requests = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    requests.push(`${path} ${req.headers['user-agent'] ?? ''}`);
    const h = routes.get(path);
    if (h === undefined) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    h(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serve bytes with a correct Content-Length. */
export function serveBytes(body) {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
    res.end(body);
  };
}

/** Declare the full length but send only `sent` bytes, then close the socket. */
export function serveTruncated(body, sent) {
  return (_req, res) => {
    res.writeHead(200, { 'content-length': String(body.length) });
    res.write(body.subarray(0, sent), () => res.socket?.destroy());
  };
}

/** Send without Content-Length (chunked). */
export function serveChunked(body) {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(body);
  };
}

/** Answer every request with `status`. */
export function serveStatus(status) {
  return (_req, res) => {
    res.statusCode = status;
    res.end(`status ${status}`);
  };
}

/** Redirect to `location`. */
export function redirectTo(location, status = 302) {
  return (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
}

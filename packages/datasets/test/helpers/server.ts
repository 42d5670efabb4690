// A local HTTP server on 127.0.0.1 (random port) with per-path handlers, for download tests.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestServer {
  readonly base: string;
  readonly requests: string[];
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const routes = new Map<string, Handler>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    requests.push(`${path} ${req.headers['user-agent'] ?? ''}`);
    const h = routes.get(path);
    if (h === undefined) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    h(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serve bytes with a correct Content-Length. */
export function serveBytes(body: Uint8Array): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
    res.end(body);
  };
}

/** Declare the full length but send only `sent` bytes, then close the socket. */
export function serveTruncated(body: Uint8Array, sent: number): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-length': String(body.length) });
    res.write(body.subarray(0, sent), () => res.socket?.destroy());
  };
}

/** Send without Content-Length (chunked). */
export function serveChunked(body: Uint8Array): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(body);
  };
}

export function serveStatus(status: number): Handler {
  return (_req, res) => {
    res.statusCode = status;
    res.end(`status ${status}`);
  };
}

export function redirectTo(location: string, status = 302): Handler {
  return (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
}

// A local stand-in for the Hugging Face hub on 127.0.0.1: serves files by URL path, records requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HubServer {
  readonly base: string;
  /** Paths requested, in order. */
  readonly requests: string[];
  /** Files by URL path, e.g. `/distilbert/distilbert-base-uncased/resolve/main/config.json`. */
  readonly files: Map<string, Uint8Array>;
  /** Paths answered with the full Content-Length but only half the body, then a closed socket. */
  readonly truncate: Set<string>;
  close(): Promise<void>;
}

export async function startHub(): Promise<HubServer> {
  const files = new Map<string, Uint8Array>();
  const truncate = new Set<string>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    requests.push(path);
    const body = files.get(path);
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.byteLength) });
    if (truncate.has(path)) res.write(body.subarray(0, body.byteLength >> 1), () => res.socket?.destroy());
    else res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    files,
    truncate,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

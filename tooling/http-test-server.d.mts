import type { IncomingMessage, ServerResponse } from 'node:http';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestServer {
  readonly base: string;
  readonly requests: string[];
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export declare function startServer(): Promise<TestServer>;
export declare function serveBytes(body: Uint8Array): Handler;
export declare function serveTruncated(body: Uint8Array, sent: number): Handler;
export declare function serveChunked(body: Uint8Array): Handler;
export declare function serveStatus(status: number): Handler;
export declare function redirectTo(location: string, status?: number): Handler;

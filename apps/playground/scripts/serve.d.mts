export declare const ISOLATION_HEADERS: Readonly<Record<string, string>>;
export declare function serve(options: {
  root: string;
  mounts?: Record<string, string>;
  port?: number;
  host?: string;
  isolated?: boolean;
}): Promise<{ url: string; close(): Promise<void> }>;

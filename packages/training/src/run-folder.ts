// A run folder: config.json, metrics.jsonl, checkpoints/{latest,best}, report.md.
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '@grassflow/checkpoints';

/** One line of metrics.jsonl. */
export type MetricRecord = { type: string; step: number } & Record<string, number | string | null>;

/** The git commit of the working tree at `cwd` (with `-dirty` when it has changes), or null without git. */
export function gitCommit(cwd: string = process.cwd()): string | null {
  try {
    const opts = {
      cwd,
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    };
    const head = execFileSync('git', ['rev-parse', 'HEAD'], opts).trim();
    const dirty =
      execFileSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], opts).trim() !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return null;
  }
}

/**
 * Write JSON (two-space indent, final newline) atomically: temp file, fsync of the file, rename, fsync of
 * the folder. The one implementation is @grassflow/checkpoints'; re-exported where training always had it.
 */
export { writeJsonAtomic };

/** Paths and files of one training run. */
export class RunFolder {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  get configPath(): string {
    return join(this.dir, 'config.json');
  }
  get metricsPath(): string {
    return join(this.dir, 'metrics.jsonl');
  }
  get latestCheckpoint(): string {
    return join(this.dir, 'checkpoints', 'latest');
  }
  get bestCheckpoint(): string {
    return join(this.dir, 'checkpoints', 'best');
  }
  get reportPath(): string {
    return join(this.dir, 'report.md');
  }

  /** Create the folder (and checkpoints/) and write config.json atomically. */
  async init(config: unknown): Promise<void> {
    await mkdir(join(this.dir, 'checkpoints'), { recursive: true });
    await writeJsonAtomic(this.configPath, config);
  }

  /** Whether a run already lives here (config.json exists). */
  exists(): boolean {
    return existsSync(this.configPath);
  }

  /** Whether checkpoints/latest exists (a run whose config.json was lost still holds one). */
  hasCheckpoint(): boolean {
    return existsSync(this.latestCheckpoint);
  }

  /** config.json as written by {@link RunFolder.init}. */
  async readConfig<T>(): Promise<T> {
    return JSON.parse(await readFile(this.configPath, 'utf8')) as T;
  }

  /** Append one record to metrics.jsonl. */
  async appendMetric(record: MetricRecord): Promise<void> {
    await appendFile(this.metricsPath, `${JSON.stringify(record)}\n`);
  }

  /** All records of metrics.jsonl (a torn last line from a crash is skipped). */
  async readMetrics(): Promise<MetricRecord[]> {
    if (!existsSync(this.metricsPath)) return [];
    const out: MetricRecord[] = [];
    for (const line of (await readFile(this.metricsPath, 'utf8')).split('\n')) {
      if (line.trim() === '') continue;
      try {
        out.push(JSON.parse(line) as MetricRecord);
      } catch {
        // a line cut by a crash mid-append
      }
    }
    return out;
  }

  /**
   * Keep only records with step ≤ `step` (rewritten atomically): on resume from a checkpoint at `step`, the
   * records an interrupted run wrote after it are dropped, so the file reads as one uninterrupted run.
   */
  async truncateMetricsAfter(step: number): Promise<void> {
    const kept = (await this.readMetrics()).filter((r) => r.step <= step);
    await writeFileAtomic(
      this.metricsPath,
      new TextEncoder().encode(kept.map((r) => `${JSON.stringify(r)}\n`).join('')),
    );
  }
}

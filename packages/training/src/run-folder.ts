// A run folder: config.json, metrics.jsonl (and the same records as metrics.csv), checkpoints/{latest,best},
// report.md.
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '@grassflow/checkpoints';

/** One line of metrics.jsonl. */
export type MetricRecord = { type: string; step: number } & Record<string, number | string | null>;

/**
 * The git commit of the code that runs (`code`: a file or folder of it, default the main script), with `-dirty` when
 * its working tree has changes; null when that code is not a tracked file of a git checkout (an npm install).
 */
export function gitCommit(code: string | undefined = process.argv[1]): string | null {
  if (code === undefined || code === '') return null;
  try {
    // the package folder of the running code (nearest package.json above it), not the current directory: a run
    // started inside another repository records this installation's commit, never that repository's
    let dir = statSync(code).isDirectory() ? realpathSync(code) : dirname(realpathSync(code));
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
    const opts = {
      cwd: dir,
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    };
    // installed from npm into some project, the package is not a file of that project's repository: null
    execFileSync('git', ['ls-files', '--error-unmatch', 'package.json'], opts);
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

/** One CSV field (RFC 4180): numbers as JSON writes them, a string quoted when it holds `,`, `"` or a line break. */
function csvField(v: number | string | null | undefined): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : ''; // NaN/±Infinity: JSON's null
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The columns of records: `type`, `step`, then every other key in order of first appearance. */
export function metricColumns(records: readonly MetricRecord[], start: readonly string[] = ['type', 'step']): string[] {
  const cols = [...start];
  for (const r of records) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  return cols;
}

/** One CSV line of a record under `columns` (an absent field is empty). */
export function csvLine(record: MetricRecord, columns: readonly string[]): string {
  return `${columns.map((c) => csvField(record[c])).join(',')}\n`;
}

/** metrics.csv of records: a header of {@link metricColumns}, then one line per record. */
export function metricsCsv(records: readonly MetricRecord[], columns = metricColumns(records)): string {
  return `${columns.join(',')}\n${records.map((r) => csvLine(r, columns)).join('')}`;
}

/** Paths and files of one training run. */
/**
 * What the training loop writes to: a {@link RunFolder}, or a sink of the same shape (trainLanguageModel without an
 * output folder keeps the records in memory and saves no checkpoint).
 */
export type RunSink = Pick<
  RunFolder,
  'dir' | 'latestCheckpoint' | 'bestCheckpoint' | 'appendMetric' | 'truncateMetricsAfter'
>;

export class RunFolder {
  readonly dir: string;
  /** metrics.csv's header as this process knows it (null: not read yet). */
  private csvColumns: string[] | null = null;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  get configPath(): string {
    return join(this.dir, 'config.json');
  }
  get metricsPath(): string {
    return join(this.dir, 'metrics.jsonl');
  }
  /** metrics.jsonl's records as CSV (a header, one line per record), for spreadsheets and plotting tools. */
  get metricsCsvPath(): string {
    return join(this.dir, 'metrics.csv');
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
    const text = await readFile(this.configPath, 'utf8');
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new Error(
        `${this.configPath} is not valid JSON (${(err as Error).message}): the run's config was damaged or edited; ` +
          'restore it, or start the run in a new folder',
      );
    }
  }

  /**
   * Append one record to metrics.jsonl and metrics.csv, each as one write of a whole line (a killed run leaves whole
   * lines). A record with a field the CSV header lacks, or a CSV that is missing (a run from before it existed),
   * rewrites metrics.csv from metrics.jsonl atomically with the wider header.
   */
  async appendMetric(record: MetricRecord): Promise<void> {
    await appendFile(this.metricsPath, `${JSON.stringify(record)}\n`);
    const cols = this.csvColumns ?? (await this.readCsvHeader());
    if (cols !== null && Object.keys(record).every((k) => cols.includes(k))) {
      await appendFile(this.metricsCsvPath, csvLine(record, cols));
    } else await this.writeCsv(await this.readMetrics(), cols ?? undefined);
  }

  /** metrics.csv's header, or null when the file is missing or empty. */
  private async readCsvHeader(): Promise<string[] | null> {
    if (!existsSync(this.metricsCsvPath)) return null;
    const text = await readFile(this.metricsCsvPath, 'utf8');
    const end = text.indexOf('\n');
    return end <= 0 ? null : (this.csvColumns = text.slice(0, end).split(','));
  }

  /** Rewrite metrics.csv from `records` atomically; the header keeps `known` columns first (stable order). */
  private async writeCsv(records: readonly MetricRecord[], known?: readonly string[]): Promise<void> {
    const cols = metricColumns(records, known ?? ['type', 'step']);
    await writeFileAtomic(this.metricsCsvPath, new TextEncoder().encode(metricsCsv(records, cols)));
    this.csvColumns = cols;
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
   * records an interrupted run wrote after it are dropped, so the file reads as one uninterrupted run; metrics.csv
   * is rewritten from the kept records.
   */
  async truncateMetricsAfter(step: number): Promise<void> {
    const kept = (await this.readMetrics()).filter((r) => r.step <= step);
    await writeFileAtomic(
      this.metricsPath,
      new TextEncoder().encode(kept.map((r) => `${JSON.stringify(r)}\n`).join('')),
    );
    await this.writeCsv(kept); // metrics.csv is cut back with it
  }
}

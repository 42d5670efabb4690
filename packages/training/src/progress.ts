// Terminal progress: a one-line bar on a TTY, plain lines otherwise (or with --quiet).

/** What the bar shows at a step. */
export interface ProgressUpdate {
  step: number;
  loss: number;
  lr: number;
  tokensPerSec: number;
  /** Seconds left, or null when unknown. */
  etaSec: number | null;
}

/** Seconds as 1h02m, 3m05s or 42s. */
export function formatDuration(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) return '?';
  const s = Math.round(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * `[########------] 120/1000 loss 5.123 lr 3.00e-4 1,234 tok/s ETA 3m12s`, redrawn in place on a TTY.
 * Quiet (option, or the stream is not a TTY): no bar; only {@link Progress.log} lines (one per eval) appear.
 */
export class Progress {
  readonly quiet: boolean;
  private readonly stream: NodeJS.WriteStream;
  private drawn = false;

  constructor(
    readonly total: number,
    opts: { quiet?: boolean; stream?: NodeJS.WriteStream } = {},
  ) {
    this.stream = opts.stream ?? process.stderr;
    this.quiet = opts.quiet === true || this.stream.isTTY !== true;
  }

  /** Redraw the bar (no-op when quiet). */
  update(u: ProgressUpdate): void {
    if (this.quiet) return;
    const width = 20;
    const filled = Math.min(width, Math.round((width * u.step) / this.total));
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
    const line = `${bar} ${u.step}/${this.total} loss ${u.loss.toFixed(4)} lr ${u.lr.toExponential(2)} ${Math.round(u.tokensPerSec).toLocaleString('en-US')} tok/s ETA ${u.etaSec === null ? '?' : formatDuration(u.etaSec)}`;
    const cols = this.stream.columns ?? 120;
    this.stream.write(`\r${line.slice(0, cols - 1)}\x1b[K`);
    this.drawn = true;
  }

  /** Print a line above the bar (or on its own when quiet). */
  log(line: string): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.stream.write(`${line}\n`);
    this.drawn = false;
  }

  /** End the bar's line. */
  done(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}

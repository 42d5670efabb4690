// Terminal progress: a one-line bar on a TTY, plain lines otherwise (or with --quiet).

/** What the bar shows at a step. */
export interface ProgressUpdate {
  step: number;
  loss: number;
  lr: number;
  tokensPerSec: number;
  /** Seconds left, or null when unknown. */
  etaSec: number | null;
  /** Wall seconds since this process started the run (training, evaluations, checkpoints); absent: not shown. */
  elapsedSec?: number;
}

/** What the bar shows while an evaluation runs. */
export interface EvalProgressUpdate {
  /** Targets scored so far. */
  tokens: number;
  /** Targets the evaluation scores in all. */
  totalTokens: number;
  /** Seconds since the evaluation started. */
  elapsedSec: number;
}

/** `step 120/1000 loss 5.1230 lr 3.00e-4 1,234 tok/s elapsed 1m02s ETA 3m12s`: one plain line of training. */
export function formatTrainLine(u: ProgressUpdate, total: number): string {
  const elapsed = u.elapsedSec === undefined ? '' : ` elapsed ${formatDuration(u.elapsedSec)}`;
  return (
    `step ${u.step}/${total} loss ${u.loss.toFixed(4)} lr ${u.lr.toExponential(2)} ` +
    `${Math.round(u.tokensPerSec).toLocaleString('en-US')} tok/s${elapsed} ` +
    `ETA ${u.etaSec === null ? '?' : formatDuration(u.etaSec)}`
  );
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

/** Where {@link Progress} writes: process.stderr, or anything with its `write` (and `isTTY`, `columns`). */
export type ProgressStream = Pick<NodeJS.WriteStream, 'write'> & {
  readonly isTTY?: boolean;
  readonly columns?: number;
};

/**
 * `[########------] 120/1000 loss 5.123 lr 3.00e-4 1,234 tok/s elapsed 1m02s ETA 3m12s`, redrawn in place on a TTY;
 * during an evaluation `eval [####----] 12,288/65,535 tokens elapsed 4s ETA 17s`. Quiet (option, or the stream is not
 * a TTY): no bar; only {@link Progress.log} lines appear (the training loop logs a periodic training line and one
 * line per eval).
 */
export class Progress {
  readonly quiet: boolean;
  private readonly stream: ProgressStream;
  private drawn = false;

  constructor(
    readonly total: number,
    opts: { quiet?: boolean; stream?: ProgressStream } = {},
  ) {
    this.stream = opts.stream ?? process.stderr;
    this.quiet = opts.quiet === true || this.stream.isTTY !== true;
  }

  /** Redraw the bar (no-op when quiet). */
  update(u: ProgressUpdate): void {
    if (this.quiet) return;
    const line = `${this.bar(u.step / this.total)} ${formatTrainLine(u, this.total).slice('step '.length)}`;
    this.draw(line);
  }

  /** Redraw the bar with an evaluation's progress: tokens scored and its ETA at the rate so far (no-op when quiet). */
  updateEval(u: EvalProgressUpdate): void {
    if (this.quiet) return;
    const rate = u.tokens / Math.max(u.elapsedSec, 1e-9);
    const eta = u.tokens > 0 ? formatDuration((u.totalTokens - u.tokens) / rate) : '?';
    const n = (x: number) => x.toLocaleString('en-US');
    const bar = this.bar(u.tokens / Math.max(u.totalTokens, 1));
    const done = `${n(u.tokens)}/${n(u.totalTokens)} tokens`;
    const line = `eval ${bar} ${done} elapsed ${formatDuration(u.elapsedSec)} ETA ${eta}`;
    this.draw(line);
  }

  private bar(fraction: number): string {
    const width = 20;
    const filled = Math.max(0, Math.min(width, Math.round(width * fraction)));
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  }

  private draw(line: string): void {
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

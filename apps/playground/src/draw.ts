// Canvas charts of the playground: a heatmap with labelled axes (tokens along x) and a line chart over positions.

const FONT = '11px system-ui, sans-serif';

/** A colour of the viridis-like ramp for v ∈ [0, 1]. */
function ramp(v: number): string {
  const x = Math.min(1, Math.max(0, v));
  const stops = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
  ];
  const at = x * (stops.length - 1);
  const k = Math.min(stops.length - 2, Math.floor(at));
  const f = at - k;
  const [a, b] = [stops[k]!, stops[k + 1]!];
  const c = a.map((ai, i) => Math.round(ai + f * (b[i]! - ai)));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

function context(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  if (ctx === null) throw new Error('this browser gives no 2D canvas context');
  ctx.scale(dpr, dpr);
  ctx.clearRect(0, 0, width, height);
  ctx.font = FONT;
  return ctx;
}

/** Tokens written vertically under columns of width `cell` starting at x0. */
function tokenAxis(
  ctx: CanvasRenderingContext2D,
  tokens: readonly string[],
  x0: number,
  y: number,
  cell: number,
): void {
  ctx.fillStyle = '#333';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  tokens.forEach((t, j) => {
    ctx.save();
    ctx.translate(x0 + (j + 0.5) * cell, y);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(t.length > 12 ? `${t.slice(0, 11)}…` : t, 0, 0);
    ctx.restore();
  });
}

export interface HeatmapSpec {
  /** values[row][col]; null cells are drawn grey. */
  values: ReadonlyArray<ReadonlyArray<number | null>>;
  rowLabels: readonly string[];
  /** Tokens along the x axis (one per column). */
  tokens: readonly string[];
  /** Colour domain [lo, hi]. */
  domain: readonly [number, number];
  title: string;
}

/** A heatmap: rows × columns cells, row labels left, tokens under the columns, a title and the colour domain. */
export function drawHeatmap(canvas: HTMLCanvasElement, spec: HeatmapSpec): void {
  const cols = spec.tokens.length;
  const rows = spec.values.length;
  const left = 64;
  const top = 20;
  const cell = Math.max(6, Math.min(28, Math.floor(720 / Math.max(1, cols))));
  const rowH = Math.max(6, Math.min(28, Math.floor(320 / Math.max(1, rows))));
  const bottom = 90;
  const ctx = context(canvas, left + cols * cell + 12, top + rows * rowH + bottom);
  ctx.fillStyle = '#111';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  const [lo, hi] = spec.domain;
  ctx.fillText(`${spec.title}  (colour ${lo} → ${hi})`, 0, 2);
  spec.values.forEach((row, i) => {
    row.forEach((v, j) => {
      ctx.fillStyle = v === null || !Number.isFinite(v) ? '#ccc' : ramp((v - lo) / (hi - lo));
      ctx.fillRect(left + j * cell, top + i * rowH, cell, rowH);
    });
    ctx.fillStyle = '#333';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(spec.rowLabels[i] ?? '', left - 4, top + (i + 0.5) * rowH);
  });
  tokenAxis(ctx, spec.tokens, left, top + rows * rowH + 4, cell);
}

export interface LineSpec {
  series: ReadonlyArray<{ label: string; values: ReadonlyArray<number | null> }>;
  tokens: readonly string[];
  domain: readonly [number, number];
  title: string;
  unit: string;
}

const SERIES_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

/** Lines over positions (gaps at nulls), tokens under the x axis, a legend in the title line. */
export function drawLines(canvas: HTMLCanvasElement, spec: LineSpec): void {
  const n = spec.tokens.length;
  const left = 44;
  const top = 22;
  const cell = Math.max(6, Math.min(28, Math.floor(720 / Math.max(1, n))));
  const h = 140;
  const ctx = context(canvas, left + n * cell + 12, top + h + 90);
  const [lo, hi] = spec.domain;
  const y = (v: number): number => top + h - ((v - lo) / (hi - lo)) * h;
  ctx.strokeStyle = '#999';
  ctx.strokeRect(left, top, n * cell, h);
  ctx.fillStyle = '#333';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.fillText(`${hi}${spec.unit}`, left - 4, top);
  ctx.fillText(`${lo}${spec.unit}`, left - 4, top + h);
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  let x = 0;
  ctx.fillStyle = '#111';
  ctx.fillText(spec.title, x, 2);
  x += ctx.measureText(spec.title).width + 12;
  spec.series.forEach((s, k) => {
    const colour = SERIES_COLOURS[k % SERIES_COLOURS.length]!;
    ctx.fillStyle = colour;
    ctx.fillText(`— ${s.label}`, x, 2);
    x += ctx.measureText(`— ${s.label}`).width + 10;
    ctx.strokeStyle = colour;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    let pen = false;
    s.values.forEach((v, j) => {
      if (v === null || !Number.isFinite(v)) {
        pen = false;
        return;
      }
      const px = left + (j + 0.5) * cell;
      if (pen) ctx.lineTo(px, y(v));
      else ctx.moveTo(px, y(v));
      pen = true;
      ctx.fillRect(px - 1.5, y(v) - 1.5, 3, 3);
    });
    ctx.stroke();
  });
  tokenAxis(ctx, spec.tokens, left, top + h + 4, cell);
}

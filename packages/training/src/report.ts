// report.md with charts (SVG + PNG beside it) and a table of final numbers.
import { join } from 'node:path';
import { writeFileAtomic } from '@grassflow/checkpoints';
import { renderLineChart, type LineChart } from './charts.js';

/** A table: header cells and rows of cells (numbers are formatted, strings kept). */
export interface ReportTable {
  columns: readonly string[];
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>;
}

/** Content of a report. */
export interface Report {
  title: string;
  /** Markdown paragraphs before the table (setup, command, caveats). */
  intro?: readonly string[];
  table?: ReportTable;
  /** Charts, written as `<file>.svg` and `<file>.png` and embedded by the PNG. */
  charts?: ReadonlyArray<{ file: string; chart: LineChart }>;
  /** Markdown paragraphs after the charts. */
  notes?: readonly string[];
}

/** Format a number for a table: integers with separators, others with 4 significant digits (or exponent). */
export function formatCell(v: string | number | null): string {
  if (v === null) return '–';
  if (typeof v === 'string') return v.replace(/\|/g, '\\|');
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}

/** Markdown of a table (GitHub pipe syntax; numeric columns right-aligned). */
export function markdownTable(t: ReportTable): string {
  const numeric = t.columns.map(
    (_, j) => t.rows.length > 0 && t.rows.every((r) => typeof r[j] === 'number' || r[j] === null),
  );
  const head = `| ${t.columns.join(' | ')} |`;
  const sep = `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`;
  return [head, sep, ...t.rows.map((r) => `| ${r.map(formatCell).join(' | ')} |`)].join('\n');
}

/** Render the charts, then write report.md in `dir` (every file atomically). Returns the report's path. */
export async function writeReport(dir: string, report: Report): Promise<string> {
  const parts: string[] = [`# ${report.title}`, ''];
  for (const p of report.intro ?? []) parts.push(p, '');
  if (report.table !== undefined) parts.push(markdownTable(report.table), '');
  for (const { file, chart } of report.charts ?? []) {
    const { svg, png } = await renderLineChart(chart);
    await writeFileAtomic(join(dir, `${file}.svg`), new TextEncoder().encode(svg));
    await writeFileAtomic(join(dir, `${file}.png`), png);
    parts.push(`![${chart.title}](${file}.png)`, '', `(vector: [${file}.svg](${file}.svg))`, '');
  }
  for (const p of report.notes ?? []) parts.push(p, '');
  const path = join(dir, 'report.md');
  await writeFileAtomic(path, new TextEncoder().encode(parts.join('\n')));
  return path;
}

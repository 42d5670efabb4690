// docs/gpu-layers.md's table of the optional architecture fields is generated from MODEL_OPTIONS, the one place they
// are declared: this test fails when the two differ (GRASSFLOW_WRITE_DOCS=1 rewrites the table from MODEL_OPTIONS).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_OPTIONS } from '@grassflow/gpu-layers';

const DOC = join(import.meta.dirname, '../../../docs/gpu-layers.md');
const START =
  '<!-- model-options: generated from MODEL_OPTIONS by packages/gpu-layers/test/model-options-docs.test.ts -->';
const END = '<!-- /model-options -->';

/** A Markdown cell: pipes escaped (a table cell cannot hold a bare one). */
const cell = (s: string) => s.replaceAll('|', '\\|');

/** The table: one row per field, in stored order. */
function optionsTable(): string {
  const rows = Object.entries(MODEL_OPTIONS).map(([name, o]) => {
    const values =
      o.type === 'choice'
        ? o.values.map((v) => `'${v}'`).join(' \\| ')
        : o.type === 'boolean'
          ? 'true \\| false'
          : 'integers';
    const show = (d: string | boolean | readonly number[]) =>
      typeof d === 'string' ? `'${d}'` : typeof d === 'boolean' ? String(d) : `[${d.join(', ')}]`;
    const byKind = 'defaultFor' in o ? (o.defaultFor as Partial<Record<string, string>>) : undefined;
    const shown =
      byKind === undefined ? show(o.default) : o.kinds.map((k) => `${k} ${show(byKind[k] ?? o.default)}`).join(', ');
    const kinds = o.kinds.map((k) => `'${k}'`).join(', ');
    return `| \`${name}\` | ${kinds} | ${values} | ${shown}: ${cell(o.why)} | \`--${o.flag}\` | ${cell(o.doc)} |`;
  });
  return ['| field | kinds | values | default: why | flag | what it does |', '|---|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

describe('docs/gpu-layers.md', () => {
  it("lists MODEL_OPTIONS' fields as the table declares them", () => {
    const text = readFileSync(DOC, 'utf8');
    const a = text.indexOf(START);
    const b = text.indexOf(END);
    expect(a, `${DOC} has no ${START} marker`).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(a);
    const want = `${START}\n${optionsTable()}\n`;
    const got = text.slice(a, b);
    if (got !== want && process.env['GRASSFLOW_WRITE_DOCS'] === '1') {
      writeFileSync(DOC, text.slice(0, a) + want + text.slice(b));
      return;
    }
    expect(got, 'regenerate with GRASSFLOW_WRITE_DOCS=1 npx vitest run test/model-options-docs.test.ts').toBe(want);
  });
});

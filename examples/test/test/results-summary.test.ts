// docs/results.md's summary and provenance tables and the root README's results table are computed from the committed
// ledgers by docs/results/check_numbers.py (Python's standard library only); if a cell differs from what the ledgers
// give, the docs are wrong.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const script = join(root, 'docs', 'results', 'check_numbers.py');
const python = process.env['PYTHON'] ?? 'python3';
const dir = mkdtempSync(join(tmpdir(), 'grassflow-results-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(python, [script, ...args], { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`could not run ${python} (set PYTHON to a Python 3): ${r.error.message}`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A copy of a committed doc with one string replaced (it must occur). */
function changed(file: string, from: string, to: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  expect(text).toContain(from);
  const path = join(dir, file.replaceAll('/', '-'));
  writeFileSync(path, text.replace(from, to));
  return path;
}

describe('the results tables are what the ledgers give', () => {
  it('docs/results.md and README.md as committed', () => {
    const r = check();
    expect(r.out).toContain('match the ledgers');
    expect(r.status, r.out).toBe(0);
  });

  it('a changed gap in the summary table fails, naming the line', () => {
    const r = check('--results', changed('docs/results.md', '| −5.4% (−6.1% … −4.8%) |', '| −5.5% (−6.1% … −4.8%) |'));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/summary table, line \d+/);
  });

  it('a changed count in the provenance table fails', () => {
    const r = check('--results', changed('docs/results.md', '| 9462f72 (9) | 9 |', '| 9462f72 (9) | 0 |'));
    expect(r.status).toBe(1);
    expect(r.out).toContain('provenance table');
  });

  it("a README results row that differs from the summary's cells fails", () => {
    const r = check('--readme', changed('README.md', '| −0.7% | −12.0% |', '| −0.7% | −12.1% |'));
    expect(r.status).toBe(1);
    expect(r.out).toContain("README.md, row 'the same at 12.8M tokens");
  });
});

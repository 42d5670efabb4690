// The study's memory: ledger.jsonl, one JSON record per finished run (its key, resolved config, provenance, results).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { fileSystemProblem, writeFileAtomic } from '@grassflow/checkpoints';

/** What every ledger record has: the trainer's record format, the study and the run's key. */
export interface StudyRecord {
  format: string;
  study: string;
  key: string;
}

/** How a trainer's records are told apart and checked (the fields its reports read). */
export interface LedgerFormat<R extends StudyRecord> {
  /** The `format` field of the trainer's records, e.g. 'grassflow-lm-study-run'. */
  format: R['format'];
  /** How messages name such a record, e.g. 'grassflow-lm study record'. */
  what: string;
  /** What is wrong with a parsed record of this format, or null. */
  problem(r: R): string | null;
}

/** The machine a run finished on (no host name: ledgers are meant to be committed). */
export interface Machine {
  cpu: string;
  cpus: number;
  platform: string;
  memoryGiB: number;
}

/** This machine. */
export function thisMachine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    platform: `${os.platform()}-${os.arch()}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  };
}

/** A ledger that cannot be read or written (a folder in its place, a full disk, no permission): names it and what to do. */
export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

/** The file system's error on the ledger `path`, as a LedgerError naming it (`doing`: "read" or "write"). */
function ledgerProblem(path: string, doing: 'read' | 'write', err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string') return err; // not the file system's (a bug): as it is
  const after =
    doing === 'write'
      ? '; the finished run stays in its run folder, and the next `study run` records it without training it again'
      : '';
  return new LedgerError(`cannot ${doing} the ledger ${path}: ${fileSystemProblem(path, e)}${after}`);
}

/** A ledger as read: its records (the first of each key), the line of each, and what was wrong with the file. */
export interface LedgerContents<R> {
  records: R[];
  /** The 1-based line of `records[i]` in the file (messages about a record name it). */
  lines: number[];
  warnings: string[];
}

/**
 * Read ledger.jsonl (absent: empty). A last line that is not JSON (cut by a crash or a bad merge) is skipped with a
 * warning; a bad line before the last is a LedgerError naming the file and line, and so is a record whose fields are
 * not what reports read (checked in full by the format's `problem`, as a merge or an edit by hand can leave them) or,
 * with `study`, a record of another study. A key seen twice keeps its first record (warning).
 */
export async function readLedger<R extends StudyRecord>(
  path: string,
  f: LedgerFormat<R>,
  study?: string,
): Promise<LedgerContents<R>> {
  if (!existsSync(path)) return { records: [], lines: [], warnings: [] };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw ledgerProblem(path, 'read', err); // EISDIR and EIO say no path by themselves
  }
  const lines = text.split('\n');
  while (lines.length > 0 && (lines[lines.length - 1] as string).trim() === '') lines.pop();
  const records: R[] = [];
  const at: number[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${path}:${i + 1}`;
    let r: R;
    try {
      r = JSON.parse(line) as R;
    } catch {
      if (i === lines.length - 1) {
        warnings.push(`${where}: a torn last line (not JSON) skipped`);
        return;
      }
      throw new LedgerError(`${where}: not a JSON record; fix or remove that line`);
    }
    if (typeof r !== 'object' || r === null || r.format !== f.format || typeof r.key !== 'string') {
      throw new LedgerError(`${where}: not a ${f.what}; fix or remove that line`);
    }
    const bad = typeof r.study !== 'string' || r.study === '' ? '"study" is not a study\'s name' : problemOf(f, r);
    if (bad !== null) throw new LedgerError(`${where}: ${bad}; fix or remove that line (record ${r.key})`);
    if (study !== undefined && r.study !== study) {
      throw new LedgerError(
        `${where}: a run of study '${r.study}', not '${study}': give each study its own --out (move that line to ` +
          `its study's ledger)`,
      );
    }
    if (seen.has(r.key)) {
      warnings.push(`${where}: key ${r.key} again (the first record kept)`);
      return;
    }
    seen.add(r.key);
    records.push(r);
    at.push(i + 1);
  });
  return { records, lines: at, warnings };
}

/** The format's problem with a record; a check that throws on a field of the wrong type is a problem too. */
function problemOf<R extends StudyRecord>(f: LedgerFormat<R>, r: R): string | null {
  try {
    return f.problem(r);
  } catch (e) {
    return `a field is not of its type (${(e as Error).message})`;
  }
}

/**
 * Add one record (or replace the record of its key): the ledger is read again and written whole with
 * writeFileAtomic (temp file, fsync, rename), so after a crash it holds either the old records or the old ones and
 * this one, never half a line (a torn line left by something else is dropped then).
 */
export async function appendLedger<R extends StudyRecord>(path: string, record: R, f: LedgerFormat<R>): Promise<void> {
  const { records } = await readLedger(path, f);
  const text = [...records.filter((r) => r.key !== record.key), record].map((r) => `${JSON.stringify(r)}\n`).join('');
  try {
    await writeFileAtomic(path, new TextEncoder().encode(text));
  } catch (err) {
    throw ledgerProblem(path, 'write', err);
  }
}

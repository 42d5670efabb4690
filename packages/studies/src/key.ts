// The key of a study run: sha256 of its fully resolved config as canonical JSON (sorted keys), first 16 hex digits.
import { createHash } from 'node:crypto';

/** JSON with the keys of every object sorted (arrays keep their order; undefined fields dropped, as JSON does). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** sha256(canonicalJson(config)), the first 16 hex digits: the run's key in the ledger and its folder's name. */
export function runKey(config: unknown): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex').slice(0, 16);
}

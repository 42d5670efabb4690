// A small strict command-line parser: typed flags, errors that name the flag.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** Bad command-line input; `flag` names the offending flag (without dashes) when there is one. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly flag?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One flag: its type, default, allowed values/range and help line. */
export type FlagSpec =
  | { type: 'string'; help: string; default?: string; choices?: readonly string[]; metavar?: string }
  | { type: 'int'; help: string; default?: number; min?: number; max?: number }
  | { type: 'float'; help: string; default?: number; min?: number; max?: number; exclusiveMin?: boolean }
  | { type: 'boolean'; help: string }
  | { type: 'int-list'; help: string; default?: number[]; min?: number };

export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<S extends FlagSpec> = S extends { type: 'string' }
  ? string
  : S extends { type: 'int' | 'float' }
    ? number
    : S extends { type: 'boolean' }
      ? boolean
      : number[];

/** Parsed values: a flag with a default (or a boolean) is always present, others may be undefined. */
export type ParsedFlags<S extends FlagSpecs> = {
  [K in keyof S]: S[K] extends { type: 'boolean' }
    ? boolean
    : S[K] extends { default: unknown }
      ? ValueOf<S[K]>
      : ValueOf<S[K]> | undefined;
};

/** A decimal number as people write one: 12, -3, 0.5, .5, 3e-4, 1e6 (no hex, no spaces, no Infinity). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function parseNumber(name: string, raw: string, spec: Extract<FlagSpec, { type: 'int' | 'float' }>): number {
  const v = Number(raw);
  if (!DECIMAL.test(raw) || !Number.isFinite(v) || (spec.type === 'int' && !Number.isInteger(v))) {
    throw new UsageError(`--${name} must be ${spec.type === 'int' ? 'an integer' : 'a number'}, got '${raw}'`, name);
  }
  if (spec.type === 'int' && !Number.isSafeInteger(v)) {
    throw new UsageError(`--${name} ${raw} is too large to count exactly (at most ${Number.MAX_SAFE_INTEGER})`, name);
  }
  const exclusive = spec.type === 'float' && spec.exclusiveMin === true;
  if (spec.min !== undefined && (exclusive ? v <= spec.min : v < spec.min))
    throw new UsageError(`--${name} must be ${exclusive ? '>' : '>='} ${spec.min}, got ${raw}`, name);
  if (spec.max !== undefined && v > spec.max)
    throw new UsageError(`--${name} must be <= ${spec.max}, got ${raw}`, name);
  return v;
}

/** Levenshtein distance of a and b (insertions, deletions, substitutions; a swap of neighbours counts 1). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => new Array<number>(b.length + 1).fill(i));
  for (let j = 0; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** The known flag nearest to a mistyped one, if it is close (at most 2 edits, and fewer than half its letters). */
function closestName(typed: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const n of names) {
    const dist = editDistance(typed, n);
    if (dist < bestD) [best, bestD] = [n, dist];
  }
  return bestD <= 2 && bestD < typed.length / 2 ? best : undefined;
}

/**
 * Parse `argv` against `specs` (node:util parseArgs in strict mode, then typed validation): an unknown
 * flag, a missing value, a stray positional argument or an invalid value throws a {@link UsageError}
 * that names the flag, and so does a flag given twice. Flags are written `--name value` or `--name=value`.
 */
export function parseFlags<S extends FlagSpecs>(argv: readonly string[], specs: S): ParsedFlags<S> {
  const options = Object.fromEntries(
    Object.entries(specs).map(([k, s]) => [
      k,
      { type: s.type === 'boolean' ? ('boolean' as const) : ('string' as const) },
    ]),
  );
  // `--steps -3`: parseArgs calls a value that starts with '-' ambiguous; join it so that validation names the problem
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = argv[i + 1];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    if (
      name !== undefined &&
      specs[name] !== undefined &&
      specs[name].type !== 'boolean' &&
      next !== undefined &&
      /^-\d|^-\./.test(next)
    ) {
      args.push(`${a}=${next}`);
      i++;
    } else args.push(a);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: false, tokens: true });
  } catch (err) {
    const msg = (err as Error).message;
    const m = /'(-{1,2}[\w-]+)/.exec(msg);
    const flag = m?.[1]?.replace(/^-+/, '');
    if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const near = flag === undefined ? undefined : closestName(flag, Object.keys(specs));
      const hint = near === undefined ? '' : ` (did you mean --${near}?)`;
      throw new UsageError(`unknown flag ${m?.[1] ?? ''}${hint}; run with --help to see the flags`, flag);
    }
    throw new UsageError(msg.split('\n')[0] ?? msg, flag);
  }
  // parseArgs keeps the last of repeated flags; a repeated flag is more often a mistake than a wish.
  const seen = new Map<string, string[]>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option') continue;
    seen.set(t.name, [...(seen.get(t.name) ?? []), t.value ?? t.rawName]);
  }
  for (const [name, values] of seen) {
    if (values.length > 1)
      throw new UsageError(`--${name} is given ${values.length} times (${values.join(', ')}): give it once`, name);
  }
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const raw = parsed.values[name];
    if (spec.type === 'boolean') {
      out[name] = raw === true;
      continue;
    }
    if (raw === undefined) {
      out[name] = spec.default;
      continue;
    }
    const s = String(raw);
    if (spec.type === 'string') {
      if (spec.choices !== undefined && !spec.choices.includes(s))
        throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}, got '${s}'`, name);
      if (s === '') throw new UsageError(`--${name} needs a value`, name);
      out[name] = s;
    } else if (spec.type === 'int-list') {
      const parts = s.split(',').map((x) => x.trim());
      out[name] = parts.map((p) => parseNumber(name, p, { type: 'int', help: '', min: spec.min }));
    } else {
      out[name] = parseNumber(name, s, spec);
    }
  }
  return out as ParsedFlags<S>;
}

/** Help text: usage line, then one aligned line per flag with its choices/default. */
export function formatHelp(usage: string, description: string, specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, s]) => {
    const arg =
      s.type === 'boolean'
        ? ''
        : s.type === 'string'
          ? ` ${s.choices ? s.choices.join('|') : (s.metavar ?? 'VALUE')}`
          : s.type === 'int-list'
            ? ' N,N,…'
            : ' N';
    const def =
      'default' in s && s.default !== undefined
        ? ` (default ${Array.isArray(s.default) ? s.default.join(',') : s.default})`
        : '';
    return [`  --${name}${arg}`, `${s.help}${def}`] as const;
  });
  const w = Math.min(40, Math.max(...rows.map(([a]) => a.length)) + 2);
  return [
    `Usage: ${usage}`,
    '',
    description,
    '',
    'Flags:',
    ...rows.map(([a, b]) => (a.length >= w ? `${a}\n${' '.repeat(w)}${b}` : a.padEnd(w) + b)),
  ].join('\n');
}

/** A config file's value of one flag: what `--name value` would give (a list as an array, a switch as a boolean). */
type ConfigValue = string | number | boolean | readonly (string | number)[];

/**
 * `argv` with the flags of the JSON file named by its `--config FILE` (as nanoGPT's config files): each key is a
 * flag's name without dashes (`{ "steps": 200, "train-file": "a.txt" }`), checked as the flag would be once
 * parseFlags reads the result; a flag given on the command line wins over the file. An unknown key is refused with
 * the nearest flag's name. Without --config, `argv` as it is.
 */
export function argvWithConfigFile(argv: readonly string[], specs: FlagSpecs, flag = 'config'): string[] {
  const i = argv.findIndex((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  if (i < 0) return [...argv];
  const a = argv[i] as string;
  const path = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[i + 1];
  if (path === undefined || path === '') throw new UsageError(`--${flag} needs a JSON file`, flag);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--${flag} ${path}: cannot read it as JSON (${(err as Error).message})`, flag);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UsageError(`--${flag} ${path}: expected an object of flags, e.g. { "steps": 200 }`, flag);
  }
  const onCommandLine = new Set(argv.filter((x) => x.startsWith('--')).map((x) => x.slice(2).split('=')[0]));
  const names = Object.keys(specs).filter((n) => n !== flag);
  const fromFile: string[] = [];
  for (const [key, value] of Object.entries(json as Record<string, ConfigValue>)) {
    const spec = specs[key];
    if (spec === undefined || key === flag) {
      const near = closestName(key, names);
      throw new UsageError(
        `--${flag} ${path}: unknown key "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; ` +
          'its keys are the flags without dashes (run with --help to see them)',
        flag,
      );
    }
    if (onCommandLine.has(key)) continue;
    if (spec.type === 'boolean') {
      if (typeof value !== 'boolean') throw new UsageError(`--${flag} ${path}: "${key}" must be true or false`, key);
      if (value) fromFile.push(`--${key}`);
    } else if (Array.isArray(value)) fromFile.push(`--${key}=${value.join(',')}`);
    else if (typeof value === 'string' || typeof value === 'number') fromFile.push(`--${key}=${String(value)}`);
    else throw new UsageError(`--${flag} ${path}: "${key}" must be a string, a number or a list`, key);
  }
  return [...fromFile, ...argv];
}

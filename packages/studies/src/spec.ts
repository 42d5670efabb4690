// A study file (JSON): a named list of a trainer's runs, given as a base, grids and explicit runs of its train flags.
import { UsageError, type FlagSpec } from '@grassflow/training';

/** A train flag's value in a study file: as JSON gives it (an int list as an array). */
export type FlagValue = string | number | boolean | number[];
/** One run's train flags, by flag name without dashes (e.g. { model: 'grassmann', 'd-model': 64, seed: 2 }). */
export type RunFlags = Record<string, FlagValue>;

/**
 * The study file:
 * { "name": "cpu-study", "description"?: "…", "base"?: {flags}, "grid"?: {flag: [values]} | [{flag: [values]}, …],
 *   "runs"?: [{flags}, …] }.
 * Each grid is a cartesian product (the first field varies slowest) over `base`; each of `runs` is one run over `base`;
 * with neither, `base` is the one run.
 */
export interface StudySpec {
  name: string;
  description?: string;
  base: RunFlags;
  grid: RunGrid[];
  runs: RunFlags[];
  /**
   * Score each finished run on its held-out data (default true; what that is, the trainer says). false: a study of
   * many tiny runs (the project's tests) where that scoring would cost more than the training.
   */
  heldOut: boolean;
  /**
   * Training fields that may differ between the runs of two kinds that are paired (default none): ["lr", "minLr"]
   * compares each kind at its own tuned learning rate, as a budget ladder does.
   */
  pairAcross: string[];
}
/** A grid: every combination of the listed values. */
export type RunGrid = Record<string, FlagValue[]>;

/** One run of the expanded study: its flags and where in the file it comes from (for messages). */
export interface StudyEntry {
  flags: RunFlags;
  where: string;
}

/** What a trainer lets a study file set: its train flags, those of a sitting (refused), the pairable fields. */
export interface StudyFlags {
  /** The trainer's train flags (a study checks each value's JSON type against its spec). */
  flags: Readonly<Record<string, FlagSpec>>;
  /** Flags of a sitting, not of a run (`study run` takes them or sets them itself): refused in a study file. */
  sitting: readonly string[];
  /** Training fields a study may pair across (`pairAcross`). */
  pairable: readonly string[];
}

/** The flags a study file may set: the train flags less those of a sitting. */
export function studyFlagNames(f: StudyFlags): string[] {
  return Object.keys(f.flags).filter((k) => !f.sitting.includes(k));
}

const TOP_FIELDS = ['name', 'description', 'base', 'grid', 'runs', 'heldOut', 'pairAcross'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Check one flag value's JSON type against its spec (ranges and choices are parseFlags' to check). */
function checkValue(f: StudyFlags, file: string, where: string, name: string, v: unknown, index?: number): FlagValue {
  const at = `${file}: ${where}.${name}${index === undefined ? '' : `[${index}]`}`;
  if (f.sitting.includes(name)) {
    throw new UsageError(`${at}: --${name} belongs to a sitting, not to a run (give it to \`study run\`)`, name);
  }
  const spec = f.flags[name];
  if (spec === undefined) {
    throw new UsageError(`${at}: not a train flag; a study sets these: ${studyFlagNames(f).join(', ')}`, name);
  }
  const ok =
    spec.type === 'string'
      ? typeof v === 'string'
      : spec.type === 'boolean'
        ? typeof v === 'boolean'
        : spec.type === 'int-list'
          ? Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number')
          : typeof v === 'number';
  if (!ok) {
    const want = { string: 'a string', boolean: 'true or false', 'int-list': 'a list of integers', int: 'a number' };
    throw new UsageError(`${at}: must be ${want[spec.type === 'float' ? 'int' : spec.type]}, got ${JSON.stringify(v)}`);
  }
  return v as FlagValue;
}

function readFlags(f: StudyFlags, file: string, where: string, v: unknown): RunFlags {
  if (!isObject(v)) throw new UsageError(`${file}: ${where} must be an object of train flags, e.g. { "seed": 1 }`);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, checkValue(f, file, where, k, x)]));
}

function readGrid(f: StudyFlags, file: string, where: string, v: unknown): RunGrid {
  if (!isObject(v) || Object.keys(v).length === 0) {
    throw new UsageError(`${file}: ${where} must be an object of flag → list of values, e.g. { "seed": [1, 2, 3] }`);
  }
  return Object.fromEntries(
    Object.entries(v).map(([k, xs]) => {
      if (!Array.isArray(xs) || xs.length === 0) {
        throw new UsageError(`${file}: ${where}.${k} must be a non-empty list of values, e.g. [1, 2, 3]`, k);
      }
      return [k, xs.map((x, i) => checkValue(f, file, where, k, x, i))];
    }),
  );
}

/**
 * Parse and check a study file's JSON (`file` names it in messages) against a trainer's flags; every error names
 * the field.
 */
export function parseStudy(json: unknown, file: string, f: StudyFlags): StudySpec {
  if (!isObject(json)) throw new UsageError(`${file}: a study file is a JSON object with "name" and runs`);
  for (const k of Object.keys(json)) {
    if (!TOP_FIELDS.includes(k))
      throw new UsageError(`${file}: unknown field "${k}"; fields: ${TOP_FIELDS.join(', ')}`);
  }
  const { name, description } = json;
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    throw new UsageError(
      `${file}: name must be a string of letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`,
    );
  }
  if (description !== undefined && typeof description !== 'string') {
    throw new UsageError(`${file}: description must be a string`);
  }
  const base = json['base'] === undefined ? {} : readFlags(f, file, 'base', json['base']);
  const g = json['grid'];
  const grid =
    g === undefined
      ? []
      : Array.isArray(g)
        ? g.map((x, i) => readGrid(f, file, `grid[${i}]`, x))
        : [readGrid(f, file, 'grid', g)];
  const r = json['runs'];
  if (r !== undefined && !Array.isArray(r))
    throw new UsageError(`${file}: runs must be a list of objects of train flags`);
  const runs = (r ?? []).map((x: unknown, i: number) => readFlags(f, file, `runs[${i}]`, x));
  const heldOut = json['heldOut'] ?? true;
  if (typeof heldOut !== 'boolean') throw new UsageError(`${file}: heldOut must be true or false`);
  const pairAcross = json['pairAcross'] ?? [];
  if (!Array.isArray(pairAcross) || !pairAcross.every((x) => typeof x === 'string' && f.pairable.includes(x))) {
    throw new UsageError(
      `${file}: pairAcross must be a list of training fields among ${f.pairable.join(', ')}, got ${JSON.stringify(pairAcross)}`,
    );
  }
  return {
    name,
    ...(description === undefined ? {} : { description }),
    base,
    grid,
    runs,
    heldOut,
    pairAcross: pairAcross as string[],
  };
}

/** Every combination of a grid's values, the first field varying slowest. */
function product(grid: RunGrid): RunFlags[] {
  return Object.entries(grid).reduce<RunFlags[]>(
    (acc, [k, xs]) => acc.flatMap((flags) => xs.map((x) => ({ ...flags, [k]: x }))),
    [{}],
  );
}

/** The study's runs in order: each grid's combinations, then the explicit runs, each over `base`. */
export function expandStudy(spec: StudySpec): StudyEntry[] {
  const out: StudyEntry[] = [];
  spec.grid.forEach((g, i) =>
    product(g).forEach((flags, j) =>
      out.push({
        flags: { ...spec.base, ...flags },
        where: `${spec.grid.length > 1 ? `grid[${i}]` : 'grid'} #${j + 1}`,
      }),
    ),
  );
  spec.runs.forEach((flags, i) => out.push({ flags: { ...spec.base, ...flags }, where: `runs[${i}]` }));
  if (out.length === 0) out.push({ flags: { ...spec.base }, where: 'base' });
  return out;
}

/** The train argv of a run's flags: `--name value` (an int list comma-joined, `true` as the bare flag). */
export function flagsToArgv(flags: RunFlags): string[] {
  return Object.entries(flags).flatMap(([k, v]) =>
    v === false ? [] : v === true ? [`--${k}`] : [`--${k}`, Array.isArray(v) ? v.join(',') : String(v)],
  );
}

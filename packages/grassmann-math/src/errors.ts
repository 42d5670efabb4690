// Typed input errors and the validators every public function runs before it computes.

/**
 * Thrown when an argument has the wrong shape, length or value.
 * `argument` names the parameter, `expected` says what it must be, `received` what was passed.
 */
export class GrassmannInputError extends Error {
  override readonly name = 'GrassmannInputError';
  /** Name of the offending parameter, e.g. `"u"` or `"zPrev"`. */
  readonly argument: string;
  /** The shape or value the parameter must have, e.g. `"a finite vector of length 4"`. */
  readonly expected: string;
  /** A short description of what was actually passed. */
  readonly received: string;

  constructor(fn: string, argument: string, expected: string, received: string, hint?: string) {
    super(
      `${fn}: argument "${argument}" must be ${expected}; got ${received}.` + (hint !== undefined ? ` ${hint}` : ''),
    );
    this.argument = argument;
    this.expected = expected;
    this.received = received;
  }
}

/** Numeric vectors accepted everywhere: plain arrays, Float64Array, Float32Array. */
export type NumericVector = ArrayLike<number>;

/** One-line description of a value for error messages (never the full contents). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return String(value);
  if (ArrayBuffer.isView(value) && 'length' in value) {
    return `${value.constructor.name} of length ${(value as unknown as ArrayLike<number>).length}`;
  }
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return typeof value;
}

function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  if (Array.isArray(value)) return true;
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

/**
 * Checks that `value` is a non-empty array-like of finite numbers (of length `length` when given)
 * and returns it typed.
 */
export function checkVector(fn: string, name: string, value: unknown, length?: number): NumericVector {
  const expected = length === undefined ? 'a non-empty array of finite numbers' : `a finite vector of length ${length}`;
  if (!isArrayLike(value)) throw new GrassmannInputError(fn, name, expected, describe(value));
  if (value.length === 0) throw new GrassmannInputError(fn, name, expected, 'an empty vector (length 0)');
  if (length !== undefined && value.length !== length) {
    throw new GrassmannInputError(fn, name, expected, `length ${value.length}`);
  }
  for (let i = 0; i < value.length; i++) {
    const x = value[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new GrassmannInputError(fn, name, expected, `${String(x)} at index ${i}`);
    }
  }
  return value as NumericVector;
}

/** Checks that `value` is an integer in [min, max] and returns it. */
export function checkInteger(
  fn: string,
  name: string,
  value: unknown,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer in [${min}, ${max}]`;
    throw new GrassmannInputError(fn, name, range, describe(value));
  }
  return value;
}

// A corpus small enough to memorize in a few dozen steps: one sentence, repeated line by line.
export const CORPUS = Array.from({ length: 8 }, () => 'the cat sat on the mat and the dog sat on the log').join('\n');

/** Consecutive windows of `length + 1` ids: inputs are the first `length`, targets the last `length`. */
export function windows(ids: Int32Array, length: number, count: number): { inputs: number[][]; targets: number[][] } {
  const starts = Array.from({ length: count }, (_, i) => (i * 5) % (ids.length - length - 1));
  return {
    inputs: starts.map((s) => Array.from(ids.subarray(s, s + length))),
    targets: starts.map((s) => Array.from(ids.subarray(s + 1, s + length + 1))),
  };
}

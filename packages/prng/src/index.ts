// @grassflow/prng: a small seeded PRNG (SplitMix32 seeding + xoshiro128**) with an exportable state, and seeded
// shuffles. No imports and no node: module, so browsers load it as it is.

/** Serializable PRNG state: four unsigned 32-bit words. */
export type PrngState = readonly [number, number, number, number];

/**
 * SplitMix32 step (Vigna): z = (s += 0x9e3779b9); z = (z ^ z>>>16)·0x85ebca6b; z = (z ^ z>>>13)·0xc2b2ae35; z ^ z>>>16.
 * Used to expand seeds and to mix (seed, epoch) pairs into independent streams.
 */
export function splitmix32(state: number): { value: number; next: number } {
  const next = (state + 0x9e3779b9) >>> 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  z = (z ^ (z >>> 16)) >>> 0;
  return { value: z, next };
}

/** Mix several non-negative integers (< 2^32 each; larger ones are folded) into one 32-bit seed. */
export function mixSeed(...parts: readonly number[]): number {
  let s = 0x6a09e667;
  for (const p of parts) {
    const lo = p >>> 0;
    const hi = Math.floor(p / 0x100000000) >>> 0;
    s = splitmix32((s ^ lo) >>> 0).value;
    s = splitmix32((s ^ hi) >>> 0).value;
  }
  return s;
}

/**
 * xoshiro128** (Blackman & Vigna 2018): 32-bit outputs, period 2^128 − 1.
 * `state` can be read and restored to continue the exact stream (`new Prng(saved.state)`).
 */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Seed from one 32-bit integer (expanded with SplitMix32) or restore a saved state. */
  constructor(seedOrState: number | PrngState) {
    if (typeof seedOrState === 'number') {
      let sm = seedOrState >>> 0;
      const words: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = splitmix32(sm);
        sm = r.next;
        words.push(r.value);
      }
      [this.s0, this.s1, this.s2, this.s3] = words as [number, number, number, number];
    } else {
      [this.s0, this.s1, this.s2, this.s3] = seedOrState.map((w) => w >>> 0) as [number, number, number, number];
    }
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // the all-zero state is a fixed point
  }

  /** The current state; `new Prng(p.state)` continues the same stream. */
  get state(): PrngState {
    return [this.s0, this.s1, this.s2, this.s3];
  }

  /** Next unsigned 32-bit integer: rotl(s1·5, 7)·9, then the xoshiro128 state update. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform integer in [0, n) without modulo bias (rejection sampling), n ≤ 2^32. */
  nextInt(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 0x100000000)
      throw new RangeError(`nextInt: n must be an integer in [1, 2^32], got ${n}`);
    const limit = 0x100000000 - (0x100000000 % n); // largest multiple of n ≤ 2^32
    for (;;) {
      const r = this.nextUint32();
      if (r < limit) return r % n;
    }
  }

  /** Uniform float in [0, 1) with 32 random bits. */
  nextFloat(): number {
    return this.nextUint32() / 0x100000000;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Fisher–Yates permutation of 0..n−1 drawn from `rng` (uniform over all n! orders). */
export function permutation(n: number, rng: Prng): Uint32Array {
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    const t = p[i] as number;
    p[i] = p[j] as number;
    p[j] = t;
  }
  return p;
}

/** The order of `n` items in a given epoch: a permutation seeded by mixSeed(seed, epoch). */
export function epochPermutation(n: number, seed: number, epoch: number): Uint32Array {
  return permutation(n, new Prng(mixSeed(seed, epoch)));
}

// Seeded randomness with a serialisable state, and deterministic tfjs dropout.
import { mixSeed, Prng, type PrngState } from '@grassflow/prng';

/** A seeded stream (xoshiro128**) whose state goes into checkpoints: restored, it continues identically. */
export class TrainingRng {
  private prng: Prng;

  /** From a seed (uint32) or a saved {@link TrainingRng.state}. */
  constructor(seedOrState: number | PrngState) {
    if (
      typeof seedOrState === 'number' &&
      (!Number.isInteger(seedOrState) || seedOrState < 0 || seedOrState > 0xffffffff)
    ) {
      throw new RangeError(`seed must be an integer in [0, 2^32), got ${seedOrState}`);
    }
    this.prng = new Prng(seedOrState);
  }

  /** The state to store; `new TrainingRng(state)` continues the same stream. */
  get state(): PrngState {
    return this.prng.state;
  }

  /** Next uint32. */
  nextUint32(): number {
    return this.prng.nextUint32();
  }

  /** Uniform float in [0, 1). */
  nextFloat(): number {
    return this.prng.nextFloat();
  }
}

/**
 * Run `fn` with `Math.random` replaced by a stream seeded with `seed`, then restore it. gpu-layers' dropout and
 * tfjs's unseeded random ops (tf.randomUniform…) draw their seeds from Math.random, so a forward pass with dropout
 * becomes a pure function of (weights, batch, seed). `fn` must be synchronous.
 */
export function withSeededRandom<T>(seed: number, fn: () => T): T {
  const saved = Math.random;
  const prng = new Prng(mixSeed(seed));
  Math.random = () => prng.nextFloat();
  try {
    return fn();
  } finally {
    Math.random = saved;
  }
}

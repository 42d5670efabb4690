// Learning-rate schedule as a pure function of the step: linear warmup, cosine decay, floor.

/** Parameters of {@link warmupCosineLr}. */
export interface WarmupCosineOptions {
  /** Peak learning rate, reached at the end of warmup. */
  peakLr: number;
  /** Steps of linear warmup (0: start at the peak). */
  warmupSteps: number;
  /** Total optimizer steps of the run; the cosine reaches the floor here. */
  totalSteps: number;
  /** Floor the cosine decays to, and the rate after totalSteps (default peakLr / 10, as nanoGPT). */
  minLr?: number;
}

/**
 * Learning rate of optimizer step s (0-based, the s-th update):
 *   1. warmup, s < W:        lr = peak · (s + 1) / W
 *   2. cosine, W ≤ s ≤ T:    lr = min + ½(1 + cos(π · (s − W)/(T − W))) · (peak − min)
 *   3. floor, s > T:         lr = min
 * (nanoGPT's get_lr, with W = warmupSteps, T = totalSteps.)
 */
export function warmupCosineLr(step: number, opts: WarmupCosineOptions): number {
  const { peakLr, warmupSteps: W, totalSteps: T } = opts;
  const minLr = opts.minLr ?? peakLr / 10;
  if (!Number.isInteger(step) || step < 0) throw new RangeError(`step must be an integer >= 0, got ${step}`);
  if (!(peakLr > 0) || !Number.isFinite(peakLr))
    throw new RangeError(`peakLr must be a finite number > 0, got ${peakLr}`);
  if (!Number.isInteger(W) || W < 0) throw new RangeError(`warmupSteps must be an integer >= 0, got ${W}`);
  if (!Number.isInteger(T) || T < 1) throw new RangeError(`totalSteps must be an integer >= 1, got ${T}`);
  if (!(minLr >= 0 && minLr <= peakLr)) throw new RangeError(`minLr must be in [0, peakLr = ${peakLr}], got ${minLr}`);
  if (step < W) return (peakLr * (step + 1)) / W; // 1. linear warmup
  if (step > T || T <= W) return minLr; // 3. floor (also when warmup covers the whole run)
  const progress = (step - W) / (T - W); // in [0, 1]
  return minLr + 0.5 * (1 + Math.cos(Math.PI * progress)) * (peakLr - minLr); // 2. cosine
}

// One rung of the ladder: train a fresh model on a synthetic task, then score it greedily on held-out sequences.
import * as tf from '@tensorflow/tfjs-core';
import { SyntheticTask, type SyntheticFamily } from '@grassflow/datasets';
import { countParams, createModel, crossEntropy, type LanguageModel, type ModelConfig } from '@grassflow/gpu-layers';
import { createOptimizer, lrSchedule, namedParameters, trainStep, TrainingRng } from '@grassflow/training';
import type { OptimizerConfig } from '@grassflow/training';

/**
 * Next-token loss on the positions the rule determines only: ℓ = Σ_{b,t} m_bt · nll_bt / Σ_{b,t} m_bt, with
 * nll_bt = logsumexp(logits[b,t,:]) − logits[b,t,y_bt] (the fused {@link crossEntropy} over the gathered rows).
 * Free positions (random prefix tokens, recall keys) carry no learnable signal and would only add a constant.
 */
export function maskedLmLoss(logits: tf.Tensor3D, targets: Int32Array, mask: Uint8Array): tf.Scalar {
  const [B, L, V] = logits.shape;
  if (targets.length !== B * L || mask.length !== B * L) {
    throw new RangeError(
      `maskedLmLoss expects targets and mask of B·L = ${B * L} entries, got ${targets.length} and ${mask.length}`,
    );
  }
  const rows: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1) rows.push(i);
  if (rows.length === 0)
    throw new RangeError('maskedLmLoss: the mask marks no position; the batch holds nothing to learn');
  return tf.tidy(() => {
    const idx = tf.tensor1d(rows, 'int32'); // [M] flat positions b·L + t
    const picked = tf.gather(tf.reshape(logits, [B * L, V]), idx); // [M, V]
    const y = tf.tensor1d(
      Int32Array.from(rows, (i) => targets[i] as number),
      'int32',
    ); // [M]
    return crossEntropy(picked as tf.Tensor2D, y);
  });
}

/** Greedy scores of some sequences, summed (see {@link scoreLogits}). */
export interface MaskedScore {
  /** Determined positions whose argmax equals the target. */
  correct: number;
  /** Determined positions scored. */
  determined: number;
  /** Rows with at least one determined position. */
  sequences: number;
  /** Of those, rows whose every determined position is right. */
  solved: number;
}

/** Index of the largest of v[from .. from + n) (the first on ties; −1 when every value is NaN). */
function argmax(v: Float32Array, from: number, n: number): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let j = 0; j < n; j++) {
    const x = v[from + j] as number;
    if (x > bestValue || (best === -1 && x === -Infinity)) {
      best = j;
      bestValue = x;
    }
  }
  return best;
}

/**
 * Greedy next-token scoring on the determined positions: prediction p_bt = argmax_v logits[b,t,v] (first index on
 * ties), correct where m_bt = 1 and p_bt = y_bt; a row is solved when all its determined positions are correct.
 * logits is row-major (B, L, V); y and mask are (B, L).
 */
export function scoreLogits(
  logits: Float32Array,
  shape: readonly [number, number, number],
  y: Int32Array,
  mask: Uint8Array,
): MaskedScore {
  const [B, L, V] = shape;
  if (logits.length !== B * L * V)
    throw new RangeError(
      `scoreLogits: logits hold ${logits.length} values, shape [${B}, ${L}, ${V}] needs ${B * L * V}`,
    );
  if (y.length !== B * L || mask.length !== B * L)
    throw new RangeError(
      `scoreLogits: y and mask must hold B·L = ${B * L} entries, got ${y.length} and ${mask.length}`,
    );
  const s: MaskedScore = { correct: 0, determined: 0, sequences: 0, solved: 0 };
  for (let b = 0; b < B; b++) {
    let rowDetermined = 0;
    let rowCorrect = 0;
    for (let t = 0; t < L; t++) {
      const i = b * L + t;
      if (mask[i] !== 1) continue;
      rowDetermined++;
      if (argmax(logits, i * V, V) === y[i]) rowCorrect++;
    }
    s.correct += rowCorrect;
    s.determined += rowDetermined;
    if (rowDetermined > 0) {
      s.sequences++;
      if (rowCorrect === rowDetermined) s.solved++;
    }
  }
  return s;
}

/** Sum of two scores. */
export function addScores(a: MaskedScore, b: MaskedScore): MaskedScore {
  return {
    correct: a.correct + b.correct,
    determined: a.determined + b.determined,
    sequences: a.sequences + b.sequences,
    solved: a.solved + b.solved,
  };
}

/**
 * Score `model` on held-out sequences 0 .. n − 1 of `task`, `batch` rows per forward pass. The logits are read with
 * `await data()` (dataSync throws on webgpu under Node).
 */
export async function scoreModel(
  model: LanguageModel,
  task: SyntheticTask,
  n: number,
  batch = 64,
): Promise<MaskedScore> {
  let total: MaskedScore = { correct: 0, determined: 0, sequences: 0, solved: 0 };
  for (let first = 0; first < n; first += batch) {
    const rows = Math.min(batch, n - first);
    const b = task.batch(first, rows);
    const [B, L] = b.shape;
    const logits = tf.tidy(() => model.apply(tf.tensor2d(b.x, [B, L], 'int32'), { training: false })); // [B, L, V]
    try {
      const values = (await logits.data()) as Float32Array;
      total = addScores(total, scoreLogits(values, [B, L, logits.shape[2]], b.y, b.mask));
    } finally {
      logits.dispose();
    }
  }
  return total;
}

/** One training run of the ladder. */
export interface RungSpec extends OptimizerConfig {
  family: SyntheticFamily;
  level: number;
  model: string;
  modelConfig: ModelConfig;
  /** Seed of the model's initialisation and of the training sequences (the same for every model kind). */
  seed: number;
  steps: number;
  batch: number;
  evalSeqs: number;
  evalSeed: number;
}

/** What one run measured (a row of results.json). */
export interface RungResult {
  level: number;
  model: string;
  seed: number;
  params: number;
  /** correct / determined on the held-out sequences. */
  accuracy: number;
  /** solved / sequences on the held-out sequences. */
  solvedFraction: number;
  score: MaskedScore;
  /** Mean masked training loss of the last 10% of steps (nats). */
  finalLoss: number;
  /** [step, masked training loss] about every steps/50 steps. */
  lossCurve: Array<[number, number]>;
  trainSeconds: number;
  evalSeconds: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Train a fresh model on sequences seed-stream 0, B, 2B, … of the task (B per step, the same order for every model
 * of a seed) with AdamW and warmup + cosine, then score it on `evalSeqs` held-out sequences (task seed `evalSeed`).
 * Returns null when `shouldStop()` becomes true between steps.
 */
export async function runRung(spec: RungSpec, opts: { shouldStop?: () => boolean } = {}): Promise<RungResult | null> {
  const { vocabSize, maxLen } = spec.modelConfig;
  const train = new SyntheticTask({
    family: spec.family,
    level: spec.level,
    seqLen: maxLen,
    vocabSize,
    seed: spec.seed,
  });
  const heldOut = new SyntheticTask({
    family: spec.family,
    level: spec.level,
    seqLen: maxLen,
    vocabSize,
    seed: spec.evalSeed,
  });
  const model = createModel(spec.modelConfig, { seed: spec.seed });
  const optimizer = createOptimizer(namedParameters(model), spec);
  const lrOf = lrSchedule(spec, spec.steps);
  const rng = new TrainingRng(spec.seed);
  const every = Math.max(1, Math.round(spec.steps / 50));
  const tail = Math.max(1, Math.round(spec.steps / 10));
  const lossCurve: Array<[number, number]> = [];
  let tailSum = 0;
  try {
    const t0 = performance.now();
    for (let s = 0; s < spec.steps; s++) {
      if (opts.shouldStop?.() === true) return null;
      const b = train.batch(s * spec.batch, spec.batch);
      const [B, L] = b.shape;
      const lossFn = (): tf.Scalar =>
        maskedLmLoss(model.apply(tf.tensor2d(b.x, [B, L], 'int32'), { training: true }), b.y, b.mask);
      const step = { lr: lrOf(s), clipNorm: spec.clip, randomSeed: rng.nextUint32(), step: s + 1 };
      const { loss } = await trainStep(lossFn, optimizer, step);
      if ((s + 1) % every === 0 || s === 0) lossCurve.push([s + 1, loss]);
      if (s >= spec.steps - tail) tailSum += loss;
      if (s % 8 === 7) await yieldToEventLoop(); // let SIGINT/SIGTERM handlers run
    }
    const trainSeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const score = await scoreModel(model, heldOut, spec.evalSeqs);
    return {
      level: spec.level,
      model: spec.model,
      seed: spec.seed,
      params: countParams(spec.modelConfig),
      accuracy: score.correct / score.determined,
      solvedFraction: score.solved / score.sequences,
      score,
      finalLoss: tailSum / tail,
      lossCurve,
      trainSeconds,
      evalSeconds: (performance.now() - t1) / 1000,
    };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

// Early stopping on validation: the rule, applied to the evaluations of a run so far. The rule is a pure function of
// the (step, value) history, which the trainer state carries, so a resumed run stops at the same evaluation.

/** The early-stopping rule of a run (stored in its config, so a resume applies the same one). */
export interface EarlyStopRule {
  /** Smallest relative improvement that keeps the run going (0.005: 0.5%). */
  minImprovement: number;
  /** Fraction of the steps so far that the improvement is measured over (0.2: the last 20% of the run so far). */
  window: number;
  /** Evaluations a run has made before the rule can stop it. */
  minEvals: number;
}

/** The rule `--early-stop` applies: less than 0.5% better over the last 20% of the run so far, after 5 evaluations. */
export const DEFAULT_EARLY_STOP: Readonly<EarlyStopRule> = { minImprovement: 0.005, window: 0.2, minEvals: 5 };

/** Why a run stopped early: the evaluation that stopped it and the two values compared. */
export interface EarlyStopDecision {
  /** Step of the evaluation at which the rule fired (the run's last step). */
  step: number;
  /** Lowest value of the evaluations at steps ≤ (1 − window)·step, and its step. */
  before: { value: number; step: number };
  /** Lowest value of all evaluations up to `step`, and its step (checkpoints/best). */
  best: { value: number; step: number };
  /** (before − best) / before: the relative improvement over the window, below the rule's minImprovement. */
  improvement: number;
}

/** A value and its step, lowest value first found (the same choice as checkpoints/best: a tie keeps the earlier). */
function lowest(evals: ReadonlyArray<readonly [number, number]>): { value: number; step: number } | null {
  let b: { value: number; step: number } | null = null;
  for (const [step, value] of evals) if (Number.isFinite(value) && (b === null || value < b.value)) b = { value, step };
  return b;
}

/**
 * Whether the run stops at its latest evaluation. `evals` are the run's evaluations so far, [step, value] in step
 * order (lower is better, e.g. validation PPL), the last one at step s. With at least `minEvals` evaluations, let
 * `before` be the lowest value among the evaluations at steps ≤ (1 − window)·s and `best` the lowest among all of
 * them: the run stops when `before` exists and (before − best) / before < minImprovement, i.e. the metric improved by
 * less than minImprovement over the last `window` of the steps so far. Returns the decision, or null to go on.
 */
export function earlyStopDecision(
  evals: ReadonlyArray<readonly [number, number]>,
  rule: EarlyStopRule,
): EarlyStopDecision | null {
  const last = evals[evals.length - 1];
  if (last === undefined || evals.length < rule.minEvals) return null;
  const step = last[0];
  const before = lowest(evals.filter(([s]) => s <= (1 - rule.window) * step));
  const best = lowest(evals);
  if (before === null || best === null) return null;
  const improvement = (before.value - best.value) / before.value;
  return improvement < rule.minImprovement ? { step, before, best, improvement } : null;
}

/** The rule in one line (help texts and reports). */
export function describeEarlyStop(rule: EarlyStopRule): string {
  return (
    `stop at the first evaluation (from the ${rule.minEvals}th on) where the best validation value improved by less ` +
    `than ${rule.minImprovement * 100}% over the last ${rule.window * 100}% of the steps so far (the lowest value up ` +
    `to step s against the lowest up to step ${1 - rule.window}·s), else at the budget`
  );
}

/** A stored rule checked (config.json of a run), or an error that says what is wrong. */
export function checkEarlyStopRule(rule: EarlyStopRule): EarlyStopRule {
  const { minImprovement: m, window: w, minEvals: n } = rule;
  if (!(m > 0 && m < 1) || !(w > 0 && w < 1) || !Number.isInteger(n) || n < 2) {
    throw new Error(
      `early-stop rule ${JSON.stringify(rule)}: minImprovement and window must lie in (0, 1) and minEvals be an ` +
        'integer ≥ 2',
    );
  }
  return rule;
}

// grassflow-lm's ledger records (ledger.jsonl of @grassflow/studies): one per finished run, its key, resolved
// config, provenance and results, checked strictly where reports read them.
import {
  appendLedger as appendAnyLedger,
  readLedger as readAnyLedger,
  runKey,
  type LedgerContents,
  type LedgerFormat,
  type Machine,
  type RunFlags,
} from '@grassflow/studies';
import type { EarlyStopDecision, EarlyStopRule } from '@grassflow/training';
import type { ResolvedRunConfig } from './key.js';
import type { WindowNll } from './windows.js';

/** A split scored whole by the final checkpoint: every target once, in windows of the model's seqLen. */
export interface HeldOutScore {
  tokens: number;
  nll: number;
  ppl: number;
  /** Mean NLL (nats) of the targets at window positions 1 … seqLen, rounded to 1e-4. */
  nllByPosition: number[];
  /** Per-window NLL sums by position band (test: for the paired bootstrap over windows); absent in older records. */
  windows?: WindowNll;
  /**
   * The same split in sliding windows of seqLen with stride 64 (each target scored once, with at least seqLen − 64
   * tokens of context except the first 64): its PPL, NLL by window position and (test) per-window sums.
   */
  sliding?: {
    stride: number;
    tokens: number;
    nll: number;
    ppl: number;
    nllByPosition: number[];
    windows?: WindowNll;
  };
}

/** How a run ended: at its budget, or by the early-stopping rule (which, and the evaluation it fired on). */
export interface RunStop {
  reason: 'budget' | 'early-stop';
  /** The run's last step. */
  step: number;
  /** The rule the run trained under (--early-stop), absent without one. */
  rule?: EarlyStopRule;
  /** The rule's decision, when it ended the run. */
  decision?: EarlyStopDecision;
}

/** The checkpoint the held-out scores are of, and why that one. */
export interface ScoredCheckpoint {
  checkpoint: 'latest' | 'best';
  step: number;
  why: string;
}

/** One finished run. `timing` is the only part that differs between an interrupted-and-resumed and a straight run. */
export interface LedgerRecord {
  format: 'grassflow-lm-study-run';
  formatVersion: 1;
  study: string;
  key: string;
  config: ResolvedRunConfig;
  /** The study file's flags of the run (what a person wrote; `config` is what they resolved to). */
  flags: RunFlags;
  /** Equivalent command (run folder aside). */
  command: string;
  /** Code commit that started the run (config.json's git; `-dirty` with uncommitted changes), null without git. */
  code: string | null;
  backend: { name: string; simd?: boolean; threads?: number; blas?: string; tfjsCore: string };
  machine: Machine;
  params: number;
  totalSteps: number;
  /** Training tokens of the whole run (steps × batch × seqLen). */
  tokens: number;
  /** Validation PPL at the last step (the final evaluation). */
  finalValPpl: number;
  /** Lowest validation PPL of the run (that of checkpoints/best) and its step. */
  bestValPpl: number;
  bestStep: number;
  /**
   * The final checkpoint on all of wiki.valid and wiki.test (absent in records from before held-out scoring; `study
   * rescore` adds it where the run's checkpoint still exists). Selection uses valid; headline numbers are test.
   */
  heldOut?: { valid: HeldOutScore; test: HeldOutScore };
  /** Which checkpoint `heldOut` scored (absent in older records: checkpoints/latest). */
  scored?: ScoredCheckpoint;
  /** How the run ended (absent in older records: at its budget). */
  stop?: RunStop;
  /** Validation PPL against training tokens: [tokens, ppl] of every evaluation. */
  curve: Array<[number, number]>;
  timing: {
    /** Seconds in training steps, summed over sittings (the trainer state's). */
    trainSeconds: number | null;
    /** Wall-clock seconds of the sitting that finished the run (data loading and evaluations included). */
    wallSeconds: number;
    /** Whether that sitting resumed the run from a checkpoint. */
    resumed: boolean;
    finished: string;
  };
}

/**
 * The largest perplexity a record may hold: ln(1e12) = 27.6 nats a token, 2.7 times uniform guessing over 30,522
 * tokens. Only a diverged run scores worse, and its numbers would make means and intervals meaningless (a mean of
 * three PPLs near 1.7e308 is Infinity).
 */
const MAX_PPL = 1e12;

const isCount = (v: unknown, min = 1): boolean => Number.isSafeInteger(v) && (v as number) >= min;
const isSeconds = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const pplProblem = (name: string, v: unknown): string | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 1 && v <= MAX_PPL
    ? null
    : `"${name}" is ${JSON.stringify(v)}, not a perplexity (a number from 1 to ${MAX_PPL})`;

/** What is wrong with a held-out score (`name`: where it is in the record), or null. */
function heldOutProblem(name: string, h: HeldOutScore | undefined): string | null {
  if (typeof h !== 'object' || h === null) return `"${name}" is not a held-out score`;
  const ppl = pplProblem(`${name}.ppl`, h.ppl);
  if (ppl !== null) return ppl;
  if (!isCount(h.tokens)) return `"${name}.tokens" is ${JSON.stringify(h.tokens)}, not a count of tokens`;
  if (typeof h.nll !== 'number' || Math.abs(Math.exp(h.nll) - h.ppl) > 1e-6 * h.ppl)
    return `"${name}.nll" is ${JSON.stringify(h.nll)}, not ln of its ppl ${h.ppl}`;
  if (!Array.isArray(h.nllByPosition) || !h.nllByPosition.every((v) => v === null || Number.isFinite(v)))
    return `"${name}.nllByPosition" is not a list of finite numbers`;
  return null;
}

/** What is wrong with a parsed record (every field reports, statistics and `rescore` read), or null. */
function recordProblem(r: LedgerRecord): string | null {
  const c = r.config as unknown as
    { model?: { kind?: unknown }; training?: { seed?: unknown; batch?: unknown; seqLen?: unknown } } | undefined;
  if (typeof c !== 'object' || c === null || typeof c.model?.kind !== 'string' || !Number.isInteger(c.training?.seed))
    return '"config" lacks model.kind or training.seed';
  if (runKey(r.config) !== r.key) return `"key" ${r.key} is not the key of its "config" (${runKey(r.config)})`;
  for (const f of ['finalValPpl', 'bestValPpl'] as const) {
    const bad = pplProblem(f, r[f]);
    if (bad !== null) return bad;
  }
  if (!isCount(r.params)) return `"params" is ${JSON.stringify(r.params)}, not a count of parameters`;
  if (!isCount(r.totalSteps)) return `"totalSteps" is ${JSON.stringify(r.totalSteps)}, not a count of steps`;
  const { batch, seqLen } = c.training ?? {};
  const tokens = isCount(batch) && isCount(seqLen) ? r.totalSteps * (batch as number) * (seqLen as number) : null;
  if (!isCount(r.tokens) || (tokens !== null && r.tokens !== tokens))
    return `"tokens" is ${JSON.stringify(r.tokens)}, not totalSteps × batch × seqLen${tokens === null ? '' : ` = ${tokens}`}`;
  if (!Number.isSafeInteger(r.bestStep) || r.bestStep < 0 || r.bestStep > r.totalSteps)
    return `"bestStep" is ${JSON.stringify(r.bestStep)}, not a step from 0 to totalSteps ${r.totalSteps}`;
  if (
    !Array.isArray(r.curve) ||
    !r.curve.every((p) => Array.isArray(p) && p.length === 2 && isCount(p[0]) && pplProblem('', p[1]) === null)
  )
    return `"curve" is not a list of [tokens, ppl] pairs (a count of tokens, a perplexity from 1 to ${MAX_PPL})`;
  if (r.heldOut !== undefined)
    for (const split of ['valid', 'test'] as const) {
      const bad = heldOutProblem(`heldOut.${split}`, r.heldOut[split]);
      if (bad !== null) return bad;
    }
  const t = r.timing as Partial<LedgerRecord['timing']> | undefined;
  if (
    typeof t !== 'object' ||
    t === null ||
    !(t.trainSeconds === null || isSeconds(t.trainSeconds)) ||
    !isSeconds(t.wallSeconds) ||
    typeof t.resumed !== 'boolean' ||
    typeof t.finished !== 'string'
  )
    return '"timing" lacks finite trainSeconds (or null), wallSeconds, resumed or finished';
  return null;
}

/** grassflow-lm's records as @grassflow/studies reads and checks them. */
export const LM_LEDGER: LedgerFormat<LedgerRecord> = {
  format: 'grassflow-lm-study-run',
  what: 'grassflow-lm study record',
  problem: recordProblem,
};

/**
 * Read ledger.jsonl (absent: empty). A last line that is not JSON (cut by a crash or a bad merge) is skipped with a
 * warning; a bad line before the last is an error naming it, and so is a record whose fields are not what reports
 * read (a PPL that is null or not a number, a missing config: checked strictly, as a merge by hand can leave them).
 * A key seen twice keeps its first record (warning).
 */
export function readLedger(path: string): Promise<LedgerContents<LedgerRecord>> {
  return readAnyLedger(path, LM_LEDGER);
}

/** Add one record (or replace the record of its key), the ledger written whole and atomically. */
export function appendLedger(path: string, record: LedgerRecord): Promise<void> {
  return appendAnyLedger(path, record, LM_LEDGER);
}

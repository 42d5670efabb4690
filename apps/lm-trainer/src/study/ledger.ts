// grassflow-lm's ledger records (ledger.jsonl of @grassflow/studies): one per finished run, its key, resolved
// config, provenance and results, checked strictly where reports read them.
import {
  appendLedger as appendAnyLedger,
  readLedger as readAnyLedger,
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

const positive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** What is wrong with a parsed record (the fields reports and statistics read), or null. */
function recordProblem(r: LedgerRecord): string | null {
  const c = r.config as unknown as { model?: { kind?: unknown }; training?: { seed?: unknown } } | undefined;
  if (typeof c !== 'object' || c === null || typeof c.model?.kind !== 'string' || !Number.isInteger(c.training?.seed))
    return '"config" lacks model.kind or training.seed';
  for (const f of ['finalValPpl', 'bestValPpl'] as const)
    if (!positive(r[f])) return `"${f}" is ${JSON.stringify(r[f])}, not a positive number`;
  if (!Array.isArray(r.curve) || !r.curve.every((p) => Array.isArray(p) && p.length === 2 && p.every(positive)))
    return '"curve" is not a list of [tokens, ppl] pairs of positive numbers';
  if (r.heldOut !== undefined)
    for (const split of ['valid', 'test'] as const) {
      const h = r.heldOut[split] as HeldOutScore | undefined;
      if (h === undefined || !positive(h.ppl) || !positive(h.tokens) || !Array.isArray(h.nllByPosition))
        return `"heldOut.${split}" lacks a positive ppl, tokens or its nllByPosition`;
    }
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

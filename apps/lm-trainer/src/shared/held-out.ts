// What a checkpoint of a run scored on wiki.valid and wiki.test, as a metrics.jsonl record of the run itself: where
// `export` finds it for the model card. `compare` records its best checkpoint on the first --eval-tokens tokens;
// `study run` (and `study rescore`) the latest on all of both splits.
import type { MetricRecord } from '@grassflow/training';

/** The `heldout` record of the checkpoint at `step`, scored by `by`; `wholeSplit`: every target of both splits. */
export function heldOutMetric(
  step: number,
  valid: { ppl: number; tokens: number },
  test: { ppl: number; tokens: number },
  by: string,
  wholeSplit = false,
): MetricRecord {
  return {
    type: 'heldout',
    step,
    by,
    val_ppl: valid.ppl,
    val_tokens: valid.tokens,
    test_ppl: test.ppl,
    test_tokens: test.tokens,
    ...(wholeSplit ? { whole_split: 1 } : {}),
  };
}

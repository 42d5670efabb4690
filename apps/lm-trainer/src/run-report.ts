// report.md of one run: final numbers, training loss and validation perplexity curves.
import { writeReport, type MetricRecord, type RunFolder } from '@grassflow/training';
import type { RunConfig } from './run-training.js';

/** The numbers a report shows for a run, read from metrics.jsonl. */
export interface RunSummary {
  steps: number;
  tokens: number;
  lastLoss: number | null;
  lastValPpl: number | null;
  bestValPpl: number | null;
  bestStep: number | null;
  tokensPerSec: number | null;
  train: Array<[number, number]>;
  valid: Array<[number, number]>;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Summarise metrics records: last train loss, validation PPL curve and best, median tokens/s of the records after step 1 (warm-up). */
export function summarise(records: readonly MetricRecord[]): RunSummary {
  const train = records.filter((r) => r.type === 'train');
  const evals = records.filter((r) => r.type === 'eval' && typeof r['val_ppl'] === 'number');
  const last = train[train.length - 1];
  const best = evals.reduce<MetricRecord | null>((b, r) => (b === null || (r['val_ppl'] as number) < (b['val_ppl'] as number) ? r : b), null);
  return {
    steps: last?.step ?? 0,
    tokens: (last?.['tokens'] as number | undefined) ?? 0,
    lastLoss: (last?.['loss'] as number | undefined) ?? null,
    lastValPpl: (evals[evals.length - 1]?.['val_ppl'] as number | undefined) ?? null,
    bestValPpl: (best?.['val_ppl'] as number | undefined) ?? null,
    bestStep: best?.step ?? null,
    tokensPerSec: median(train.filter((r) => r.step > 1).map((r) => r['tokens_per_s'] as number)),
    train: train.map((r) => [r.step, r['loss'] as number]),
    valid: evals.map((r) => [r.step, r['val_ppl'] as number]),
  };
}

/** Write report.md (+ loss.svg/png, val-ppl.svg/png) into the run folder. */
export async function writeRunReport(run: RunFolder, cfg: RunConfig): Promise<string> {
  const s = summarise(await run.readMetrics());
  const m = cfg.model;
  return writeReport(run.dir, {
    title: `${cfg.modelKind} on WikiText-2 (${cfg.preset})`,
    intro: [
      `Command: \`${cfg.command}\``,
      `Model: ${m.kind}${m.kind === 'transformer' ? ` (${m.attention})` : ` (r ${m.r}, offsets ${JSON.stringify(m.offsets)})`}, ${m.nLayers} layers, d ${m.dModel}, ` +
        `d_ff ${m.dFF}, L ${m.maxLen}, V ${m.vocabSize}, ${m.norm}-LN, dropout ${m.dropout}; ${cfg.params.toLocaleString('en-US')} parameters.`,
      `Training: ${cfg.totalSteps} steps of ${cfg.training.batch}×${cfg.training.block} tokens, AdamW (β ${cfg.training.beta1}/${cfg.training.beta2}, ` +
        `weight decay ${cfg.training.weightDecay}), lr ${cfg.training.lr} with ${cfg.training.warmup} warmup steps and cosine decay to ${cfg.training.minLr}, ` +
        `clip ${cfg.training.clip}, seed ${cfg.training.seed}. Tokenizer ${cfg.data.tokenizer}; validation on ${cfg.data.evalTokens.toLocaleString('en-US')} of ` +
        `${cfg.data.validTokens.toLocaleString('en-US')} wiki.valid tokens. Backend ${cfg.backend.name}; git ${cfg.git ?? 'unknown'}.`,
    ],
    table: {
      columns: ['steps', 'train tokens', 'last train loss', 'last val PPL', 'best val PPL', 'best at step', 'train tokens/s (median)'],
      rows: [[s.steps, s.tokens, s.lastLoss, s.lastValPpl, s.bestValPpl, s.bestStep, s.tokensPerSec === null ? null : Math.round(s.tokensPerSec)]],
    },
    charts: [
      { file: 'loss', chart: { title: 'Training loss', xLabel: 'step', yLabel: 'cross-entropy (nats)', series: [{ name: cfg.modelKind, points: s.train }] } },
      { file: 'val-ppl', chart: { title: 'Validation perplexity', xLabel: 'step', yLabel: 'PPL', logY: true, series: [{ name: cfg.modelKind, points: s.valid }] } },
    ],
    notes: ['Test perplexity: `grassflow-lm eval --checkpoint ' + run.bestCheckpoint + ' --split test`.'],
  });
}

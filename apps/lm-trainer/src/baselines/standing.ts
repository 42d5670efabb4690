// Where a model's perplexity stands against the n-gram baselines, in words for reports.
import type { BaselineResult } from './ngram.js';

/** The reference rows reports show: unigram, bigram (KN), trigram (KN). */
export const REFERENCE_BASELINES = ['unigram', 'bigram (KN)', 'trigram (KN)'] as const;

/** The reference rows of `results` (in REFERENCE_BASELINES order; missing ones left out). */
export function referenceBaselines(results: readonly BaselineResult[]): BaselineResult[] {
  return REFERENCE_BASELINES.flatMap((name) => results.filter((r) => r.name === name));
}

/**
 * "above unigram (826.8)", "between unigram (826.8) and bigram (KN) (244.9)", "below trigram (KN) (201.7)": the
 * reference baselines sorted from the highest PPL down, and the gap the model's PPL falls in.
 */
export function standingAgainst(ppl: number, results: readonly BaselineResult[]): string {
  const refs = referenceBaselines(results).sort((a, b) => b.ppl - a.ppl);
  const label = (r: BaselineResult): string => `${r.name} (${r.ppl.toFixed(1)})`;
  const first = refs[0];
  const last = refs[refs.length - 1];
  if (first === undefined || last === undefined || !Number.isFinite(ppl)) return 'no baseline to compare with';
  if (ppl >= first.ppl) return `above ${label(first)}`;
  if (ppl < last.ppl) return `below ${label(last)}`;
  for (let i = 0; i + 1 < refs.length; i++) {
    const hi = refs[i] as BaselineResult;
    const lo = refs[i + 1] as BaselineResult;
    if (ppl < hi.ppl && ppl >= lo.ppl) return `between ${label(hi)} and ${label(lo)}`;
  }
  return `below ${label(last)}`;
}

// Where a model's perplexity stands against the n-gram baselines, in words for reports.
import type { BaselineResult } from './ngram.js';

/** The reference rows reports show: unigram, bigram (KN), trigram (KN). */
export const REFERENCE_BASELINES = ['unigram', 'bigram (KN)', 'trigram (KN)'] as const;

/** The reference rows of `results` (in REFERENCE_BASELINES order; missing ones left out). */
export function referenceBaselines(results: readonly BaselineResult[]): BaselineResult[] {
  return REFERENCE_BASELINES.flatMap((name) => results.filter((r) => r.name === name));
}

/**
 * Within this relative distance of a baseline's PPL a model stands "at" it: 5% is well inside what another seed moves
 * a model here (sd 6–7 PPL at 400), and a model at the unigram's level has learnt little beyond token frequencies.
 */
export const AT_BASELINE = 0.05;

/**
 * "above unigram (826.8)", "between unigram (826.8) and bigram (KN) (244.9)", "below trigram (KN) (201.7)": the
 * reference baselines sorted from the highest PPL down, and the gap the model's PPL falls in; "at the level of
 * unigram (826.8), within 5%: …" when it is within {@link AT_BASELINE} of one of them.
 */
export function standingAgainst(ppl: number, results: readonly BaselineResult[]): string {
  const refs = referenceBaselines(results).sort((a, b) => b.ppl - a.ppl);
  const label = (r: BaselineResult): string => `${r.name} (${r.ppl.toFixed(1)})`;
  const first = refs[0];
  const last = refs[refs.length - 1];
  if (first === undefined || last === undefined || !Number.isFinite(ppl)) return 'no baseline to compare with';
  const at = refs.find((r) => Math.abs(ppl / r.ppl - 1) <= AT_BASELINE);
  if (at !== undefined) {
    const what = at === first ? ': it has learnt little beyond what that baseline knows' : '';
    return `at the level of ${label(at)}, within ${AT_BASELINE * 100}%${what}`;
  }
  if (ppl >= first.ppl) return `above ${label(first)}`;
  if (ppl < last.ppl) return `below ${label(last)}`;
  for (let i = 0; i + 1 < refs.length; i++) {
    const hi = refs[i] as BaselineResult;
    const lo = refs[i + 1] as BaselineResult;
    if (ppl < hi.ppl && ppl >= lo.ppl) return `between ${label(hi)} and ${label(lo)}`;
  }
  return `below ${label(last)}`;
}

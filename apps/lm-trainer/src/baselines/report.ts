// The n-gram baselines in reports: reference lines for validation-PPL charts and sentences on where models stand.
import type { ChartSeries } from '@grassflow/training';
import { loadRunData, loadTokenizer, type TextSource, type TokenizerKind } from '../shared/corpus.js';
import { cachedNgramBaselines } from './cache.js';
import type { BaselineResult } from './ngram.js';
import { referenceBaselines, standingAgainst } from './standing.js';

/**
 * One flat two-point series per reference baseline (unigram, bigram (KN), trigram (KN)) from x0 to x1, named as the
 * baseline's table row, to draw beside a validation-PPL curve.
 */
export function baselineSeries(results: readonly BaselineResult[], x0: number, x1: number): ChartSeries[] {
  return referenceBaselines(results).map((r) => ({
    name: r.name,
    points: [
      [x0, r.ppl],
      [x1, r.ppl],
    ],
  }));
}

/** The x range of the points of `series` ([0, 1] when they hold none). */
export function xRange(series: readonly ChartSeries[]): [number, number] {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  return xs.length === 0 ? [0, 1] : [Math.min(...xs), Math.max(...xs)];
}

/** "- grassmann: validation PPL 1007.2, above unigram (826.8)." for each model. */
export function standingLines(
  models: ReadonlyArray<{ name: string; ppl: number }>,
  results: readonly BaselineResult[],
  what = 'validation PPL',
): string {
  return models.map((m) => `- ${m.name}: ${what} ${m.ppl.toFixed(1)}, ${standingAgainst(m.ppl, results)}.`).join('\n');
}

/** Which smoothing each reference baseline uses, one line each. */
export function smoothingLines(results: readonly BaselineResult[]): string {
  return referenceBaselines(results)
    .map((r) => `- ${r.name}: ${r.smoothing}.`)
    .join('\n');
}

/**
 * Baselines fitted on the run's training ids and scored on the first `evalTokens` of its validation ids (wiki.train
 * and wiki.valid, or the --train-file/--valid-file text), through the cache; undefined (with a line on stderr) when
 * they cannot be computed, so a report is still written.
 */
export async function validationBaselines(data: {
  tokenizer: string;
  dataDir: string;
  evalTokens: number;
  trainFiles?: string[] | undefined;
  validFiles?: string[] | undefined;
}): Promise<BaselineResult[] | undefined> {
  try {
    const tok = await loadTokenizer(data.tokenizer as TokenizerKind, data.dataDir);
    const source: TextSource =
      data.trainFiles === undefined
        ? { kind: 'wikitext' }
        : { kind: 'files', train: data.trainFiles, valid: data.validFiles ?? [] };
    const { train: trainIds, valid } = await loadRunData(tok, data.dataDir, source);
    const evalIds = valid.subarray(0, Math.min(valid.length, data.evalTokens));
    const r = await cachedNgramBaselines({ trainIds, evalIds, vocabSize: tok.vocabSize, tokenizerId: tok.id });
    return r.baselines.results;
  } catch (error) {
    process.stderr.write(`n-gram baselines left out of the report: ${(error as Error).message}\n`);
    return undefined;
  }
}

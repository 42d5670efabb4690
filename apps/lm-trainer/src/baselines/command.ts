// `grassflow-lm baselines`: unigram, bigram and trigram count models fitted on wiki.train, scored on a split with
// eval's protocol (every target once), cached per data hash.
import { parseFlags, planCommand, type CliCommand, type FlagSpecs } from '@grassflow/training';
import { dataDirOrThrow, loadTokenizer, type TokenizerKind } from '../shared/corpus.js';
import { COMMON_TRAIN_FLAGS } from '../shared/model-options.js';
import { splitBaselines, type CachedBaselines } from './cache.js';

const BASELINES_FLAGS = {
  'data-dir': COMMON_TRAIN_FLAGS['data-dir'],
  tokenizer: COMMON_TRAIN_FLAGS.tokenizer,
  split: { type: 'string', choices: ['valid', 'test'], default: 'valid', help: 'WikiText-2 split to score' },
  json: { type: 'boolean', help: 'print one line of JSON instead of a table' },
} as const satisfies FlagSpecs;

/** What `baselines` does, resolved once from its flags. */
export interface BaselinesPlan {
  dataDir: string;
  tokenizer: TokenizerKind;
  split: 'valid' | 'test';
  json: boolean;
}

export function planBaselines(argv: readonly string[]): BaselinesPlan {
  const f = parseFlags(argv, BASELINES_FLAGS);
  return {
    dataDir: dataDirOrThrow(f['data-dir']),
    tokenizer: f.tokenizer as TokenizerKind,
    split: f.split as 'valid' | 'test',
    json: f.json === true,
  };
}

/** The baselines as a plain-text table: one line per model with its PPL and smoothing. */
export function formatBaselines(b: CachedBaselines, split: string): string {
  const width = Math.max(...b.results.map((r) => r.name.length));
  const lines = [
    `n-gram baselines on wiki.${split} (${b.evalTokens - 1} targets; fitted on ${b.trainTokens} wiki.train tokens, ` +
      `V = ${b.vocabSize}, tokenizer ${b.tokenizerId})`,
    ...b.results.map((r) => `  ${r.name.padEnd(width)}  PPL ${r.ppl.toFixed(2).padStart(8)}  ${r.smoothing}`),
  ];
  return `${lines.join('\n')}\n`;
}

export async function runBaselinesPlan(plan: BaselinesPlan): Promise<number> {
  const tok = await loadTokenizer(plan.tokenizer, plan.dataDir);
  const r = await splitBaselines(tok, plan.dataDir, plan.split);
  if (plan.json) {
    const { baselines: b } = r;
    const line = {
      split: plan.split,
      tokenizer: b.tokenizerId,
      vocabSize: b.vocabSize,
      trainTokens: b.trainTokens,
      tokens: b.evalTokens - 1,
      cache: r.cache,
      baselines: b.results,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } else {
    process.stdout.write(formatBaselines(r.baselines, plan.split));
    process.stderr.write(`baselines ${r.cache === 'hit' ? 'read from' : 'written to'} ${r.path}\n`);
  }
  return 0;
}

const DESCRIPTION =
  'Unigram (add-0.1), bigram (linear interpolation with it, λ = 0.7) and interpolated modified Kneser–Ney bigram ' +
  'and trigram models fitted on wiki.train and scored like `eval`: every target of the split once, PPL = exp(mean NLL). ' +
  'Cached per data hash in the token-id cache folder (GRASSFLOW_CACHE_DIR).';

/** `baselines`: flags → plan (once) → run; `--help` prints the flags. */
export const baselinesCli: CliCommand = planCommand({
  usage: 'grassflow-lm baselines [--data-dir DIR] [--tokenizer wordpiece|word] [--split valid|test] [--json]',
  description: DESCRIPTION,
  flags: BASELINES_FLAGS,
  help: 'n-gram baselines (unigram, bigram, trigram) of a split, cached',
  plan: planBaselines,
  run: runBaselinesPlan,
});

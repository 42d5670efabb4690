// `grassflow-lm eval`: perplexity of a checkpoint over every token of a split, as one JSON line.
import { dirname, resolve } from 'node:path';
import {
  checkWritableFolder,
  parseFlags,
  startBackend,
  planCommand,
  type FlagSpecs,
  type CliCommand,
  UsageError,
} from '@grassflow/training';
import { formatDuration, Progress, renderLineChart } from '@grassflow/training';
import { writeFileAtomic } from '@grassflow/checkpoints';
import {
  checkpointSourceOf,
  CHECKPOINT_FLAGS,
  loadModelAndTokenizer,
  type CheckpointSource,
} from '../shared/checkpoint-dir.js';
import { loadSplitIds, loadTextFileIds, textFileList } from '../shared/corpus.js';
import { evaluatePerplexity } from '@grassflow/training';

const EVAL_FLAGS = {
  checkpoint: CHECKPOINT_FLAGS.checkpoint,
  split: { type: 'string', choices: ['valid', 'test'], default: 'valid', help: 'WikiText-2 split' },
  file: {
    type: 'string',
    metavar: 'FILE[,FILE…]',
    help: "score these plain-text files (UTF-8, one after another, under the model's tokenizer) instead of a split",
  },
  'max-tokens': {
    type: 'int',
    min: 1,
    help: 'score only the first N targets (default: all of them)',
  },
  batch: { type: 'int', min: 1, default: 16, help: 'windows per forward pass' },
  tokenizer: CHECKPOINT_FLAGS.tokenizer,
  'data-dir': CHECKPOINT_FLAGS['data-dir'],
  backend: CHECKPOINT_FLAGS.backend,
  trust: CHECKPOINT_FLAGS.trust,
  'by-position': {
    type: 'string',
    metavar: 'FILE',
    help:
      'also the mean NLL and PPL at each position of the window (1 … maxLen) in the JSON line, and their chart as ' +
      'FILE.svg and FILE.png: does the model keep using context past its receptive field?',
  },
} as const satisfies FlagSpecs;

/** What `eval` does, resolved once from its flags. */
export interface EvalPlan {
  source: CheckpointSource;
  /** What is scored: a WikiText-2 split, or the user's text files. */
  text: { kind: 'split'; split: 'valid' | 'test' } | { kind: 'files'; files: string[] };
  /** --max-tokens: score at most this many targets. */
  maxTokens: number | undefined;
  /** Windows of the model's maxLen per forward pass. */
  batch: number;
  /** --by-position: the chart's path without extension (the JSON line then has the per-position figures). */
  byPosition: string | undefined;
}

export function planEval(argv: readonly string[]): EvalPlan {
  const f = parseFlags(argv, EVAL_FLAGS);
  const byPosition = f['by-position'];
  if (f.file !== undefined && argv.some((a) => a === '--split' || a.startsWith('--split=')))
    throw new UsageError('give --split or --file, not both', 'file');
  return {
    source: checkpointSourceOf(f),
    text:
      f.file === undefined
        ? { kind: 'split', split: f.split as 'valid' | 'test' }
        : { kind: 'files', files: textFileList(f.file, 'file') },
    maxTokens: f['max-tokens'],
    batch: f.batch,
    byPosition: byPosition?.replace(/\.(svg|png)$/, ''),
  };
}

/**
 * Print {split, tokens, nll, ppl}: windows of seqLen = the model's maxLen, every target once. On stderr: a bar with the
 * tokens scored and an ETA on a terminal, and a line at the end (tokens and time) in every case.
 */
export async function runEvalPlan(plan: EvalPlan): Promise<number> {
  const { source } = plan;
  // the chart's folder is checked (and made) before the model is scored, as every output folder is
  if (plan.byPosition !== undefined) checkWritableFolder(dirname(resolve(plan.byPosition)), 'by-position');
  await startBackend(source.backend);
  const { model, tok } = await loadModelAndTokenizer(source.checkpoint, source.dataDir, source.tokenizer, source.trust);
  try {
    const all =
      plan.text.kind === 'split'
        ? await loadSplitIds(plan.text.split, tok, source.dataDir)
        : await loadTextFileIds(plan.text.files, tok);
    const ids = plan.maxTokens === undefined ? all : all.subarray(0, plan.maxTokens + 1); // N targets: N + 1 ids
    const what = plan.text.kind === 'split' ? `wiki.${plan.text.split}` : plan.text.files.join(', ');
    const progress = new Progress(1);
    const t0 = performance.now();
    const sec = () => (performance.now() - t0) / 1000;
    const r = await evaluatePerplexity(model, ids, {
      seqLen: model.config.maxLen,
      batch: plan.batch,
      onProgress: (tokens, totalTokens) => progress.updateEval({ tokens, totalTokens, elapsedSec: sec() }),
    });
    progress.log(`eval: ${r.tokens.toLocaleString('en-US')} targets of ${what} in ${formatDuration(sec())}`);
    const line: Record<string, unknown> = {
      ...(plan.text.kind === 'split' ? { split: plan.text.split } : { files: plan.text.files }),
      tokens: r.tokens,
      nll: r.nll,
      ppl: r.ppl,
    };
    if (plan.byPosition !== undefined) {
      const round = (v: number) => Math.round(v * 1e4) / 1e4;
      line['nll_by_position'] = r.nllByPosition.map(round);
      line['ppl_by_position'] = r.nllByPosition.map((v) => round(Math.exp(v)));
      const { svg, png } = await renderLineChart({
        title: `${model.config.kind === 'grassmann' ? 'Grassmann' : 'Transformer'} (${source.checkpoint}): ${what} PPL by position in the window`,
        xLabel: 'position of the target in its window (tokens of context + 1)',
        yLabel: 'PPL at that position',
        series: [{ name: what, points: r.nllByPosition.map((v, t): [number, number] => [t + 1, Math.exp(v)]) }],
        logY: true,
      });
      await writeFileAtomic(`${plan.byPosition}.svg`, new TextEncoder().encode(svg));
      await writeFileAtomic(`${plan.byPosition}.png`, png);
      progress.log(`eval: PPL by position in ${plan.byPosition}.svg and .png`);
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}

const DESCRIPTION =
  "Perplexity over every token of a split, or of your own text with --file (non-overlapping windows of the model's " +
  'maxLen), printed as one line of JSON; --max-tokens N scores the first N.';

/** `eval`: flags → plan (once) → run; `--help` prints the flags. */
export const evalCli: CliCommand = planCommand({
  usage: 'grassflow-lm eval --checkpoint DIR|URL [--split valid|test | --file F] [--max-tokens N]',
  description: DESCRIPTION,
  flags: EVAL_FLAGS,
  help: 'perplexity over a split or a text file, as one JSON line',
  plan: planEval,
  run: runEvalPlan,
});

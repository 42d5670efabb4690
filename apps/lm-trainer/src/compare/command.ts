// `compare`: the three model kinds under one token budget, seed and data order; one report side by side.
import { join, resolve } from 'node:path';
import { loadCheckpoint, paramBreakdown } from '@grassflow/gpu-layers';
import {
  evalMetricChart,
  parseFlags,
  summariseRun,
  trainingLossChart,
  warmupSteps,
  writeReport,
  type FlagSpecs,
  type MetricRecord,
  planCommand,
  prepareOutputFolder,
  startBackend,
  type CliCommand,
  type ChartSeries,
} from '@grassflow/training';
import {
  dataDirOrThrow,
  loadRunData,
  loadSplitIds,
  loadTokenizer,
  type CorpusTokenizer,
  type TokenizerKind,
} from '../shared/corpus.js';
import { heldOutMetric } from '../shared/held-out.js';
import { evaluatePerplexity } from '@grassflow/training';
import { COMMON_TRAIN_FLAGS, MODEL_KINDS, type ModelKind } from '../shared/model-options.js';
import type { TrainingConfig } from '../train/config.js';
import { freshRunOf } from '../train/command.js';
import { startRun, type FreshRun } from '../train/run.js';
import { cachedNgramBaselines } from '../baselines/cache.js';
import type { BaselineResult } from '../baselines/ngram.js';
import { baselineSeries, smoothingLines, standingLines, xRange } from '../baselines/report.js';
import { referenceBaselines, standingAgainst } from '../baselines/standing.js';

/** Sequence length of the compare runs unless --seq-len says otherwise. */
const COMPARE_SEQ_LEN = 64;

/** The token budget of the compare runs unless --epochs, --steps or --tokens says otherwise. */
const COMPARE_LENGTH = { tokens: 409_600 } as const satisfies TrainingConfig['length'];

/**
 * Defaults sized so that all three runs finish in under 10 minutes on a 2-core machine and end well below the
 * unigram baseline (see README): 2 layers of d 64 (r 16), L 64, batch 16, an adaptive softmax head (~3.7× the tied
 * head's speed on CPU), 400 steps (409,600 tokens, 0.17 epoch) at lr 3e-3.
 */
export const COMPARE_FLAGS = {
  ...COMMON_TRAIN_FLAGS,
  preset: { ...COMMON_TRAIN_FLAGS.preset, default: 'tiny' },
  'd-model': { ...COMMON_TRAIN_FLAGS['d-model'], default: 64 },
  r: { ...COMMON_TRAIN_FLAGS.r, default: 16 },
  // no spec default for these two: --seq-len may give the one, --epochs or --steps replace the other
  'seq-len': {
    ...COMMON_TRAIN_FLAGS['seq-len'],
    help: `${COMMON_TRAIN_FLAGS['seq-len'].help} (default ${COMPARE_SEQ_LEN})`,
  },
  batch: { ...COMMON_TRAIN_FLAGS.batch, default: 16 },
  head: { ...COMMON_TRAIN_FLAGS.head, default: 'adaptive' },
  lr: { ...COMMON_TRAIN_FLAGS.lr, default: 3e-3 },
  tokens: {
    ...COMMON_TRAIN_FLAGS.tokens,
    help: `${COMMON_TRAIN_FLAGS.tokens.help} (default ${COMPARE_LENGTH.tokens})`,
  },
  'eval-every': { ...COMMON_TRAIN_FLAGS['eval-every'], default: 100 },
  'eval-tokens': { ...COMMON_TRAIN_FLAGS['eval-tokens'], default: 16384 },
  'log-every': { ...COMMON_TRAIN_FLAGS['log-every'], default: 10 },
  out: { type: 'string', metavar: 'DIR', default: 'runs/compare', help: 'folder for the three runs and the report' },
} as const satisfies FlagSpecs;

const USAGE = 'grassflow-lm compare [--preset P --tokens T --seed S …]';
const DESCRIPTION =
  'Train grassmann, transformer-dpa and transformer-ea with one token budget, seed and data order; evaluate each ' +
  'best checkpoint on the first --eval-tokens tokens of wiki.valid and wiki.test; write one report.';

/** Everything `compare` does, resolved once from its flags: one fresh run per model kind, as `train` plans one. */
export interface ComparePlan {
  /** The folder of the three runs and the report. */
  out: string;
  /** The command line (config.json and the report). */
  command: string;
  /** One fresh run per model kind, in MODEL_KINDS order: the same training config, seed and data order. */
  runs: FreshRun[];
  /** The tokens of wiki.valid and of wiki.test each best checkpoint is scored on. */
  evalTokens: number;
  tok: CorpusTokenizer;
  dataDir: string;
  backend: string | undefined;
}

/**
 * The plan of `grassflow-lm compare ARGV`: flags parsed and checked once, then train's fresh run per kind with
 * compare's defaults (seqLen 64, a budget of 409,600 tokens that any length flag replaces).
 */
export async function planCompare(argv: readonly string[]): Promise<ComparePlan> {
  const f = parseFlags(argv, COMPARE_FLAGS);
  const dataDir = dataDirOrThrow(f['data-dir']);
  const tok = await loadTokenizer(f.tokenizer as TokenizerKind, dataDir);
  const out = resolve(f.out);
  const command = ['grassflow-lm', 'compare', ...argv].join(' ');
  // --stop-at-step is accepted (a train flag) but compare runs each kind to its end, as it always has
  const runs = MODEL_KINDS.map((kind) =>
    freshRunOf(kind, f, tok.vocabSize, {
      out: join(out, kind),
      command,
      control: { quiet: f.quiet },
      seqLen: COMPARE_SEQ_LEN,
      length: COMPARE_LENGTH,
    }),
  );
  return { out, command, runs, evalTokens: f['eval-tokens'], tok, dataDir, backend: f.backend };
}

/** Run a compare plan: the three runs one after the other, then the report; prints where the report is. */
export async function runComparePlan(plan: ComparePlan): Promise<number> {
  const { out, command, runs, tok, dataDir } = plan;
  const first = runs[0] as FreshRun;
  const training = first.training;
  prepareOutputFolder(out, { command: 'compare' }); // the three runs go below it; refused before any data is read
  const backend = await startBackend(plan.backend);
  const data = await loadRunData(tok, dataDir);
  const test = await loadSplitIds('test', data.tok, data.dataDir);
  const evalN = plan.evalTokens;
  const validIds = data.valid.subarray(0, evalN);
  const testIds = test.subarray(0, evalN);
  // unigram / bigram / trigram on the same ids the models are scored on (cached per data hash)
  const baselinesOf = async (evalIds: Int32Array): Promise<BaselineResult[]> =>
    (
      await cachedNgramBaselines({
        trainIds: data.train,
        evalIds,
        vocabSize: data.tok.vocabSize,
        tokenizerId: data.tok.id,
      })
    ).baselines.results;
  const baselines = { valid: await baselinesOf(validIds), test: await baselinesOf(testIds) };
  const rows: Array<Array<string | number | null>> = [];
  const curves: Array<{ name: string; records: MetricRecord[] }> = [];
  const finals: Array<{ name: string; ppl: number }> = [];
  let totalSteps = 0;
  for (const run of runs) {
    const { modelKind: kind, model } = run;
    const o = await startRun(run, data, backend);
    if (o.result.status !== 'finished') {
      process.stderr.write(
        `compare stopped during ${kind} (${o.result.status}); its checkpoint: ${o.run.latestCheckpoint}\n`,
      );
      return o.result.signal === 'SIGTERM' ? 143 : 130;
    }
    totalSteps = o.result.state.step;
    const best = await loadCheckpoint(o.run.bestCheckpoint);
    for (const t of best.extraTensors.values()) t.dispose();
    const opts = { seqLen: run.training.seqLen, batch: 16 };
    const v = await evaluatePerplexity(best.model, validIds, opts);
    const te = await evaluatePerplexity(best.model, testIds, opts);
    const bestStep = (best.extra['trainer'] as { step?: number } | undefined)?.step ?? o.result.state.step;
    best.model.dispose();
    const records = await o.run.readMetrics();
    const s = summariseRun(records, 'val_ppl');
    // The run's own record of what its best checkpoint scored, where `export` finds it for the model card.
    await o.run.appendMetric(heldOutMetric(bestStep, v, te, 'grassflow-lm compare'));
    const sizes = paramBreakdown(model);
    rows.push([
      kind,
      sizes.total,
      sizes.blocks,
      sizes.embeddings + sizes.head,
      s.tokens,
      s.lastLoss,
      v.ppl,
      te.ppl,
      s.best?.step ?? null,
      Math.round(o.result.state.tokensSeen / o.result.state.trainSeconds),
      Math.round(o.result.state.trainSeconds),
    ]);
    curves.push({ name: kind, records });
    finals.push({ name: kind, ppl: v.ppl });
    process.stderr.write(
      `${kind}: val PPL ${v.ppl.toFixed(2)}, test PPL ${te.ppl.toFixed(2)} (${v.tokens} / ${te.tokens} tokens), ` +
        `${standingAgainst(v.ppl, baselines.valid)}\n`,
    );
  }
  for (const b of referenceBaselines(baselines.valid)) {
    const t = baselines.test.find((r) => r.name === b.name);
    rows.push([b.name, null, null, null, data.train.length, null, b.ppl, t?.ppl ?? null, null, null, null]);
  }
  const modelOf = (kind: ModelKind) => (runs.find((r) => r.modelKind === kind) as FreshRun).model;
  const cfg = modelOf('grassmann');
  const heads = modelOf('transformer-dpa').nHeads;
  const series = (type: string, key: string, x: string): Array<{ name: string; points: Array<[number, number]> }> =>
    curves.map((c) => ({
      name: c.name,
      points: c.records
        .filter((r) => r.type === type && typeof r[key] === 'number')
        .map((r) => [x === 'tokens' ? (r['tokens'] as number) : r.step, r[key] as number]),
    }));
  const withBaselines = (s: ChartSeries[]): ChartSeries[] => [...s, ...baselineSeries(baselines.valid, ...xRange(s))];
  const evalNote = `the first ${evalN.toLocaleString('en-US')} tokens of wiki.valid and of wiki.test`;
  const path = await writeReport(out, {
    title: 'Grassmann vs Transformer (DPA, EA) on WikiText-2',
    intro: [
      `Command: \`${command}\`; backend ${backend.name}; tokenizer ${data.tok.kind} ` +
        `(V ${data.tok.vocabSize.toLocaleString('en-US')}).`,
      `Same for all three: preset ${first.preset} (${cfg.nLayers} layers, d ${cfg.dModel}, d_ff ${cfg.dFF}, ` +
        `seqLen = maxLen ${training.seqLen}, ${cfg.norm}-LN, dropout ${cfg.dropout}; ` +
        `Grassmann r ${cfg.r}, offsets ${JSON.stringify(cfg.offsets)}; attention ${heads} heads; ${cfg.head ?? 'tied'} head), batch ${training.batch}, token budget ` +
        `${JSON.stringify(training.length)}, seed ${training.seed} (same initialisation seed and data order), AdamW lr ${training.lr}, warmup ${warmupSteps(training, totalSteps)} steps of ${totalSteps}.`,
      `PPL columns: the best checkpoint (by validation PPL during training) evaluated on ${evalNote}. ` +
        `This is a short, small run for comparing the three kinds on one machine, not the paper's setting (6 layers, d 256, tied head, 30 epochs).`,
    ],
    table: {
      columns: [
        'model',
        'params',
        'block params',
        'embedding + head params',
        'train tokens',
        'last train loss',
        'val PPL',
        'test PPL',
        'best at step',
        'train tokens/s',
        'train s',
      ],
      rows,
    },
    charts: [
      trainingLossChart(series('train', 'loss', 'tokens'), 'training tokens'),
      evalMetricChart(
        'val-ppl',
        'Validation perplexity',
        'PPL',
        withBaselines(series('eval', 'val_ppl', 'step')),
        true,
      ),
    ],
    notes: [
      `Where each model stands against the n-gram baselines (fitted on all ${data.train.length.toLocaleString('en-US')} ` +
        'wiki.train tokens, scored on the same validation ids as the models, every target once):\n' +
        standingLines(finals, baselines.valid),
      `Baselines (the last rows of the table; \`grassflow-lm baselines\` scores whole splits):\n${smoothingLines(baselines.valid)}`,
      gapNote(finals),
      MODEL_KINDS.map(
        (k) => `- ${k}: run folder [${k}/](${k}/) (config.json, metrics.jsonl, checkpoints/, report.md)`,
      ).join('\n'),
    ],
  });
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

/**
 * The gap between the Grassmann model and each Transformer in words, and what one seed can and cannot say about it.
 */
export function gapNote(finals: ReadonlyArray<{ name: string; ppl: number }>): string {
  const g = finals.find((f) => f.name === 'grassmann');
  const lines = finals
    .filter((f) => f.name !== 'grassmann' && g !== undefined)
    .map((f) => {
      const gap = ((g as { ppl: number }).ppl / f.ppl - 1) * 100;
      return `- Grassmann vs ${f.name}: ${gap >= 0 ? '+' : ''}${gap.toFixed(1)}% validation PPL (${(g as { ppl: number }).ppl.toFixed(1)} vs ${f.ppl.toFixed(1)})`;
    });
  return (
    'The gap (positive: the Grassmann model is worse):\n' +
    lines.join('\n') +
    '\n\nThis is one seed: compare cannot say whether these gaps are larger than the spread between seeds. Run it ' +
    'again with `--seed 2` and `--seed 3` (a new initialisation and data order, the same for all three kinds), or see the CPU ' +
    "study in docs/results.md, which measures the seed spread at this machine's sizes."
  );
}

/** `grassflow-lm compare` in the program's command table: flags → plan (once) → run. */
export const compareCli: CliCommand = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: COMPARE_FLAGS,
  help: 'train the three model kinds under one budget and write one report',
  plan: planCompare,
  run: runComparePlan,
});

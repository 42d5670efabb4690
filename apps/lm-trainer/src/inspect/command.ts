// `grassflow-lm inspect`: the geometry inside a trained model — gates, Plücker pairs, subspace flow, attention entropy.
import { resolve } from 'node:path';
import {
  parseFlags,
  prepareOutputFolder,
  planCommand,
  startBackend,
  UsageError,
  type CliCommand,
  type FlagSpecs,
} from '@grassflow/training';
import {
  checkpointSourceOf,
  CHECKPOINT_FLAGS,
  loadModelAndTokenizer,
  type CheckpointSource,
} from '../shared/checkpoint-dir.js';
import { loadSplitIds, type CorpusTokenizer } from '../shared/corpus.js';
import { inspectModel, type InspectResult, type InspectSample } from './model.js';
import { writeInspectReport } from './report.js';

const INSPECT_FLAGS = {
  checkpoint: CHECKPOINT_FLAGS.checkpoint,
  text: { type: 'string', metavar: 'TEXT', help: 'inspect this text (its first L tokens)' },
  split: {
    type: 'string',
    choices: ['valid', 'test'],
    help: 'or inspect windows of L tokens from this WikiText-2 split',
  },
  // no spec default: given without --split it is refused, which a default would hide
  samples: { type: 'int', min: 1, help: 'with --split: number of windows, evenly spaced over the split (default 8)' },
  top: { type: 'int', min: 1, default: 5, help: 'largest subspace steps listed per layer and offset' },
  out: { type: 'string', metavar: 'DIR', help: 'output folder for inspect.json, report.md and the charts' },
  tokenizer: CHECKPOINT_FLAGS.tokenizer,
  'data-dir': CHECKPOINT_FLAGS['data-dir'],
  backend: CHECKPOINT_FLAGS.backend,
  trust: CHECKPOINT_FLAGS.trust,
} as const satisfies FlagSpecs;

/** Display label of one token: its text (WordPiece keeps `##`), ⏎ for a line end. */
function tokenLabel(tok: CorpusTokenizer, id: number): string {
  const s = tok.decode([id]).trim();
  return s === '' ? '⏎' : s;
}

/**
 * `samples` windows of `L` ids evenly spaced over `ids` (starts ⌊k (N − L) / (samples − 1)⌋), fewer if the split is
 * short.
 */
export function splitWindows(ids: Int32Array, L: number, samples: number): Array<{ start: number; ids: Int32Array }> {
  if (ids.length <= L) return [{ start: 0, ids: ids.slice() }];
  const last = ids.length - L;
  const starts = [
    ...new Set(Array.from({ length: samples }, (_, k) => (samples === 1 ? 0 : Math.floor((k * last) / (samples - 1))))),
  ];
  return starts.map((start) => ({ start, ids: ids.slice(start, start + L) }));
}

/** One line per layer for the terminal. */
function summaryLines(r: InspectResult): string[] {
  const f = (v: number | null, d = 2) => (v === null ? '–' : v.toFixed(d));
  const deg = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)}°`);
  const lines: string[] = [];
  for (const l of r.grassmann ?? []) {
    for (const g of l.geometry) {
      const big = g.largestSteps[0];
      lines.push(
        `layer ${l.layer} Δ ${g.delta}: α ${f(l.gate.summary.mean)} ± ${f(l.gate.summary.std)}, geometric share ${f(l.geometricShare.summary.mean)}, ` +
          `angle median ${deg(g.summary.angleDeg.p50)}, ‖p‖ median ${g.summary.area.p50?.toPrecision(3) ?? '–'}, step median ${deg(g.summary.stepDeg.p50)}` +
          (big === undefined ? '' : `, largest ${big.stepDeg.toFixed(1)}° at '${big.token}'`),
      );
    }
  }
  for (const l of r.attention ?? []) {
    lines.push(
      `layer ${l.layer}: entropy (nats) by head ${l.heads.map((h) => f(h.entropy.mean)).join(' ')}; weight on q·k<0 ${l.heads.map((h) => f(h.antiparallelWeight)).join(' ')}`,
    );
  }
  return lines;
}

/** Windows of a split inspected without --samples. */
const DEFAULT_SAMPLES = 8;

const USAGE = 'grassflow-lm inspect --checkpoint DIR|URL (--text "…" | --split valid --samples N) --out DIR';
const DESCRIPTION =
  'Look inside a trained model: gates, pair angles and areas, and the flow of pair-planes on Gr(2, r) per layer and ' +
  'offset (Grassmann), or attention entropy and weight on antiparallel pairs per head (Transformer). Writes ' +
  'inspect.json and report.md with charts.';

/** What `inspect` does, resolved once from its flags. */
export interface InspectPlan {
  source: CheckpointSource;
  /** A text (its first maxLen tokens), or evenly spaced windows of a split. */
  input: { text: string } | { split: 'valid' | 'test'; samples: number };
  /** Largest subspace steps listed per layer and offset. */
  top: number;
  out: string;
  command: string;
}

/** The plan of `grassflow-lm inspect ARGV`: flags parsed and checked once (the checkpoint is read when it runs). */
export function planInspect(argv: readonly string[]): InspectPlan {
  const f = parseFlags(argv, INSPECT_FLAGS);
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR is required', 'checkpoint');
  if (f.out === undefined)
    throw new UsageError('--out DIR is required (inspect.json, report.md and the charts go there)', 'out');
  if ((f.text === undefined) === (f.split === undefined))
    throw new UsageError(
      'give exactly one of --text "…" or --split valid|test',
      f.text === undefined ? 'text' : 'split',
    );
  if (f.text !== undefined && f.text.trim() === '')
    throw new UsageError('--text is empty: give the text to inspect, e.g. --text "the game was released"', 'text');
  if (f.split === undefined && f.samples !== undefined) throw new UsageError('--samples goes with --split', 'samples');
  return {
    source: checkpointSourceOf(f),
    input:
      f.text !== undefined
        ? { text: f.text }
        : { split: f.split as 'valid' | 'test', samples: f.samples ?? DEFAULT_SAMPLES },
    top: f.top,
    out: resolve(f.out),
    command: ['grassflow-lm', 'inspect', ...argv].join(' '),
  };
}

/** Inspect the checkpoint on the plan's input; write inspect.json, report.md and the charts; print one line a layer. */
export async function runInspectPlan(plan: InspectPlan): Promise<number> {
  const { source } = plan;
  prepareOutputFolder(plan.out, { command: 'inspect' }); // before any work: never over a user's report.md
  await startBackend(source.backend);
  const { model, tok, dir } = await loadModelAndTokenizer(
    source.checkpoint,
    source.dataDir,
    source.tokenizer,
    source.trust,
  );
  try {
    const L = model.config.maxLen;
    let samples: InspectSample[];
    let input: string;
    if ('text' in plan.input) {
      const { text } = plan.input;
      const ids = await tok.encodePrompt(text);
      if (ids.length === 0)
        throw new UsageError(
          `--text ${JSON.stringify(text)} encodes to no tokens: give a text with words in it`,
          'text',
        );
      const kept = ids.subarray(0, L);
      if (ids.length > L)
        process.stderr.write(
          `inspect: the text has ${ids.length} tokens; the model's L is ${L}, so the first ${L} are inspected\n`,
        );
      samples = [{ ids: kept, tokens: Array.from(kept, (id) => tokenLabel(tok, id)) }];
      input = `the text given with --text (${ids.length} tokens${ids.length > L ? `, the first ${L} inspected` : ''})`;
    } else {
      const { split } = plan.input;
      const windows = splitWindows(await loadSplitIds(split, tok, source.dataDir), L, plan.input.samples);
      samples = windows.map((w) => ({ ids: w.ids, tokens: Array.from(w.ids, (id) => tokenLabel(tok, id)) }));
      input = `${windows.length} windows of ${windows[0]?.ids.length ?? 0} tokens of wiki.${split}, evenly spaced (token offsets ${windows.map((w) => w.start).join(', ')})`;
    }
    const result = await inspectModel(model, samples, { top: plan.top });
    const report = await writeInspectReport(plan.out, result, { command: plan.command, checkpoint: dir, input });
    process.stdout.write(`${[...summaryLines(result), `report: ${report}`].join('\n')}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}

/** `grassflow-lm inspect` in the program's command table: flags → plan (once) → run. */
export const inspectCli: CliCommand = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: INSPECT_FLAGS,
  help: 'the geometry inside a trained model: gates, Plücker pairs, subspace flow, attention entropy',
  plan: planInspect,
  run: runInspectPlan,
});

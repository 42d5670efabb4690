// The train, eval and generate commands.
import { checkResumeFlags, openRunToResume, parseFlags, UsageError, wantsHelp, type FlagSpecs, startBackend, describeRunEnd, runExitCode } from '@grassflow/training';
import { loadModelAndTokenizer } from '../shared/checkpoint-dir.js';
import { dataDirOrThrow, loadSplitIds, loadTokenizer, type TokenizerKind } from '../shared/corpus.js';
import { generateIds } from '../generate/generate.js';
import { evaluatePerplexity } from '../lm-task.js';
import { COMMON_TRAIN_FLAGS, MODEL_KINDS, modelConfigFrom, trainingConfigFrom, type ModelKind } from '../shared/model-options.js';
import { resumeRun, startRun, type RunConfig, type RunData } from './run.js';

/** Load tokenizer + train/valid ids from the data folder. */
export async function loadRunData(tokenizer: TokenizerKind, dataDirFlag: string | undefined): Promise<RunData> {
  const dataDir = dataDirOrThrow(dataDirFlag);
  const tok = await loadTokenizer(tokenizer, dataDir);
  const [train, valid] = [await loadSplitIds('train', tok, dataDir), await loadSplitIds('valid', tok, dataDir)];
  return { tok, dataDir, train, valid };
}

const TRAIN_FLAGS = {
  model: { type: 'string', choices: MODEL_KINDS, default: 'grassmann', help: 'model kind' },
  ...COMMON_TRAIN_FLAGS,
  out: { type: 'string', metavar: 'DIR', help: 'run folder (default runs/<model>-<preset>-s<seed>)' },
  resume: { type: 'string', metavar: 'DIR', help: 'continue the run in DIR from checkpoints/latest (its config.json fixes everything else)' },
} as const satisfies FlagSpecs;

/** `grassflow-lm train`. Returns the process exit code. */
export async function trainCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv, 'grassflow-lm train --model grassmann|transformer-dpa|transformer-ea --preset P [overrides] [--epochs E|--steps S|--tokens T]', 'Train a language model on WikiText-2 into a run folder (config.json, metrics.jsonl, checkpoints/{latest,best}, report.md).', TRAIN_FLAGS)) return 0;
  const f = parseFlags(argv, TRAIN_FLAGS);
  const stop = f['stop-at-step'];
  if (f.resume !== undefined) {
    checkResumeFlags(argv);
    const opened = await openRunToResume<RunConfig>(f.resume, 'grassflow-lm-run'); // config.json, read once
    await startBackend(f.backend);
    const data = await loadRunData(opened.config.data.tokenizer as TokenizerKind, f['data-dir']);
    const o = await resumeRun(opened, data, { quiet: f.quiet, ...(stop === undefined ? {} : { stopAtStep: stop }) });
    process.stderr.write(`${describeRunEnd(o.result, o.run, { metric: 'val PPL', format: (v) => v.toFixed(2), reportPath: o.reportPath })}\n`);
    return runExitCode(o.result);
  }
  const training0 = trainingConfigFrom(f, 1); // validates --epochs/--steps/--tokens before any slow work
  const backend = await startBackend(f.backend);
  const data = await loadRunData(f.tokenizer as TokenizerKind, f['data-dir']);
  const kind = f.model as ModelKind;
  const model = modelConfigFrom(kind, f, data.tok.vocabSize);
  const training = { ...training0, block: model.maxLen };
  const out = f.out ?? `runs/${kind}-${f.preset}-s${f.seed}`;
  const o = await startRun({
    out,
    modelKind: kind,
    preset: f.preset,
    model,
    training,
    data,
    backend,
    command: ['grassflow-lm', 'train', ...argv].join(' '),
    quiet: f.quiet,
    ...(stop === undefined ? {} : { stopAtStep: stop }),
  });
  process.stderr.write(`${describeRunEnd(o.result, o.run, { metric: 'val PPL', format: (v) => v.toFixed(2), reportPath: o.reportPath })}\n`);
  return runExitCode(o.result);
}

const EVAL_FLAGS = {
  checkpoint: { type: 'string', metavar: 'DIR', help: 'checkpoint folder, or a run folder (its best checkpoint)' },
  split: { type: 'string', choices: ['valid', 'test'], default: 'valid', help: 'WikiText-2 split' },
  batch: { type: 'int', min: 1, default: 16, help: 'windows per forward pass' },
  tokenizer: { type: 'string', choices: ['wordpiece', 'word'], help: 'tokenizer (default: the one the checkpoint records)' },
  'data-dir': { type: 'string', metavar: 'DIR', help: 'data folder (default GRASSFLOW_DATA_DIR, else ~/.cache/grassflow)' },
  backend: COMMON_TRAIN_FLAGS.backend,
} as const satisfies FlagSpecs;

/** `grassflow-lm eval`: one JSON line {split, tokens, nll, ppl} over every token of the split. */
export async function evalCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv, 'grassflow-lm eval --checkpoint DIR --split valid|test', 'Perplexity over every token of a split (non-overlapping windows of the model\'s L), printed as one line of JSON.', EVAL_FLAGS)) return 0;
  const f = parseFlags(argv, EVAL_FLAGS);
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR is required', 'checkpoint');
  const dataDir = dataDirOrThrow(f['data-dir']);
  await startBackend(f.backend);
  const { model, tok } = await loadModelAndTokenizer(f.checkpoint, dataDir, f.tokenizer);
  try {
    const ids = await loadSplitIds(f.split as 'valid' | 'test', tok, dataDir);
    const r = await evaluatePerplexity(model, ids, { block: model.config.maxLen, batch: f.batch });
    process.stdout.write(`${JSON.stringify({ split: f.split, tokens: r.tokens, nll: r.nll, ppl: r.ppl })}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}

const GENERATE_FLAGS = {
  checkpoint: EVAL_FLAGS.checkpoint,
  prompt: { type: 'string', metavar: 'TEXT', default: 'the', help: 'text to continue' },
  'max-tokens': { type: 'int', min: 1, default: 40, help: 'tokens to generate' },
  temperature: { type: 'float', min: 0, default: 1.0, help: 'softmax temperature (0: greedy)' },
  'top-k': { type: 'int', min: 0, default: 40, help: 'sample among the k most likely tokens (0: all)' },
  seed: { type: 'int', min: 0, max: 0xffffffff, default: 1, help: 'sampling seed (same seed, same text)' },
  'slide-keep': { type: 'int', min: 1, help: "when the model's positional table (maxLen) is full, restart from the last N tokens (default maxLen: always the full window, one full pass per token from then on)" },
  tokenizer: EVAL_FLAGS.tokenizer,
  'data-dir': EVAL_FLAGS['data-dir'],
  backend: COMMON_TRAIN_FLAGS.backend,
} as const satisfies FlagSpecs;

/** `grassflow-lm generate`: prints the prompt's continuation. */
export async function generateCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv, 'grassflow-lm generate --checkpoint DIR --prompt TEXT [--max-tokens N --temperature T --top-k K --seed S --slide-keep N]', 'Sample a continuation of the prompt; deterministic for a seed. The prompt is read in one pass, then each token is one incremental decoding step (Grassmann: a constant-size state of the last max(offset) reduced states per layer; Transformer: a key/value cache).', GENERATE_FLAGS)) return 0;
  const f = parseFlags(argv, GENERATE_FLAGS);
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR is required', 'checkpoint');
  const dataDir = dataDirOrThrow(f['data-dir']);
  await startBackend(f.backend);
  const { model, tok } = await loadModelAndTokenizer(f.checkpoint, dataDir, f.tokenizer);
  try {
    const prompt = await tok.encodePrompt(f.prompt);
    const out = generateIds(model, prompt, { maxTokens: f['max-tokens'], temperature: f.temperature, topK: f['top-k'], seed: f.seed, ...(f['slide-keep'] === undefined ? {} : { slideKeep: f['slide-keep'] }) });
    process.stdout.write(`${tok.decode(Int32Array.from([...prompt, ...out]))}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}

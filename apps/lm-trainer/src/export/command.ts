// `grassflow-lm export RUN --out DIR`: a run's best checkpoint as a folder to hand to someone — the model config and
// weights, the tokenizer, a model card — without what only training needs (optimizer moments, RNG state).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { BERT_VOCAB_REL_PATH, ensureDataFile } from '@grassflow/datasets';
import { CheckpointError } from '@grassflow/checkpoints';
import {
  isPretrainedFolder,
  loadCheckpoint,
  savePretrained,
  type PretrainedTokenizerFiles,
} from '@grassflow/gpu-layers';
import {
  checkWritableFolder,
  parseFlags,
  planCommand,
  refuseOutputPlace,
  resolveCheckpointDir,
  startBackend,
  UsageError,
  type CliCommand,
  type FlagSpecs,
} from '@grassflow/training';
import { CHECKPOINT_FLAGS } from '../shared/checkpoint-dir.js';
import { dataDirOrThrow, wordPieceTokenizer, WORDPIECE_PREPARATION } from '../shared/corpus.js';
import { splitBaselines } from '../baselines/cache.js';
import { modelCard, type CardInput } from './card.js';

const RUN_FORMAT = 'grassflow-lm-run';
const VOCAB_FILE = 'vocab.txt';

/** The n-gram baselines of wiki.test for the card (cached per data hash), or why there are none. */
async function testBaselines(
  tok: ReturnType<typeof wordPieceTokenizer>,
  dataDir: string,
): Promise<CardInput['baselines']> {
  try {
    return { results: (await splitBaselines(tok, dataDir, 'test')).baselines.results };
  } catch (error) {
    return {
      missing: `${(error as Error).message.split('\n')[0]}; \`grassflow-lm baselines --split test\` computes them`,
    };
  }
}

const EXPORT_FLAGS = {
  run: { type: 'string', metavar: 'RUN', help: 'run folder to export (or give it first, before the flags)' },
  out: { type: 'string', metavar: 'DIR', help: 'export folder: new, empty, or an earlier export (replaced)' },
  from: {
    type: 'string',
    choices: ['best', 'latest'],
    help:
      "which checkpoint: best (lowest validation PPL; default) or latest (the last step's: what `study run` scores " +
      'on all of wiki.valid and wiki.test, so its card shows those)',
  },
  name: {
    type: 'string',
    metavar: 'NAME',
    help: "the model's name on its card (title, Hub metadata, the fromPretrained line), e.g. the npm package it ships as",
  },
  'data-dir': CHECKPOINT_FLAGS['data-dir'],
  backend: CHECKPOINT_FLAGS.backend,
} as const satisfies FlagSpecs;

/** What `export` does, resolved once from its flags. */
export interface ExportPlan {
  /** The run folder, as given. */
  run: string;
  /** The export folder, absolute. */
  out: string;
  /** Where the run's BERT vocab.txt is (bert-vocab/vocab.txt of the data folder). */
  dataDir: string;
  backend: string | undefined;
  /** Which checkpoint of the run: its best (default) or its latest. */
  from: 'best' | 'latest';
  /** The model's name on its card (default: none, the title names the kind). */
  name: string | undefined;
}

export function planExport(argv: readonly string[]): ExportPlan {
  const [first, ...rest] = argv;
  const positional = first !== undefined && !first.startsWith('-') ? first : undefined;
  const f = parseFlags(positional === undefined ? argv : rest, EXPORT_FLAGS);
  if (positional !== undefined && f.run !== undefined) {
    throw new UsageError('give the run folder once: first, or as --run', 'run');
  }
  const run = positional ?? f.run;
  if (run === undefined) throw new UsageError('the run folder is required: grassflow-lm export RUN --out DIR', 'run');
  if (f.out === undefined) throw new UsageError('--out DIR is required (the export folder)', 'out');
  const from = f.from === 'latest' ? 'latest' : 'best';
  const name = f.name?.trim();
  if (name !== undefined && !/^[^\s`'"]{1,100}$/.test(name)) {
    throw new UsageError(`--name ${JSON.stringify(f.name)}: give one word of up to 100 characters, no quotes`, 'name');
  }
  return { run, out: resolve(f.out), dataDir: dataDirOrThrow(f['data-dir']), backend: f.backend, from, name };
}

/** The run's config.json, or a UsageError that says what RUN is instead. */
function readRunConfig(run: string): CardInput['run'] & { format: string } {
  if (!existsSync(run)) throw new UsageError(`run folder ${run} does not exist`, 'run');
  if (!statSync(run).isDirectory()) throw new UsageError(`${run} is a file, not a run folder`, 'run');
  let cfg: unknown;
  try {
    cfg = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8'));
  } catch {
    cfg = undefined;
  }
  const format = (cfg as { format?: unknown } | undefined)?.format;
  if (format !== RUN_FORMAT) {
    throw new UsageError(
      `${run} is not a grassflow-lm run folder (no config.json with format "${RUN_FORMAT}"): give the --out folder ` +
        'of grassflow-lm train',
      'run',
    );
  }
  return cfg as CardInput['run'] & { format: string };
}

/**
 * The `test_ppl` metrics.jsonl records of the checkpoint at `step`, else the last one: `grassflow-lm compare` appends
 * one per run (its best checkpoint on the first --eval-tokens tokens of wiki.test), `study run` one (its latest
 * checkpoint on all of wiki.valid and wiki.test); a `train` run alone records none.
 */
function testPplOf(run: string, step: number | undefined): CardInput['testPpl'] {
  const path = join(run, 'metrics.jsonl');
  if (!existsSync(path)) return undefined;
  let last: CardInput['testPpl'];
  let atStep: CardInput['testPpl'];
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue; // a torn last line of a run that was killed: not a record
    }
    const value = num(r['test_ppl']);
    if (value === undefined) continue;
    const validPpl = num(r['val_ppl']);
    const validTokens = num(r['val_tokens']);
    last = {
      value,
      step: num(r['step']),
      tokens: num(r['test_tokens']),
      by: typeof r['by'] === 'string' ? r['by'] : undefined,
      wholeSplit: r['whole_split'] === 1,
      valid: validPpl === undefined || validTokens === undefined ? undefined : { value: validPpl, tokens: validTokens },
    };
    if (step !== undefined && last.step === step) atStep = last;
  }
  return atStep ?? last;
}

/** The run's checkpoints/latest, or a UsageError saying it has none. */
function latestCheckpointOf(run: string): string {
  const dir = join(run, 'checkpoints', 'latest');
  if (!existsSync(join(dir, 'config.json'))) {
    throw new UsageError(
      `${run} has no checkpoints/latest yet: train it, or export its best (leave out --from)`,
      'from',
    );
  }
  return dir;
}

export async function runExportPlan(plan: ExportPlan): Promise<number> {
  const cfg = readRunConfig(plan.run);
  if (cfg.data?.tokenizer !== 'wordpiece') {
    throw new UsageError(
      `${plan.run} was trained with the ${cfg.data?.tokenizer ?? 'unknown'} tokenizer; export writes WordPiece runs ` +
        'only (word-level exports are not done yet)',
      'run',
    );
  }
  // Refused before any loading (savePretrained checks again, just before it writes, and refuses an earlier export
  // that holds files of the user's).
  refuseOutputPlace(plan.out, 'out');
  if (existsSync(plan.out) && readdirSync(plan.out).length > 0 && !(await isPretrainedFolder(plan.out))) {
    throw new UsageError(
      `refusing to write to ${plan.out}: it is not empty and not a pretrained folder (an earlier export); give a ` +
        'new or empty folder',
      'out',
    );
  }
  checkWritableFolder(plan.out, 'out');
  await startBackend(plan.backend);
  const ckDir = plan.from === 'latest' ? latestCheckpointOf(plan.run) : resolveCheckpointDir(plan.run, RUN_FORMAT);
  const vocabPath = await ensureDataFile(BERT_VOCAB_REL_PATH, { dataDir: plan.dataDir });
  const tok = wordPieceTokenizer(vocabPath);
  if (cfg.data.tokenizerId !== undefined && cfg.data.tokenizerId !== tok.id) {
    throw new UsageError(
      `${plan.run} was trained with tokenizer ${cfg.data.tokenizerId}, but ${vocabPath} gives ${tok.id}: use the ` +
        "run's data folder (--data-dir)",
      'data-dir',
    );
  }
  const ck = await loadCheckpoint(ckDir).catch((e: unknown) => {
    // an export records each file's SHA-256 so that a copy is checked: bytes nobody verified are not recorded as good
    if (e instanceof CheckpointError && e.code === 'UNVERIFIED') {
      throw new UsageError(
        `${ckDir}: config.json records no size and SHA-256 of its weights (its \`files\` record is missing: ` +
          'edited or hand-written), so an export would vouch for bytes nobody checked: export a checkpoint ' +
          'grassflow wrote (restore this one, or export checkpoints/best or the other checkpoint of the run)',
        'run',
      );
    }
    throw e;
  });
  // The moments and RNG state of extra.safetensors/extra.trainer stay behind: an export is for inference.
  for (const t of ck.extraTensors.values()) t.dispose();
  try {
    const trainer = ck.extra['trainer'] as
      { step?: number; tokensSeen?: number; best?: { value?: number; step?: number } } | undefined;
    const best = trainer?.best;
    const params = ck.model.namedParams().reduce((s, p) => s + p.variable.size, 0);
    const card = modelCard({
      runName: plan.run,
      name: plan.name,
      run: cfg,
      model: ck.config,
      params: cfg.params ?? params,
      step: trainer?.step,
      tokensSeen: trainer?.tokensSeen,
      bestValPpl:
        typeof best?.value === 'number' && typeof best.step === 'number'
          ? { value: best.value, step: best.step }
          : undefined,
      testPpl: testPplOf(plan.run, trainer?.step),
      baselines: await testBaselines(tok, plan.dataDir),
      checkpoint: relative(plan.run, ckDir) || '.',
      exportedAt: new Date().toISOString(),
    });
    const tokenizer: PretrainedTokenizerFiles = {
      config: {
        kind: 'wordpiece',
        id: tok.id,
        files: { vocab: VOCAB_FILE }, // savePretrained adds Hugging Face's tokenizer.json
        ...WORDPIECE_PREPARATION,
        // what Hugging Face's tools read of tokenizer_config.json
        tokenizer_class: 'BertTokenizerFast',
        do_lower_case: WORDPIECE_PREPARATION.lowercase,
        model_max_length: ck.config.maxLen,
      },
      files: new Map([[VOCAB_FILE, await readFile(vocabPath)]]),
    };
    const source = {
      command: cfg.command ?? null,
      step: trainer?.step ?? null,
      tokensSeen: trainer?.tokensSeen ?? null,
      bestValPpl: best?.value ?? null,
    };
    try {
      await savePretrained(plan.out, ck.model, {
        tokenizer,
        card,
        extra: { run: ck.extra['run'] ?? null, source },
      });
    } catch (error) {
      if (error instanceof CheckpointError && error.code === 'TARGET_NOT_CHECKPOINT') {
        throw new UsageError(error.message, 'out');
      }
      throw error;
    }
    process.stderr.write(`export: ${plan.run} (${source.step === null ? '?' : `step ${source.step}`}) → ${plan.out}\n`);
    return 0;
  } finally {
    ck.model.dispose();
  }
}

const DESCRIPTION =
  "Write a run's best (or --from latest) checkpoint as a model folder to hand on: config.json + model.safetensors (PyTorch names), the " +
  'tokenizer (tokenizer.json for Hugging Face tools, vocab.txt + tokenizer_config.json), README.md (a model card with ' +
  'Hub metadata: architecture, parameters, data, tokens seen, perplexities, n-gram baselines, the command); no ' +
  'optimizer state. generate, eval and inspect read it as --checkpoint.';

/** `export`: flags → plan (once) → run; `--help` prints the flags. */
export const exportCli: CliCommand = planCommand({
  usage: 'grassflow-lm export RUN --out DIR',
  description: DESCRIPTION,
  flags: EXPORT_FLAGS,
  help: 'write a run as a model folder (weights, tokenizer, model card), without optimizer state',
  plan: planExport,
  run: runExportPlan,
});

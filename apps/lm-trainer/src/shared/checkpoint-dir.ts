// Resolve --checkpoint: a checkpoint folder, a run folder (its best, else latest checkpoint), an export folder, or
// the URL of a served export folder (downloaded into the user cache by gpu-layers, each file's SHA-256 checked).
import {
  BACKEND_NAMES,
  downloadPretrained,
  isPretrainedFolder,
  isPretrainedUrl,
  loadCheckpoint,
  loadPretrained,
  type LanguageModel,
} from '@grassflow/gpu-layers';
import { fileURLToPath } from 'node:url';
import { redactUrl } from '@grassflow/checkpoints';
import { resolveCheckpointDir, UsageError, type FlagSpecs } from '@grassflow/training';
import {
  dataDirOrThrow,
  loadTokenizer,
  tokenizerOfPretrained,
  type CorpusTokenizer,
  type TokenizerKind,
} from './corpus.js';

/** An export folder (`grassflow-lm export`): the model and the tokenizer it carries (the data folder is not read). */
async function loadExport(
  dir: string,
  tokenizerFlag: string | undefined,
  trust: boolean,
): Promise<{ model: LanguageModel; tok: CorpusTokenizer; dir: string }> {
  const loaded = await loadPretrained(dir, { trust });
  try {
    const tok = tokenizerOfPretrained(loaded.dir, loaded.tokenizer);
    if (tokenizerFlag !== undefined && tokenizerFlag !== tok.kind) {
      throw new UsageError(`${dir} is an export with the ${tok.kind} tokenizer: leave out --tokenizer`, 'tokenizer');
    }
    if (tok.vocabSize !== loaded.config.vocabSize) {
      throw new UsageError(
        `${dir}: its tokenizer has ${tok.vocabSize} tokens but the model has vocabSize ${loaded.config.vocabSize}`,
        'checkpoint',
      );
    }
    return { model: loaded.model, tok, dir: loaded.dir };
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
}

/** The path of a file: URL (file:///runs/x), or the path given. */
function folderOfFileUrl(given: string): string {
  if (!/^file:/i.test(given)) return given;
  try {
    return fileURLToPath(given);
  } catch (error) {
    throw new UsageError(
      `--checkpoint ${given}: not a local file: URL (${(error as Error).message}); give file:///absolute/path or a path`,
      'checkpoint',
    );
  }
}

/**
 * Load a model checkpoint and the tokenizer it was trained with (from its `extra.run`, or `tokenizerFlag`). One whose
 * config.json records no SHA-256 of its weights is refused unless `trust` (--trust), and then loaded with a warning.
 */
export async function loadModelAndTokenizer(
  given: string,
  dataDir: string,
  tokenizerFlag: string | undefined,
  trust = false,
): Promise<{ model: LanguageModel; tok: CorpusTokenizer; dir: string }> {
  if (isPretrainedUrl(given)) {
    const dir = await downloadPretrained(given, { trust });
    return { ...(await loadExport(dir, tokenizerFlag, trust)), dir: redactUrl(given) };
  }
  const checkpoint = folderOfFileUrl(given);
  if (await isPretrainedFolder(checkpoint)) return loadExport(checkpoint, tokenizerFlag, trust);
  const dir = resolveCheckpointDir(checkpoint, 'grassflow-lm-run');
  const ck = await loadCheckpoint(dir, { trust });
  for (const t of ck.extraTensors.values()) t.dispose();
  if (ck.unverified.length > 0) {
    process.stderr.write(
      `warning: ${dir}: config.json records no SHA-256 for ${ck.unverified.join(' and ')}, so its bytes are not ` +
        'verified (a hand-written or edited checkpoint, loaded as --trust asks)\n',
    );
  }
  const run = ck.extra['run'] as { tokenizer?: string; tokenizerId?: string } | undefined;
  const kind = (tokenizerFlag ?? run?.tokenizer) as TokenizerKind | undefined;
  if (kind === undefined) {
    ck.model.dispose();
    throw new UsageError(
      `${dir} does not record its tokenizer (not written by grassflow-lm): pass --tokenizer wordpiece|word`,
      'tokenizer',
    );
  }
  const tok = await loadTokenizer(kind, dataDir);
  if (run?.tokenizerId !== undefined && tokenizerFlag === undefined && run.tokenizerId !== tok.id) {
    ck.model.dispose();
    throw new UsageError(
      `${dir} was trained with tokenizer ${run.tokenizerId}, but the data folder gives ${tok.id}: use the same data folder`,
      'data-dir',
    );
  }
  if (tok.vocabSize !== ck.config.vocabSize) {
    ck.model.dispose();
    throw new UsageError(
      `tokenizer ${kind} has ${tok.vocabSize} tokens but the model has vocabSize ${ck.config.vocabSize}`,
      'tokenizer',
    );
  }
  return { model: ck.model, tok, dir };
}

/** Flags that locate a checkpoint and its data (eval, generate and inspect). */
export const CHECKPOINT_FLAGS = {
  checkpoint: {
    type: 'string',
    metavar: 'DIR|URL',
    help:
      'checkpoint folder, a run folder (its best checkpoint), an export folder (grassflow-lm export) or the http(s) ' +
      'URL of a served export folder (downloaded once into the user cache, every file checked by its SHA-256)',
  },
  tokenizer: {
    type: 'string',
    choices: ['wordpiece', 'word'],
    help: 'tokenizer (default: the one the checkpoint records)',
  },
  'data-dir': {
    type: 'string',
    metavar: 'DIR',
    help: 'data folder (default GRASSFLOW_DATA_DIR, else ~/.cache/grassflow)',
  },
  backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend (default: the first that loads)' },
  trust: {
    type: 'boolean',
    help: 'load a checkpoint whose config.json records no SHA-256 of its weights (hand-written or edited; refused without it)',
  },
} as const satisfies FlagSpecs;

/** A checkpoint to load: where, with which tokenizer override, from which data folder, on which backend. */
export interface CheckpointSource {
  checkpoint: string;
  tokenizer: string | undefined;
  dataDir: string;
  backend: string | undefined;
  /** --trust: load a checkpoint whose weights config.json records no SHA-256 of. */
  trust: boolean;
}

/** The checkpoint source of parsed flags (--checkpoint is required). */
export function checkpointSourceOf(f: {
  checkpoint?: string | undefined;
  tokenizer?: string | undefined;
  'data-dir'?: string | undefined;
  backend?: string | undefined;
  trust?: boolean | undefined;
}): CheckpointSource {
  if (f.checkpoint === undefined) throw new UsageError('--checkpoint DIR|URL is required', 'checkpoint');
  return {
    checkpoint: f.checkpoint,
    tokenizer: f.tokenizer,
    dataDir: dataDirOrThrow(f['data-dir']),
    backend: f.backend,
    trust: f.trust === true,
  };
}

// A pretrained-model folder, in the Hugging Face spirit: what someone needs to run a model, and nothing of its
// training (no optimizer moments, no RNG state). It is a checkpoint folder (config.json + model.safetensors, written by
// saveCheckpoint, so loadCheckpoint reads it as is) plus the tokenizer's files, their settings and a model card.
//
// This package cannot build the tokenizer itself: @grassflow/tokenizers is not among its dependencies (data flows
// checkpoints ← gpu-layers ← training ← apps, and tokenizers feed the apps). So the tokenizer travels as files and a
// JSON of settings that the package which has both reads (grassflow-lm's fromPretrained).
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CheckpointError,
  checkPlainJson,
  nodeFileSystem,
  temporarySibling,
  writeFileAtomic,
  type CheckpointJson,
  type FileSystemOps,
} from '@grassflow/checkpoints';
import { loadCheckpoint, saveCheckpoint, type LoadCheckpointOptions, type LoadedCheckpoint } from './checkpoint.js';
import type { LanguageModel } from '../shared/language-model.js';

/** `extra.pretrained.format` of a pretrained folder's config.json: what tells it from a training checkpoint. */
export const PRETRAINED_FORMAT = 'grassflow-pretrained';
export const PRETRAINED_FORMAT_VERSION = 1;

/** The files of a pretrained folder besides the tokenizer's own (whose names its settings list). */
export const PRETRAINED_FILES = {
  config: CHECKPOINT_FILES.config,
  model: CHECKPOINT_FILES.model,
  /** The tokenizer's settings: `{ kind, files: { role: file name }, … }`, read by whoever builds the tokenizer. */
  tokenizer: 'tokenizer_config.json',
  /** The model card. */
  card: 'README.md',
} as const;

type JsonObject = { readonly [key: string]: CheckpointJson };

/** A tokenizer as files: its settings JSON and the files it names (vocab.txt, …), by file name. */
export interface PretrainedTokenizerFiles {
  /** tokenizer_config.json. `files` maps a role (e.g. `vocab`) to a file name of the folder. */
  readonly config: JsonObject & { readonly kind: string; readonly files: { readonly [role: string]: string } };
  /** The contents of each file `config.files` names (written as given), by file name. */
  readonly files: ReadonlyMap<string, string | Uint8Array>;
}

/** Options of {@link savePretrained}. */
export interface SavePretrainedOptions {
  readonly tokenizer: PretrainedTokenizerFiles;
  /** README.md: the model card (Markdown). */
  readonly card: string;
  /** JSON kept in config.json's `extra` (where the model came from: run, step, tokens seen, …). */
  readonly extra?: JsonObject;
  /** File-system operations (default: node:fs). */
  readonly fs?: FileSystemOps;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const RESERVED = new Set<string>([...Object.values(PRETRAINED_FILES), CHECKPOINT_FILES.extra]);

function checkTokenizer(tok: PretrainedTokenizerFiles): void {
  checkPlainJson(tok.config, 'tokenizer config');
  for (const [role, name] of Object.entries(tok.config.files)) {
    if (!SAFE_NAME.test(name) || RESERVED.has(name)) {
      throw new CheckpointError(
        'INVALID_ARGUMENT',
        `tokenizer file '${role}' has a name a folder cannot hold: ${name}`,
      );
    }
    if (!tok.files.has(name)) {
      throw new CheckpointError('INVALID_ARGUMENT', `tokenizer file '${role}' (${name}) is named but not given`);
    }
  }
}

/** Whether `dir/config.json` is a pretrained folder's (a checkpoint config whose extra.pretrained says so). */
async function isPretrainedConfig(dir: string): Promise<boolean> {
  try {
    const cfg = JSON.parse(await readFile(join(dir, PRETRAINED_FILES.config), 'utf8')) as {
      format?: unknown;
      extra?: { pretrained?: { format?: unknown } };
    } | null;
    return cfg?.format === CHECKPOINT_FORMAT && cfg.extra?.pretrained?.format === PRETRAINED_FORMAT;
  } catch {
    return false;
  }
}

/** Whether `dir` is a folder {@link savePretrained} wrote (false for a missing path, a run or a checkpoint folder). */
export async function isPretrainedFolder(dir: string): Promise<boolean> {
  return isPretrainedConfig(dir);
}

/** 'missing' | 'empty' | 'pretrained'; anything else is refused, since the new folder replaces it whole. */
async function targetKind(target: string): Promise<'missing' | 'empty' | 'pretrained'> {
  let entries: string[];
  try {
    if (!(await stat(target)).isDirectory()) {
      throw new CheckpointError('NOT_A_DIRECTORY', `${target} is a file: give a new, empty or pretrained folder`);
    }
    entries = await readdir(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  if (entries.length === 0) return 'empty';
  if (await isPretrainedConfig(target)) return 'pretrained';
  throw new CheckpointError(
    'TARGET_NOT_CHECKPOINT',
    `refusing to write to ${target}: it is not empty and not a pretrained folder (its ${PRETRAINED_FILES.config} ` +
      `has no extra.pretrained.format "${PRETRAINED_FORMAT}"); give a new or empty folder`,
  );
}

/**
 * Writes `model` as a pretrained folder `dir`: config.json + model.safetensors (saveCheckpoint: PyTorch names, SHA-256s
 * in config.json, `extra.pretrained` marking the folder), the tokenizer's settings and files, and the card. The folder
 * is filled beside `dir` and renamed into place, so `dir` never holds half an export; a previous pretrained folder
 * there is replaced, any other non-empty folder refused.
 */
export async function savePretrained(
  dir: string,
  model: LanguageModel,
  options: SavePretrainedOptions,
): Promise<{ readonly dir: string }> {
  const target = resolve(dir);
  const fs = options.fs ?? nodeFileSystem;
  checkTokenizer(options.tokenizer);
  const kind = await targetKind(target);
  const stage = temporarySibling(target, 'export');
  try {
    await saveCheckpoint(stage, model, {
      extra: {
        ...options.extra,
        pretrained: { format: PRETRAINED_FORMAT, formatVersion: PRETRAINED_FORMAT_VERSION },
      },
      fs,
    });
    const tokenizerJson = `${JSON.stringify(options.tokenizer.config, null, 2)}\n`;
    await writeFileAtomic(join(stage, PRETRAINED_FILES.tokenizer), tokenizerJson, fs);
    for (const name of Object.values(options.tokenizer.config.files)) {
      await writeFileAtomic(join(stage, name), options.tokenizer.files.get(name) as string | Uint8Array, fs);
    }
    await writeFileAtomic(join(stage, PRETRAINED_FILES.card), options.card, fs);
    // The one step that changes `dir`: a rename of the complete folder (an earlier export is moved aside first).
    const old = kind === 'pretrained' ? temporarySibling(target, 'old') : undefined;
    if (kind === 'empty') await fs.remove(target);
    if (old !== undefined) await fs.rename(target, old);
    try {
      await fs.rename(stage, target);
    } catch (error) {
      if (old !== undefined) await fs.rename(old, target).catch(() => undefined);
      throw error;
    }
    if (old !== undefined) await fs.remove(old);
    await fs.syncDirectory(resolve(target, '..'));
  } finally {
    await fs.remove(stage).catch(() => undefined);
  }
  return { dir: target };
}

/** A loaded pretrained folder. The caller disposes `model`. */
export interface LoadedPretrained {
  readonly model: LoadedCheckpoint['model'];
  readonly config: LoadedCheckpoint['config'];
  /** config.json's `extra` (with `pretrained`), as savePretrained was given it. */
  readonly extra: LoadedCheckpoint['extra'];
  /** tokenizer_config.json, and the absolute path of each file it names, by role. */
  readonly tokenizer: {
    readonly config: PretrainedTokenizerFiles['config'];
    readonly paths: { readonly [role: string]: string };
  };
  readonly dir: string;
}

/**
 * Loads a folder {@link savePretrained} wrote: the model (loadCheckpoint: sizes, SHA-256s, names and shapes checked)
 * and where its tokenizer's files are, to build the tokenizer with (see the file comment for why not here).
 */
export async function loadPretrained(dir: string, options: LoadCheckpointOptions = {}): Promise<LoadedPretrained> {
  const target = resolve(dir);
  if (!(await isPretrainedConfig(target))) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${target} is not a pretrained folder (no ${PRETRAINED_FILES.config} with extra.pretrained.format ` +
        `"${PRETRAINED_FORMAT}"): export a run first, e.g. grassflow-lm export RUN --out DIR`,
    );
  }
  let config: unknown;
  try {
    config = JSON.parse(await readFile(join(target, PRETRAINED_FILES.tokenizer), 'utf8'));
  } catch (cause) {
    throw new CheckpointError(
      'MISSING_FILE',
      `${target}: ${PRETRAINED_FILES.tokenizer} is missing or not JSON (${(cause as Error).message})`,
      { cause },
    );
  }
  const tok = config as Partial<PretrainedTokenizerFiles['config']> | null;
  if (typeof tok?.kind !== 'string' || typeof tok.files !== 'object' || tok.files === null) {
    throw new CheckpointError('INVALID_CONFIG', `${target}: ${PRETRAINED_FILES.tokenizer} needs "kind" and "files"`);
  }
  const paths: Record<string, string> = {};
  for (const [role, name] of Object.entries(tok.files)) {
    if (typeof name !== 'string' || !SAFE_NAME.test(name)) {
      throw new CheckpointError('INVALID_CONFIG', `${target}: tokenizer file '${role}' has a bad name`);
    }
    paths[role] = join(target, name);
  }
  const loaded = await loadCheckpoint(target, options);
  for (const t of loaded.extraTensors.values()) t.dispose();
  return {
    model: loaded.model,
    config: loaded.config,
    extra: loaded.extra,
    tokenizer: { config: tok as PretrainedTokenizerFiles['config'], paths },
    dir: target,
  };
}

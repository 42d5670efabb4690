// A pretrained-model folder, in the Hugging Face spirit: what someone needs to run a model, and nothing of its
// training (no optimizer moments, no RNG state). It is a checkpoint folder (config.json + model.safetensors, written by
// saveCheckpoint, so loadCheckpoint reads it as is) plus the tokenizer's files, their settings and a model card.
//
// config.json records every file's size and SHA-256 (model.safetensors under `files`, as any checkpoint; the others
// under `extra.pretrained.files`), so a copy or a download of the folder is checked file by file.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  CHECKPOINT_CONFIG_MAX_BYTES,
  CHECKPOINT_FILES,
  CheckpointError,
  checkPlainJson,
  nodeFileSystem,
  replaceDirectory,
  writeFileAtomic,
  type CheckpointJson,
  type FileSystemOps,
} from '@grassflow/checkpoints';
import { loadCheckpoint, saveCheckpoint, type LoadCheckpointOptions, type LoadedCheckpoint } from './checkpoint.js';
import {
  checkPretrainedFile,
  isPretrainedConfigJson,
  notPretrainedError,
  hubConfigFields,
  parseTokenizerConfig,
  HUGGING_FACE_TOKENIZER,
  PRETRAINED_FILES,
  tokenizerFilesRead,
  PRETRAINED_FORMAT,
  PRETRAINED_FORMAT_VERSION,
  pretrainedFileCap,
  pretrainedFileRecords,
  pretrainedFolderUrl,
  pretrainedModel,
  pretrainedModelConfig,
  pretrainedTokenizer,
  readPretrainedTokenizer,
  SAFE_FILE_NAME,
  shownUrl,
  type PretrainedFileRecord,
  type PretrainedModel,
  type PretrainedTokenizerConfig,
} from './pretrained-model.js';
import { isPretrainedUrl, localFolderOf, type DownloadPretrainedOptions } from './pretrained-download.js';
import { ensureBackend } from '../backend/backend.js';
import type { LanguageModel } from '../language-model/language-model.js';

export { PRETRAINED_FILES, PRETRAINED_FORMAT, PRETRAINED_FORMAT_VERSION };

type JsonObject = { readonly [key: string]: CheckpointJson };

/** A tokenizer as files: its settings JSON and the files it names (vocab.txt, …), by file name. */
export interface PretrainedTokenizerFiles {
  /** tokenizer_config.json. `files` maps a role (e.g. `vocab`) to a file name of the folder. */
  readonly config: PretrainedTokenizerConfig;
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

const RESERVED = new Set<string>([...Object.values(PRETRAINED_FILES), CHECKPOINT_FILES.extra]);

const TOKENIZER_SHAPE =
  '{ config: { kind: "wordpiece", files: { vocab: "vocab.txt" }, preparation, … }, files: Map of file name → contents }';

/**
 * The options as plain JavaScript may pass them (a missing tokenizer or card is named, not a TypeError), then each
 * tokenizer file named and given.
 */
function checkOptions(options: SavePretrainedOptions | undefined): asserts options is SavePretrainedOptions {
  const fail = (message: string): never => {
    throw new CheckpointError('INVALID_ARGUMENT', `savePretrained: ${message}`);
  };
  if (typeof options !== 'object' || options === null) {
    fail(`options are required: { tokenizer: ${TOKENIZER_SHAPE}, card: string }`);
  }
  const tok = (options as { tokenizer?: unknown }).tokenizer as Partial<PretrainedTokenizerFiles> | undefined;
  if (typeof tok !== 'object' || tok === null) fail(`options.tokenizer is required: ${TOKENIZER_SHAPE}`);
  if (typeof tok?.config !== 'object' || tok.config === null) {
    fail(`options.tokenizer.config is required (tokenizer_config.json's settings): ${TOKENIZER_SHAPE}`);
  }
  if (!(tok?.files instanceof Map)) fail(`options.tokenizer.files must be a Map of file name → contents`);
  if (typeof (options as { card?: unknown }).card !== 'string') {
    fail('options.card is required: the model card (README.md), a Markdown string');
  }
  const { config, files } = (options as SavePretrainedOptions).tokenizer;
  checkPlainJson(config, 'tokenizer config');
  for (const [role, name] of Object.entries(config.files ?? {})) {
    if (typeof name !== 'string' || !SAFE_FILE_NAME.test(name) || RESERVED.has(name)) {
      fail(`tokenizer file '${role}' has a name a folder cannot hold: ${String(name)}; give a plain file name`);
    }
    if (!files.has(name)) fail(`tokenizer file '${role}' (${name}) is named but not given: add it to tokenizer.files`);
  }
}

/** Whether `dir/config.json` is a pretrained folder's (a checkpoint config whose extra.pretrained says so). */
async function isPretrainedConfig(dir: string): Promise<boolean> {
  try {
    return isPretrainedConfigJson(JSON.parse(await readFile(join(dir, PRETRAINED_FILES.config), 'utf8')));
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
  if (await isPretrainedConfig(target)) {
    // an earlier export is replaced whole: refused when it holds anything the export did not write (NOTES.md, …)
    let written: Set<string>;
    try {
      const cfg: unknown = JSON.parse(await readFile(join(target, PRETRAINED_FILES.config), 'utf8'));
      written = new Set([PRETRAINED_FILES.config, ...pretrainedFileRecords(cfg, target).keys()]);
    } catch {
      written = new Set([PRETRAINED_FILES.config]);
    }
    const added = entries.filter((n) => !written.has(n)).sort();
    if (added.length === 0) return 'pretrained';
    throw new CheckpointError(
      'TARGET_NOT_CHECKPOINT',
      `refusing to replace the earlier export ${target}: it holds files the export did not write ` +
        `(${added.slice(0, 3).join(', ')}${added.length > 3 ? ', …' : ''}); move them out, or give another folder`,
    );
  }
  throw new CheckpointError(
    'TARGET_NOT_CHECKPOINT',
    `refusing to write to ${target}: it is not empty and not a pretrained folder (its ${PRETRAINED_FILES.config} ` +
      `has no extra.pretrained.format "${PRETRAINED_FORMAT}"); give a new or empty folder`,
  );
}

/**
 * Writes `model` as a pretrained folder `dir`: config.json + model.safetensors (saveCheckpoint: PyTorch names, SHA-256s
 * in config.json, `extra.pretrained` marking the folder and recording the other files' sizes and SHA-256s), the
 * tokenizer's settings and files, and the card. The folder
 * is filled beside `dir` and renamed into place, so `dir` never holds half an export; a previous pretrained folder
 * there is replaced, any other non-empty folder refused.
 */
export async function savePretrained(
  dir: string,
  model: LanguageModel,
  options: SavePretrainedOptions,
): Promise<{ readonly dir: string }> {
  checkOptions(options);
  const target = resolve(dir);
  const fs = options.fs ?? nodeFileSystem;
  const given = options.tokenizer;
  // What fromPretrained would refuse is refused here, by the same checks on the same text, before anything is written.
  const fileText = (name: string): string => {
    const data = given.files.get(name);
    return typeof data === 'string' ? data : new TextDecoder().decode(data);
  };
  const tokenizer = pretrainedTokenizer(
    parseTokenizerConfig(`${JSON.stringify(given.config, null, 2)}\n`, target),
    fileText,
    target,
    model.config.vocabSize,
  );
  pretrainedModel({ model, extra: {} }, tokenizer, target);
  // Hugging Face's tokenizer.json beside the vocabulary, unless one is given: the folder is one their tools read.
  const { role, file } = HUGGING_FACE_TOKENIZER;
  const withJson = role in given.config.files || given.files.has(file);
  const tokenizerFiles = withJson ? given.files : new Map([...given.files, [file, tokenizer.tokenizerJson()] as const]);
  const config = withJson ? given.config : { ...given.config, files: { ...given.config.files, [role]: file } };
  const tokenizerText = `${JSON.stringify(config, null, 2)}\n`;
  await targetKind(target);
  // Every file but config.json and model.safetensors (which saveCheckpoint records), with its record.
  const contents = new Map<string, string | Uint8Array>([
    [PRETRAINED_FILES.tokenizer, tokenizerText],
    ...Object.values(config.files).map((name) => [name, tokenizerFiles.get(name) as string | Uint8Array] as const),
    [PRETRAINED_FILES.card, options.card],
  ]);
  const files: Record<string, CheckpointJson> = {};
  for (const [name, data] of contents) {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    files[name] = { bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
  const fill = async (stage: string) => {
    await saveCheckpoint(stage, model, {
      extra: {
        ...options.extra,
        pretrained: { format: PRETRAINED_FORMAT, formatVersion: PRETRAINED_FORMAT_VERSION, files },
      },
      fs,
    });
    // Hugging Face's fields (model_type, architectures) first, beside the checkpoint's own: config.json is no file
    // record's, so it may be rewritten here.
    const configPath = join(stage, PRETRAINED_FILES.config);
    const written = JSON.parse(await readFile(configPath, 'utf8')) as JsonObject;
    const withHub = { ...hubConfigFields(model.config), ...written };
    await writeFileAtomic(configPath, `${JSON.stringify(withHub, null, 2)}\n`, fs);
    for (const [name, data] of contents) await writeFileAtomic(join(stage, name), data, fs);
  };
  // checkpoints' swap: the folder is filled beside `dir`, then renamed into place (targetKind checked `dir` above)
  await replaceDirectory(target, fs, fill, () => Promise.resolve());
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

/** Options of {@link loadPretrained}: how to read the files, and how to download a URL's. */
export interface LoadPretrainedOptions extends LoadCheckpointOptions, DownloadPretrainedOptions {}

/**
 * Loads a folder {@link savePretrained} wrote (its path, its file: URL, or the http(s) URL of the folder served,
 * downloaded into the cache by downloadPretrained): config.json, the tokenizer's settings and files, each file within
 * the size its role allows and checked against its record in config.json, then the model (loadCheckpoint: the
 * parameter count of config.json against the weights' header before anything is built, then sizes, SHA-256s, names
 * and shapes).
 */
export async function loadPretrained(dir: string, options: LoadPretrainedOptions = {}): Promise<LoadedPretrained> {
  const target = resolve(await localFolderOf(dir, options));
  const configPath = join(target, PRETRAINED_FILES.config);
  const size = async (path: string) => (await stat(path).catch(() => undefined))?.size ?? 0;
  if ((await size(configPath)) > CHECKPOINT_CONFIG_MAX_BYTES) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${configPath} is too large (more than ${CHECKPOINT_CONFIG_MAX_BYTES / 1024 / 1024} MiB; an export's is a few ` +
        'KiB): not a pretrained folder',
    );
  }
  let cfg: unknown;
  try {
    cfg = JSON.parse(await readFile(configPath, 'utf8'));
  } catch {
    cfg = undefined;
  }
  if (!isPretrainedConfigJson(cfg)) throw notPretrainedError(target);
  const model = pretrainedModelConfig(cfg, configPath);
  // Records of the files besides model.safetensors, which loadCheckpoint checks (absent in exports made before the
  // records: nothing to check them against).
  const records = pretrainedFileRecords(cfg, target);
  records.delete(PRETRAINED_FILES.model);
  const read = async (name: string, rec: PretrainedFileRecord | undefined): Promise<Uint8Array> => {
    const path = join(target, name);
    const cap = pretrainedFileCap(name, model);
    if ((await size(path)) > cap) {
      throw new CheckpointError('INVALID_CONFIG', `${path} is larger than the ${cap} bytes a ${name} may have`);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (cause) {
      throw new CheckpointError('MISSING_FILE', `${target}: ${name} is missing (${(cause as Error).message})`, {
        cause,
      });
    }
    if (rec !== undefined && (options.verifyChecksums ?? true)) await checkPretrainedFile(bytes, name, rec, target);
    return bytes;
  };
  const text = async (name: string): Promise<string> => new TextDecoder().decode(await read(name, records.get(name)));
  const tok = parseTokenizerConfig(await text(PRETRAINED_FILES.tokenizer), target);
  const paths: Record<string, string> = {};
  const needed = new Set(tokenizerFilesRead(tok));
  for (const [role, name] of Object.entries(tok.files)) {
    // Hugging Face's tokenizer.json is for their tools: listed where it is (a URL's download leaves it behind)
    if (!needed.has(name) && (await stat(join(target, name)).catch(() => undefined)) === undefined) continue;
    await read(name, records.get(name));
    paths[role] = join(target, name);
  }
  const loaded = await loadCheckpoint(target, options);
  for (const t of loaded.extraTensors.values()) t.dispose();
  return {
    model: loaded.model,
    config: loaded.config,
    extra: loaded.extra,
    tokenizer: { config: tok, paths },
    dir: target,
  };
}

/** Options of {@link fromPretrained} (Node). */
export type FromPretrainedOptions = LoadPretrainedOptions;

/**
 * A pretrained model, text in and text out (`grassflow-lm export RUN --out DIR` writes one), from a folder or from
 * the URL of a served folder (http(s): downloaded once into the user cache, every file checked by its SHA-256, see
 * downloadPretrained; file: URLs are folders). With no backend set up yet, it sets one up as `initBackend()` does
 * (GRASSFLOW_BACKEND, else the first that loads).
 */
export async function fromPretrained(dirOrUrl: string, options: FromPretrainedOptions = {}): Promise<PretrainedModel> {
  await ensureBackend();
  const loaded = await loadPretrained(dirOrUrl, options);
  try {
    // loadPretrained has just checked each file against its record (and allows folders exported unrecorded).
    const read = (name: string): Promise<Uint8Array> => readFile(join(loaded.dir, name));
    const tokenizer = await readPretrainedTokenizer(loaded.extra, read, loaded.dir, {
      verifyChecksums: false,
      vocabSize: loaded.config.vocabSize,
    });
    return pretrainedModel(
      loaded,
      tokenizer,
      isPretrainedUrl(dirOrUrl) ? shownUrl(pretrainedFolderUrl(dirOrUrl)) : loaded.dir,
    );
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
}

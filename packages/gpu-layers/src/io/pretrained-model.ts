// A pretrained folder as text in, text out — the part every runtime shares (no node: modules): its layout and
// records, the SHA-256 check of each file (Web Crypto), the tokenizer its tokenizer_config.json describes, and
// generate/stream over the constant-memory decoder. Where the bytes come from is the caller's: a folder on disk
// (pretrained.ts), a URL cached on disk (pretrained-download.ts) or fetched by a browser (pretrained-fetch.ts).
import {
  CHECKPOINT_CONFIG_MAX_BYTES,
  CHECKPOINT_FILES,
  CHECKPOINT_FORMAT,
  CheckpointError,
  redactUrl,
  webSha256Hex,
  type CheckpointJson,
} from '@grassflow/checkpoints';
import { Prng } from '@grassflow/prng';
// The pure-TypeScript entry in Node too: the same ids as the native WordPieceTokenizer, and importing gpu-layers
// never loads Hugging Face's native binding.
import {
  ContinuationStream,
  continuationText,
  PureWordPieceTokenizer,
  wikitextForWordPiece,
  wordPieceLines,
} from '@grassflow/tokenizers/browser';
import { appSlideKeep, sampleIds } from '../decoding/sampling.js';
import { countParams, validateModelConfig, type ModelConfig } from '../config/model-config.js';
import type { LanguageModel } from '../language-model/language-model.js';
import { unverifiedError } from './checkpoint-model.js';

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

/**
 * The WordPiece tokenizer as Hugging Face's `tokenizers` reads it (Rust, Python, transformers.js): tokenizer_config.json
 * names it under `files` by this role; savePretrained writes it when it is not given.
 */
export const HUGGING_FACE_TOKENIZER = { role: 'huggingFace', file: 'tokenizer.json' } as const;

/** The files of tokenizer_config.json's `files` that grassflow reads (all but Hugging Face's): a loader fetches these. */
export function tokenizerFilesRead(config: { readonly files: { readonly [role: string]: string } }): string[] {
  return Object.entries(config.files)
    .filter(([role]) => role !== HUGGING_FACE_TOKENIZER.role)
    .map(([, name]) => name);
}

/**
 * How grassflow-lm prepares WikiText for BERT WordPiece (tokenizer_config.json's `preparation`): the prompt through
 * wikitextForWordPiece, then WordPiece without special tokens; decoded text with each [SEP] as a line end.
 */
export const WIKITEXT_WORDPIECE_PREPARATION = 'wikitext-tokens:unk-markers-sep:v1';

type JsonObject = { readonly [key: string]: CheckpointJson };

/**
 * The fields Hugging Face's tools read first in config.json (`model_type`, `architectures`), written beside
 * grassflow's own by savePretrained: the architecture's name, so a hub page or a loader can tell what it is.
 */
export function hubConfigFields(config: Pick<ModelConfig, 'kind'>): {
  readonly model_type: string;
  readonly architectures: readonly string[];
} {
  return config.kind === 'transformer'
    ? { model_type: 'grassflow_transformer', architectures: ['GrassflowTransformerForCausalLM'] }
    : { model_type: 'grassflow_grassmann', architectures: ['GrassflowGrassmannForCausalLM'] };
}

/** tokenizer_config.json. `files` maps a role (e.g. `vocab`) to a file name of the folder. */
export type PretrainedTokenizerConfig = JsonObject & {
  readonly kind: string;
  readonly files: { readonly [role: string]: string };
};

/** A file of the folder as config.json records it: its size and SHA-256 (hex). */
export interface PretrainedFileRecord {
  readonly bytes: number;
  readonly sha256: string;
}

/** File names a folder may hold (no path separators, no leading dot): names from a server are checked against it. */
export const SAFE_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a checkpoint's `extra` (config.json's, as loadCheckpoint and loadCheckpointFromBytes return it) marks a
 * pretrained folder, one that carries its tokenizer (see {@link readPretrainedTokenizer}).
 */
export function isPretrainedExtra(extra: unknown): boolean {
  return isObject(extra) && isObject(extra['pretrained']) && extra['pretrained']['format'] === PRETRAINED_FORMAT;
}

/** Whether config.json (parsed) is a pretrained folder's: a checkpoint config whose extra.pretrained says so. */
export function isPretrainedConfigJson(cfg: unknown): boolean {
  return isObject(cfg) && cfg['format'] === CHECKPOINT_FORMAT && isPretrainedExtra(cfg['extra']);
}

/** The error for a config.json that is not a pretrained folder's, with the command that makes one. */
export function notPretrainedError(where: string): CheckpointError {
  return new CheckpointError(
    'INVALID_CONFIG',
    `${where} is not a pretrained folder (no ${PRETRAINED_FILES.config} with extra.pretrained.format ` +
      `"${PRETRAINED_FORMAT}"): export a run first, e.g. grassflow-lm export RUN --out DIR`,
  );
}

/**
 * Every file a pretrained config.json records, by name: `files` (model.safetensors, as every checkpoint records it)
 * and `extra.pretrained.files` (the tokenizer's files and the card, recorded at export). Empty for a folder exported
 * before the records existed. Names that a folder cannot hold (a path, a dot file) are refused.
 */
export function pretrainedFileRecords(cfg: unknown, where: string): Map<string, PretrainedFileRecord> {
  const out = new Map<string, PretrainedFileRecord>();
  const c = isObject(cfg) ? cfg : {};
  const extra = isObject(c['extra']) ? c['extra'] : {};
  const pretrained = isObject(extra['pretrained']) ? extra['pretrained'] : {};
  for (const records of [c['files'], pretrained['files']]) {
    if (records === undefined) continue;
    if (!isObject(records)) throw new CheckpointError('INVALID_CONFIG', `${where}: "files" must be an object`);
    for (const [name, r] of Object.entries(records)) {
      const ok =
        SAFE_FILE_NAME.test(name) &&
        name !== PRETRAINED_FILES.config &&
        isObject(r) &&
        Number.isSafeInteger(r['bytes']) &&
        typeof r['sha256'] === 'string' &&
        /^[0-9a-f]{64}$/.test(r['sha256']);
      if (!ok) {
        throw new CheckpointError(
          'INVALID_CONFIG',
          `${where}: the record of file ${JSON.stringify(name)} must name a file of the folder and be ` +
            '{"bytes": integer, "sha256": 64 hex digits}',
        );
      }
      const rec = r as { bytes: number; sha256: string };
      out.set(name, { bytes: rec.bytes, sha256: rec.sha256 });
    }
  }
  return out;
}

/**
 * The URL of a served folder, as the base its files resolve against: a path ending in `/` (`…/model?x` is the folder
 * `model`, not its parent), `?query` kept for each file (see {@link pretrainedFileUrl}), `#fragment` dropped.
 */
export function pretrainedFolderUrl(url: string, page?: string): URL {
  const u = new URL(url, page);
  if (!u.pathname.endsWith('/')) u.pathname = `${u.pathname}/`;
  u.hash = '';
  return u;
}

/** The URL of the file `name` of the folder at `folder` ({@link pretrainedFolderUrl}), with the folder's query. */
export function pretrainedFileUrl(folder: URL, name: string): string {
  const u = new URL(name, folder);
  u.search = folder.search;
  return u.href;
}

/** `url` as messages show it: without its password, without its query (it may hold a token). */
export function shownUrl(url: string | URL): string {
  const u = new URL(typeof url === 'string' ? url : url.href);
  u.search = '';
  return redactUrl(u.href);
}

/** Largest tokenizer file (vocab.txt, …) a loader reads: 8 MiB (BERT's vocab.txt is 232 KiB). */
export const PRETRAINED_TOKENIZER_FILE_MAX_BYTES = 8 * 1024 * 1024;
/** Room for model.safetensors' header beside its float32 values: 1 MiB (a 12-layer model's is a few KiB). */
const MODEL_HEADER_ALLOWANCE = 1024 * 1024;

/** config.json's `model` as a ModelConfig, or a CheckpointError naming the folder. */
export function pretrainedModelConfig(cfg: unknown, where: string): ModelConfig {
  try {
    return validateModelConfig(isObject(cfg) ? cfg['model'] : undefined);
  } catch (cause) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where}: ${PRETRAINED_FILES.config} describes no valid model (${(cause as Error).message})`,
      { cause },
    );
  }
}

/**
 * The most bytes the loader reads of a file of an export, whatever config.json records for it: config files 1 MiB,
 * tokenizer files 8 MiB, model.safetensors the float32 values of the parameters `model` implies plus its header.
 */
export function pretrainedFileCap(name: string, model: ModelConfig): number {
  if (name === PRETRAINED_FILES.model) return 4 * countParams(model) + 8 + MODEL_HEADER_ALLOWANCE;
  if (name === PRETRAINED_FILES.config || name === PRETRAINED_FILES.tokenizer) return CHECKPOINT_CONFIG_MAX_BYTES;
  return PRETRAINED_TOKENIZER_FILE_MAX_BYTES;
}

/** The error for a needed file config.json does not record: its bytes cannot be checked. */
function unrecordedError(where: string, name: string): CheckpointError {
  return new CheckpointError(
    'INVALID_CONFIG',
    `${where}: ${PRETRAINED_FILES.config} records no ${name} (an export older than the file records), so its ` +
      'bytes cannot be checked: export the run again (grassflow-lm export RUN --out DIR)',
  );
}

/**
 * The size the loader accepts for the needed file `name`: its record, refused (naming the file) when the record is
 * missing or larger than {@link pretrainedFileCap}, so that no server's config.json sets the limit. Unrecorded
 * weights are `UNVERIFIED`, as loadCheckpoint has them; with `trust` they are read within their cap, unchecked.
 */
export function neededFileBytes(
  name: string,
  records: ReadonlyMap<string, PretrainedFileRecord>,
  model: ModelConfig,
  where: string,
  trust = false,
): number {
  const rec = records.get(name);
  const cap = pretrainedFileCap(name, model);
  if (rec === undefined && name === PRETRAINED_FILES.model) {
    if (trust) return cap;
    const suffix = `/${PRETRAINED_FILES.config}`;
    throw unverifiedError(where.endsWith(suffix) ? where.slice(0, -PRETRAINED_FILES.config.length) : where, [name]);
  }
  if (rec === undefined) {
    throw unrecordedError(where, name);
  }
  if (rec.bytes > cap) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where}: ${PRETRAINED_FILES.config} records ${name} as ${rec.bytes} bytes, more than the ${cap} it can have ` +
        `${name === PRETRAINED_FILES.model ? `for the ${countParams(model)} parameters of its model` : 'at most'}: ` +
        'not an export grassflow wrote; refused before fetching it',
    );
  }
  return rec.bytes;
}

/** Refuses, before anything is fetched, `total` bytes of needed files above the client's `maxTotal`. */
export function checkTotalBytes(where: string, total: number, maxTotal: number): void {
  if (total > maxTotal) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where} records ${total} bytes of files to fetch, more than the ${maxTotal} allowed (the maxTotalBytes ` +
        'option): refused before fetching them',
    );
  }
}

/** tokenizer_config.json's text, checked: `kind` and `files`, each file name one a folder can hold. */
export function parseTokenizerConfig(text: string, where: string): PretrainedTokenizerConfig {
  let cfg: unknown;
  try {
    cfg = JSON.parse(text);
  } catch (cause) {
    throw new CheckpointError('INVALID_CONFIG', `${where}: ${PRETRAINED_FILES.tokenizer} is not JSON`, { cause });
  }
  if (!isObject(cfg) || typeof cfg['kind'] !== 'string' || !isObject(cfg['files'])) {
    throw new CheckpointError('INVALID_CONFIG', `${where}: ${PRETRAINED_FILES.tokenizer} needs "kind" and "files"`);
  }
  for (const [role, name] of Object.entries(cfg['files'])) {
    if (typeof name !== 'string' || !SAFE_FILE_NAME.test(name)) {
      throw new CheckpointError('INVALID_CONFIG', `${where}: tokenizer file '${role}' has a bad name`);
    }
  }
  return cfg as PretrainedTokenizerConfig;
}

/** The message of a file whose bytes are not those config.json records: which file, and what to do. */
export function mismatchMessage(where: string, name: string, why: string): string {
  return (
    `${where}: ${name} ${why} than the ${PRETRAINED_FILES.config} of the folder records, so it is not the file that ` +
    'was exported (changed after the export, or a mix of two exports); refused. Copy or serve the whole export ' +
    'folder again, or export the run again (grassflow-lm export RUN --out DIR)'
  );
}

/** Checks a file's size and SHA-256 against its record (a CheckpointError CORRUPT_FILE naming the file). */
export async function checkPretrainedFile(
  bytes: Uint8Array,
  name: string,
  rec: PretrainedFileRecord,
  where: string,
): Promise<void> {
  if (bytes.byteLength !== rec.bytes) {
    throw new CheckpointError('CORRUPT_FILE', mismatchMessage(where, name, `has other bytes (${bytes.byteLength})`));
  }
  const got = await webSha256Hex(bytes, `${where}: ${name}`, 'serve the page from one');
  if (got !== rec.sha256) {
    throw new CheckpointError('CORRUPT_FILE', mismatchMessage(where, name, `has another SHA-256 (${got})`));
  }
}

/** A pretrained folder's tokenizer: what generate needs. */
export interface PretrainedTokenizer {
  readonly kind: 'wordpiece';
  readonly vocabSize: number;
  /** Ids of a prompt as grassflow-lm generate reads it (no special tokens, no line end). */
  encodePrompt(text: string): Int32Array;
  /** Text of ids, as grassflow-lm generate prints it ([SEP] ends a line). */
  decode(ids: ArrayLike<number>): string;
  idToToken(id: number): string | undefined;
  /** Hugging Face's tokenizer.json of this vocabulary: the same ids from `tokenizers`, transformers.js, transformers. */
  tokenizerJson(): string;
}

/**
 * What this version reads of tokenizer_config.json, checked field by field: `kind` "wordpiece", `files.vocab`, and
 * `preparation` {@link WIKITEXT_WORDPIECE_PREPARATION}. savePretrained refuses, with these messages, what
 * fromPretrained would refuse, since both call it (through {@link pretrainedTokenizer}).
 */
function checkWordPieceConfig(config: PretrainedTokenizerConfig, where: string): void {
  const file = PRETRAINED_FILES.tokenizer;
  const fail = (message: string): never => {
    throw new CheckpointError('INVALID_CONFIG', `${where}: ${file} ${message}`);
  };
  if (config.kind !== 'wordpiece') {
    fail(
      `"kind" is ${JSON.stringify(config.kind)}; this version reads WordPiece tokenizers only: set "kind": ` +
        '"wordpiece" and name a BERT vocab.txt under "files": { "vocab": "vocab.txt" }',
    );
  }
  if (config.files['vocab'] === undefined) {
    fail('has no "files.vocab": name the WordPiece vocab.txt there, e.g. "files": { "vocab": "vocab.txt" }');
  }
  const prep = config['preparation'];
  if (prep === undefined) {
    fail(
      `has no "preparation": set it to "${WIKITEXT_WORDPIECE_PREPARATION}" (WIKITEXT_WORDPIECE_PREPARATION, how ` +
        'grassflow-lm prepares text for WordPiece)',
    );
  }
  if (prep !== WIKITEXT_WORDPIECE_PREPARATION) {
    fail(
      `"preparation" is ${JSON.stringify(prep)}; this version knows "${WIKITEXT_WORDPIECE_PREPARATION}" only: ` +
        'set that, or update @grassflow/gpu-layers if the folder comes from a newer version',
    );
  }
}

/**
 * The tokenizer tokenizer_config.json describes, from its files' text (`fileText(name)`): BERT WordPiece (plain
 * TypeScript, the ids of Hugging Face's library) with {@link WIKITEXT_WORDPIECE_PREPARATION}. Anything else is
 * refused with what it is, so a newer export fails loudly rather than tokenizing differently.
 */
export function pretrainedTokenizer(
  config: PretrainedTokenizerConfig,
  fileText: (name: string) => string,
  where: string,
  vocabSize?: number,
): PretrainedTokenizer {
  checkWordPieceConfig(config, where);
  const vocab = config.files['vocab'] as string;
  const vocabText = fileText(vocab);
  // counted before the tokenizer is built: a vocabulary of millions of lines is refused without its memory
  let lines = vocabText.length > 0 && !vocabText.endsWith('\n') ? 1 : 0;
  for (let at = vocabText.indexOf('\n'); at >= 0; at = vocabText.indexOf('\n', at + 1)) lines++;
  if (vocabSize !== undefined && lines > vocabSize) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${where}: ${vocab} has ${lines} lines, more than the model's ${vocabSize} tokens: not this model's vocabulary`,
    );
  }
  const tok = PureWordPieceTokenizer.fromVocabText(vocabText, { lowercase: config['lowercase'] !== false }, vocab);
  return {
    kind: 'wordpiece',
    vocabSize: tok.vocabSize,
    encodePrompt: (text) => tok.encode(wikitextForWordPiece(text), { addSpecialTokens: false }).ids,
    decode: (ids) => wordPieceLines(tok.decode(ids, { skipSpecialTokens: false })),
    idToToken: (id) => tok.idToToken(id),
    tokenizerJson: () => tok.tokenizerJson(),
  };
}

/** Options of {@link readPretrainedTokenizer}. */
export interface ReadPretrainedTokenizerOptions {
  /** Check each file's size and SHA-256 against its record (default true; false reads folders exported unrecorded). */
  readonly verifyChecksums?: boolean;
  /** The model's vocabulary size: a vocabulary file of more lines is refused before the tokenizer is built. */
  readonly vocabSize?: number;
}

/**
 * The tokenizer a pretrained folder carries, its files read by `read(name)` (from a folder, a URL, picked files):
 * tokenizer_config.json, then each file it names, each checked by size and SHA-256 against its record in the
 * checkpoint's `extra` (config.json's, see {@link isPretrainedExtra}) before it is used. `where` names the folder in
 * errors, which are CheckpointErrors.
 */
export async function readPretrainedTokenizer(
  extra: unknown,
  read: (name: string) => Promise<Uint8Array>,
  where: string,
  options: ReadPretrainedTokenizerOptions = {},
): Promise<PretrainedTokenizer> {
  if (!isPretrainedExtra(extra)) throw notPretrainedError(where);
  const verify = options.verifyChecksums ?? true;
  const records = pretrainedFileRecords({ extra }, where);
  const text = async (name: string): Promise<string> => {
    const rec = records.get(name);
    if (rec === undefined && verify) {
      throw unrecordedError(where, name);
    }
    const bytes = await read(name);
    if (rec !== undefined && verify) await checkPretrainedFile(bytes, name, rec, where);
    return new TextDecoder().decode(bytes);
  };
  const config = parseTokenizerConfig(await text(PRETRAINED_FILES.tokenizer), where);
  const files = new Map<string, string>();
  for (const name of tokenizerFilesRead(config)) files.set(name, await text(name));
  return pretrainedTokenizer(config, (name) => files.get(name) ?? '', where, options.vocabSize);
}

/** Sampling options of {@link PretrainedModel.generate}: `grassflow-lm generate`'s flags, with its defaults. */
export interface GenerateTextOptions {
  /** Tokens to generate (default 40). */
  readonly maxTokens?: number;
  /** Softmax temperature, 0: greedy (default 1). */
  readonly temperature?: number;
  /** Sample among the k most likely tokens, 0: all (default 40). */
  readonly topK?: number;
  /** Sampling seed, an integer in [0, 2^32) (default 1): the text of `grassflow-lm generate --seed`. */
  readonly seed?: number;
  /** Tokens kept when the positional table is full (default maxLen/2, as the CLI). */
  readonly slideKeep?: number;
}

/** A loaded pretrained model: text in, text out. */
export interface PretrainedModel {
  readonly model: LanguageModel;
  readonly config: ModelConfig;
  readonly tokenizer: PretrainedTokenizer;
  /** config.json's `extra`: where the model came from (run, step, tokens seen, the file records). */
  readonly extra: { readonly [key: string]: CheckpointJson };
  /** Where it was loaded from: the folder, or the URL. */
  readonly source: string;
  /** The prompt (as the tokenizer reads it back) and its continuation: what `grassflow-lm generate` prints. */
  generate(text: string, options?: GenerateTextOptions): Promise<string>;
  /** The same text in pieces as they are sampled: first the prompt, then one piece per token (may be empty). */
  stream(text: string, options?: GenerateTextOptions): AsyncGenerator<string, void, undefined>;
  /** Frees the model's tensors. */
  dispose(): void;
}

/** generate/stream over a loaded model and its tokenizer (checked to agree on the vocabulary). */
export function pretrainedModel(
  loaded: { readonly model: LanguageModel; readonly extra: PretrainedModel['extra'] },
  tokenizer: PretrainedTokenizer,
  source: string,
): PretrainedModel {
  const { model, extra } = loaded;
  if (tokenizer.vocabSize !== model.config.vocabSize) {
    throw new CheckpointError(
      'INVALID_CONFIG',
      `${source}: the tokenizer has ${tokenizer.vocabSize} tokens, the model's config.vocabSize is ` +
        `${model.config.vocabSize}: give the vocab.txt the model was trained with`,
    );
  }
  // The prompt's ids and the sampler's options and stream: the seed's Prng is grassflow-lm generate's (TrainingRng
  // wraps it), so the same seed gives the same text.
  const start = (text: string, o: GenerateTextOptions) => {
    const seed = o.seed ?? 1;
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`seed must be an integer in [0, 2^32), got ${seed}`);
    }
    const prompt = tokenizer.encodePrompt(text);
    if (prompt.length === 0) throw new RangeError('the prompt encodes to no tokens: give a non-empty prompt');
    const opts = {
      maxTokens: o.maxTokens ?? 40,
      temperature: o.temperature ?? 1,
      topK: o.topK ?? 40,
      slideKeep: o.slideKeep ?? appSlideKeep(model.config.maxLen),
    };
    return { prompt, ids: sampleIds(model, prompt, opts, new Prng(seed)) };
  };
  // Each piece is the growth of the decoded text: WordPiece joins '##' pieces to the word before, so decoding token
  // by token would put spaces inside words.
  async function* stream(text: string, o: GenerateTextOptions = {}): AsyncGenerator<string, void, undefined> {
    const { prompt, ids } = start(text, o);
    const out = new ContinuationStream(tokenizer, prompt);
    yield out.promptText;
    for await (const id of ids) yield out.push(id);
  }
  return {
    model,
    config: model.config,
    tokenizer,
    extra,
    source,
    async generate(text, options = {}) {
      const { prompt, ids } = start(text, options);
      const out: number[] = [];
      for await (const id of ids) out.push(id);
      return continuationText(tokenizer, prompt, out);
    },
    stream,
    dispose: () => model.dispose(),
  };
}

// fromPretrained in browsers: the folder at a URL through fetch — config.json first, then each file it records, each
// checked by its size and SHA-256 (Web Crypto) before it is used. Caching is the browser's HTTP cache's; nothing here
// needs a file system.
import {
  CHECKPOINT_CONFIG_MAX_BYTES,
  CHECKPOINT_MAX_TOTAL_BYTES,
  CheckpointError,
  downloadDeadlineMs,
  fetchBytes,
  type FetchLike,
} from '@grassflow/checkpoints';
import { loadCheckpointFromBytes } from './checkpoint-bytes.js';
import type { LoadCheckpointOptions } from './checkpoint.js';
import {
  isPretrainedConfigJson,
  checkTotalBytes,
  neededFileBytes,
  notPretrainedError,
  parseTokenizerConfig,
  PRETRAINED_FILES,
  tokenizerFilesRead,
  pretrainedFileRecords,
  pretrainedFileUrl,
  pretrainedFolderUrl,
  pretrainedModel,
  pretrainedModelConfig,
  readPretrainedTokenizer,
  shownUrl,
  type PretrainedModel,
} from './pretrained-model.js';

/** Options of {@link fromPretrained} (browsers). */
export interface FetchPretrainedOptions extends LoadCheckpointOptions {
  /** `fetch`, or anything that fetches a URL the same way (default: globalThis.fetch). */
  readonly fetch?: FetchLike;
  /** Overall deadline of all the fetches in ms (default: the bytes needed at 256 KiB/s, at least 30 s). */
  readonly deadlineMs?: number;
  /** Most bytes of all the files fetched together (default 4 GiB). */
  readonly maxTotalBytes?: number;
}

/**
 * A pretrained model, text in and text out, from the URL of a served folder (`grassflow-lm export RUN --out DIR`
 * behind any static server; relative URLs resolve against the page). Initialize a backend first (initBackend).
 * Only what the loader needs is fetched (config.json, tokenizer_config.json, the files it names, model.safetensors),
 * each within the size its role allows and its record (a larger Content-Length is refused before reading, a longer
 * body cut off), all within a total and an overall deadline.
 */
export async function fromPretrained(url: string, options: FetchPretrainedOptions = {}): Promise<PretrainedModel> {
  const fetchFn = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (fetchFn === undefined)
    throw new CheckpointError('INVALID_ARGUMENT', 'fetch is not available: pass options.fetch');
  const page = (globalThis as { location?: { href?: string } }).location?.href;
  const folder = pretrainedFolderUrl(url, page);
  const base = shownUrl(folder);
  const started = Date.now();
  let deadline = started + (options.deadlineMs ?? downloadDeadlineMs(CHECKPOINT_CONFIG_MAX_BYTES));
  const get = (name: string, maxBytes: number): Promise<Uint8Array> =>
    fetchBytes(fetchFn, pretrainedFileUrl(folder, name), {
      maxBytes,
      deadlineMs: Math.max(1, deadline - Date.now()),
      deadlineHint: 'the deadlineMs option',
    });
  const config = await get(PRETRAINED_FILES.config, CHECKPOINT_CONFIG_MAX_BYTES);
  let cfg: unknown;
  try {
    cfg = JSON.parse(new TextDecoder().decode(config));
  } catch {
    cfg = undefined;
  }
  if (!isPretrainedConfigJson(cfg)) throw notPretrainedError(base);
  const where = `${base}${PRETRAINED_FILES.config}`;
  const records = pretrainedFileRecords(cfg, where);
  const modelConfig = pretrainedModelConfig(cfg, where);
  const need = (name: string) => neededFileBytes(name, records, modelConfig, where, options.trust === true);
  const tokenizerConfig = await get(PRETRAINED_FILES.tokenizer, need(PRETRAINED_FILES.tokenizer));
  const tokenizerFiles = tokenizerFilesRead(parseTokenizerConfig(new TextDecoder().decode(tokenizerConfig), base));
  const total = [PRETRAINED_FILES.tokenizer, ...new Set(tokenizerFiles), PRETRAINED_FILES.model]
    .map(need)
    .reduce((a, b) => a + b, 0);
  const maxTotal = options.maxTotalBytes ?? CHECKPOINT_MAX_TOTAL_BYTES;
  checkTotalBytes(where, total, maxTotal);
  if (options.deadlineMs === undefined) deadline = started + downloadDeadlineMs(total + CHECKPOINT_CONFIG_MAX_BYTES);
  // The card is for people; the tokenizer's files and the weights are what the model needs.
  const extra = (cfg as { extra: unknown }).extra;
  const read = (name: string) =>
    name === PRETRAINED_FILES.tokenizer ? Promise.resolve(tokenizerConfig) : get(name, need(name));
  const tokenizer = await readPretrainedTokenizer(extra, read, base, { ...options, vocabSize: modelConfig.vocabSize });
  const model = await get(PRETRAINED_FILES.model, need(PRETRAINED_FILES.model));
  const loaded = await loadCheckpointFromBytes({ config, model, source: base }, options);
  for (const t of loaded.extraTensors.values()) t.dispose();
  try {
    return pretrainedModel(loaded, tokenizer, base);
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
}

// fromPretrained in browsers: the folder at a URL through fetch — config.json first, then each file it records, each
// checked by its size and SHA-256 (Web Crypto) before it is used. Caching is the browser's HTTP cache's; nothing here
// needs a file system.
import { CheckpointError, type FetchLike } from '@grassflow/checkpoints';
import { loadCheckpointFromBytes } from './checkpoint-bytes.js';
import type { LoadCheckpointOptions } from './checkpoint.js';
import {
  isPretrainedConfigJson,
  notPretrainedError,
  PRETRAINED_FILES,
  pretrainedModel,
  readPretrainedTokenizer,
  type PretrainedModel,
} from './pretrained-model.js';

/** Options of {@link fromPretrained} (browsers). */
export interface FetchPretrainedOptions extends LoadCheckpointOptions {
  /** `fetch`, or anything that fetches a URL the same way (default: globalThis.fetch). */
  readonly fetch?: FetchLike;
}

/**
 * A pretrained model, text in and text out, from the URL of a served folder (`grassflow-lm export RUN --out DIR`
 * behind any static server; relative URLs resolve against the page). Initialize a backend first (initBackend).
 */
export async function fromPretrained(url: string, options: FetchPretrainedOptions = {}): Promise<PretrainedModel> {
  const fetchFn = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (fetchFn === undefined)
    throw new CheckpointError('INVALID_ARGUMENT', 'fetch is not available: pass options.fetch');
  const page = (globalThis as { location?: { href?: string } }).location?.href;
  const base = new URL(url.endsWith('/') ? url : `${url}/`, page).href;
  const get = async (name: string): Promise<Uint8Array> => {
    const href = new URL(name, base).href;
    let res: Awaited<ReturnType<FetchLike>>;
    try {
      res = await fetchFn(href);
    } catch (cause) {
      throw new CheckpointError(
        'NOT_FOUND',
        `fetching ${href} failed (${(cause as Error).message}): is the server running, and does it allow this ` +
          "page's origin (CORS)?",
        { cause },
      );
    }
    if (!res.ok) {
      throw new CheckpointError(
        'MISSING_FILE',
        `${href}: HTTP ${res.status} ${res.statusText}; serve the whole folder`,
      );
    }
    return new Uint8Array(await res.arrayBuffer());
  };
  const config = await get(PRETRAINED_FILES.config);
  let cfg: unknown;
  try {
    cfg = JSON.parse(new TextDecoder().decode(config));
  } catch {
    cfg = undefined;
  }
  if (!isPretrainedConfigJson(cfg)) throw notPretrainedError(base);
  // The card is for people; the tokenizer's files and the weights are what the model needs.
  const extra = (cfg as { extra: unknown }).extra;
  const tokenizer = await readPretrainedTokenizer(extra, get, base, options);
  const model = await get(PRETRAINED_FILES.model);
  const loaded = await loadCheckpointFromBytes({ config, model, source: base }, options);
  for (const t of loaded.extraTensors.values()) t.dispose();
  try {
    return pretrainedModel(loaded, tokenizer, base);
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
}

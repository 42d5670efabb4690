// A checkpoint's bytes from where a browser finds them: a URL (fetch) or the files of a picked folder.
// Either may be a checkpoint folder or a grassflow-lm run folder (then its checkpoints/best, else checkpoints/latest).

import { CHECKPOINT_FILES, CHECKPOINT_FORMAT, CheckpointError, parseCheckpointConfig } from './checkpoint-config.js';
import type { CheckpointBytes } from './checkpoint-bytes.js';
import { fetchBytes, redactUrl, type FetchLike } from './bounded-fetch.js';

/** Largest config.json a fetch accepts (1 MiB; a checkpoint's is a few KiB: large data belongs in tensors). */
export const CHECKPOINT_CONFIG_MAX_BYTES = 1024 * 1024;
/** Default cap on all files of one checkpoint fetched (4 GiB). */
export const CHECKPOINT_MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024;

/** Options of {@link fetchCheckpointBytes}. */
export interface FetchCheckpointOptions {
  readonly fetch?: FetchLike;
  /** Most bytes of all files together (default {@link CHECKPOINT_MAX_TOTAL_BYTES}); each file also within its record. */
  readonly maxTotalBytes?: number;
  /** Overall deadline of each file in ms (default: proportional to its cap, at least 30 s; see downloadDeadlineMs). */
  readonly deadlineMs?: number;
}

/** The folders looked in, in order: the one given, then a grassflow-lm run's best and latest checkpoints. */
export const CHECKPOINT_SUBFOLDERS = ['', 'checkpoints/best', 'checkpoints/latest'] as const;

/** A picked file, as a browser's `<input type="file" webkitdirectory>` gives it (a `File`). */
export interface CheckpointFileLike {
  readonly name: string;
  /** The path inside the picked folder, e.g. "run/checkpoints/best/config.json" (empty when a file was picked). */
  readonly webkitRelativePath?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

function folderOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut < 0 ? '' : path.slice(0, cut);
}

/**
 * The checkpoint among picked files: the folder holding config.json and model.safetensors; when there are several
 * (a run folder), the one under checkpoints/best, else checkpoints/latest. `source` is that folder's path.
 */
export async function checkpointBytesFromFiles(
  files: Iterable<CheckpointFileLike> | ArrayLike<CheckpointFileLike>,
): Promise<CheckpointBytes & { readonly source: string }> {
  const byFolder = new Map<string, Map<string, CheckpointFileLike>>();
  for (const f of Array.from(files as ArrayLike<CheckpointFileLike>)) {
    const path = f.webkitRelativePath !== undefined && f.webkitRelativePath !== '' ? f.webkitRelativePath : f.name;
    const folder = folderOf(path);
    const entry = byFolder.get(folder) ?? new Map<string, CheckpointFileLike>();
    entry.set(path.slice(folder.length === 0 ? 0 : folder.length + 1), f);
    byFolder.set(folder, entry);
  }
  const candidates = [...byFolder].filter(([, m]) => m.has(CHECKPOINT_FILES.config) && m.has(CHECKPOINT_FILES.model));
  const pick =
    candidates.length === 1
      ? candidates[0]
      : (candidates.find(([dir]) => /(^|\/)checkpoints\/best$/.test(dir)) ??
        candidates.find(([dir]) => /(^|\/)checkpoints\/latest$/.test(dir)));
  if (pick === undefined) {
    throw new CheckpointError(
      candidates.length === 0 ? 'MISSING_FILE' : 'INVALID_ARGUMENT',
      candidates.length === 0
        ? `no picked folder holds ${CHECKPOINT_FILES.config} and ${CHECKPOINT_FILES.model}: pick a checkpoint folder or a grassflow-lm run folder (with checkpoints/best or checkpoints/latest)`
        : `the picked files hold ${candidates.length} checkpoints (${candidates.map(([d]) => d || '.').join(', ')}): pick one checkpoint folder`,
    );
  }
  const [source, found] = pick;
  const read = async (name: string): Promise<Uint8Array | undefined> => {
    const f = found.get(name);
    return f === undefined ? undefined : new Uint8Array(await f.arrayBuffer());
  };
  const config = (await read(CHECKPOINT_FILES.config)) as Uint8Array;
  const model = (await read(CHECKPOINT_FILES.model)) as Uint8Array;
  const extra = await read(CHECKPOINT_FILES.extra);
  return { config, model, ...(extra === undefined ? {} : { extra }), source: source === '' ? '.' : source };
}

/** Whether config.json text is a checkpoint's (a run folder's own config.json is not). */
function isCheckpointConfig(text: string): boolean {
  try {
    return (JSON.parse(text) as { format?: unknown } | null)?.format === CHECKPOINT_FORMAT;
  } catch {
    return false;
  }
}

/**
 * A checkpoint's files fetched from the folder at `url` (a checkpoint folder, or a grassflow-lm run folder: then
 * its checkpoints/best, else checkpoints/latest): config.json first, then model.safetensors and, when config.json
 * records one, extra.safetensors. Give the result to `loadCheckpointBytes` (or gpu-layers' loader).
 */
export async function fetchCheckpointBytes(
  url: string,
  options: FetchCheckpointOptions = {},
): Promise<CheckpointBytes & { readonly source: string }> {
  const fetchFn = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (fetchFn === undefined)
    throw new CheckpointError('INVALID_ARGUMENT', 'fetch is not available: pass options.fetch');
  const maxTotal = options.maxTotalBytes ?? CHECKPOINT_MAX_TOTAL_BYTES;
  const limits = (maxBytes: number) => ({
    maxBytes,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  });
  const base = url.replace(/\/+$/, '');
  const tried: string[] = [];
  for (const sub of CHECKPOINT_SUBFOLDERS) {
    const folder = sub === '' ? base : `${base}/${sub}`;
    const configUrl = `${folder}/${CHECKPOINT_FILES.config}`;
    let config: Uint8Array;
    try {
      config = await fetchBytes(fetchFn, configUrl, limits(CHECKPOINT_CONFIG_MAX_BYTES));
    } catch (error) {
      if (!(error instanceof CheckpointError) || error.code !== 'MISSING_FILE') throw error;
      tried.push(error.message.replace(/; serve the whole folder$/, ''));
      continue;
    }
    const text = new TextDecoder().decode(config);
    if (sub === '' && !isCheckpointConfig(text)) {
      tried.push(`${redactUrl(configUrl)} (not a checkpoint's: a run folder?)`);
      continue;
    }
    const parsed = parseCheckpointConfig(text, redactUrl(configUrl));
    // each file within what config.json records for it (when it does) and within the total the client allows
    const capOf = (name: string) => Math.min(parsed.files?.[name]?.bytes ?? maxTotal, maxTotal);
    const model = await fetchBytes(
      fetchFn,
      `${folder}/${CHECKPOINT_FILES.model}`,
      limits(capOf(CHECKPOINT_FILES.model)),
    );
    const extra =
      parsed.files?.[CHECKPOINT_FILES.extra] === undefined
        ? undefined
        : await fetchBytes(
            fetchFn,
            `${folder}/${CHECKPOINT_FILES.extra}`,
            limits(Math.min(capOf(CHECKPOINT_FILES.extra), maxTotal - model.byteLength)),
          );
    return { config, model, ...(extra === undefined ? {} : { extra }), source: redactUrl(folder) };
  }
  throw new CheckpointError(
    'MISSING_FILE',
    `no checkpoint at ${redactUrl(url)}: tried ${tried.join(', ')}; give the URL of a checkpoint folder or a grassflow-lm run folder`,
  );
}

// The three files of a DistilBERT model: from an explicit folder, the cache, or the Hugging Face hub (verified).
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { DownloadError, downloadFile, sha256File, userCacheDir, writeFileAtomic } from '@grassflow/checkpoints';
import { mirroredUrl } from '@grassflow/datasets';
import { openSafetensorsFile } from '@grassflow/checkpoints';
import { parseDistilBertConfig } from './config.js';
import { DistilBertError, messageOf } from './errors.js';
import { hubSettings, type HubSettings } from './settings.js';

/** The files a model folder must hold, in download order (small files first). */
export const MODEL_FILES = ['config.json', 'vocab.txt', 'model.safetensors'] as const;
export type ModelFileName = (typeof MODEL_FILES)[number];

/** Name of the manifest written next to downloaded files: sizes and SHA-256 computed after download. */
export const CACHE_MANIFEST = 'grassflow-manifest.json';

/** Published SHA-256 of hub files, by `<owner>/<name>/<file>` (vocab.txt is bert-base-uncased's). */
export const KNOWN_SHA256: Readonly<Record<string, string>> = {
  'distilbert/distilbert-base-uncased/vocab.txt': '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
};

const MiB = 1024 * 1024;
const MAX_BYTES: Record<ModelFileName, number> = {
  'config.json': MiB,
  'vocab.txt': 16 * MiB,
  'model.safetensors': 2 * 1024 * MiB,
};

/** Options of {@link resolveModelFiles}: the hub settings plus what tests inject. */
export interface ResolveOptions extends HubSettings {
  /** Environment to read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Replaces {@link KNOWN_SHA256} (tests serving their own files pass `{}`). */
  knownSha256?: Readonly<Record<string, string>>;
}

/** Where the files of a model were found. */
export interface ResolvedModelFiles {
  /** The folder holding config.json, vocab.txt (or tokenizer.json) and model.safetensors. */
  readonly dir: string;
  readonly source: 'folder' | 'cache' | 'download';
  /** Hub repository (`owner/name`) and revision, for a model id. */
  readonly repo?: string;
  readonly revision?: string;
  /** SHA-256 of model.safetensors when already known (cache manifest), else undefined. */
  readonly weightsSha256?: string;
  /** Files downloaded by this call. */
  readonly downloaded: readonly ModelFileName[];
}

interface ManifestEntry {
  readonly bytes: number;
  readonly sha256: string;
  readonly url?: string;
}
interface Manifest {
  readonly format: 'grassflow-model-cache';
  readonly repo: string;
  readonly revision: string;
  readonly files: Partial<Record<ModelFileName, ManifestEntry>>;
}

const PYTORCH_HELP =
  'Convert it once with Python:\n' +
  '  import torch; from safetensors.torch import save_file\n' +
  "  sd = torch.load('pytorch_model.bin', map_location='cpu')\n" +
  "  save_file({k: v.contiguous() for k, v in sd.items()}, 'model.safetensors', metadata={'format': 'pt'})\n" +
  'or with transformers: AutoModel.from_pretrained(dir).save_pretrained(dir, safe_serialization=True).';

async function exists(path: string): Promise<'file' | 'dir' | null> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : null;
  } catch {
    return null;
  }
}

/** True when the string is meant as a path rather than a hub id. */
function looksLikePath(s: string): boolean {
  return isAbsolute(s) || s.startsWith('.') || s.startsWith('~') || s.includes('\\') || s.split('/').length > 2;
}

const ID_PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Hub repository of a model id: `owner/name` as given; a bare legacy id such as
 * `distilbert-base-uncased` maps to `distilbert/distilbert-base-uncased` (where the hub moved it).
 */
export function hubRepoOf(modelId: string): string {
  const parts = modelId.split('/');
  if (parts.length > 2 || parts.some((p) => !ID_PART.test(p) || p.includes('..'))) {
    throw new DistilBertError(
      'INVALID_MODEL_ID',
      `'${modelId}' is neither an existing folder nor a Hugging Face model id like 'distilbert/distilbert-base-uncased'`,
    );
  }
  if (parts.length === 2) return modelId;
  return modelId.startsWith('distilbert-') ? `distilbert/${modelId}` : modelId;
}

function envOf(o: ResolveOptions): Readonly<Record<string, string | undefined>> {
  return o.env ?? process.env;
}

/** Cache root: option ?? hubSettings.cacheDir ?? $GRASSFLOW_CACHE_DIR ?? `userCacheDir()` of @grassflow/checkpoints. */
export function resolveCacheDir(o: ResolveOptions = {}): string {
  const env = envOf(o);
  const fromEnv = env['GRASSFLOW_CACHE_DIR'];
  const dir = o.cacheDir ?? hubSettings.cacheDir ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
  return dir !== undefined ? resolve(dir) : userCacheDir(env);
}

function offline(o: ResolveOptions): boolean {
  const v = envOf(o)['GRASSFLOW_OFFLINE'];
  return o.localFilesOnly ?? hubSettings.localFilesOnly ?? (v === '1' || v === 'true');
}

/** URL of one file of a hub repository, honouring the mirror settings. */
export function hubFileUrl(repo: string, revision: string, file: string, o: ResolveOptions = {}): string {
  const env = envOf(o);
  const path = `${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
  const endpoint = o.mirror ?? hubSettings.mirror ?? env['HF_ENDPOINT'];
  if (endpoint !== undefined && endpoint !== '') return `${endpoint.replace(/\/+$/, '')}/${path}`;
  return mirroredUrl(`https://huggingface.co/${path}`, env['GRASSFLOW_MIRROR']);
}

/** Throws the error a folder without usable weights deserves (pytorch_model.bin → how to convert). */
async function checkFolder(dir: string): Promise<void> {
  const missing: string[] = [];
  if ((await exists(join(dir, 'config.json'))) !== 'file') missing.push('config.json');
  if ((await exists(join(dir, 'model.safetensors'))) !== 'file') {
    if ((await exists(join(dir, 'pytorch_model.bin'))) === 'file') {
      throw new DistilBertError(
        'PYTORCH_ONLY',
        `${dir} holds pytorch_model.bin but no model.safetensors; this package reads safetensors only (no pickle). ${PYTORCH_HELP}`,
        {
          file: join(dir, 'pytorch_model.bin'),
        },
      );
    }
    missing.push('model.safetensors');
  }
  if ((await exists(join(dir, 'vocab.txt'))) !== 'file' && (await exists(join(dir, 'tokenizer.json'))) !== 'file')
    missing.push('vocab.txt');
  if (missing.length > 0) {
    throw new DistilBertError(
      'NOT_FOUND',
      `${dir} is not a complete DistilBERT folder: ${missing.join(', ')} missing (it needs config.json, vocab.txt and model.safetensors)`,
      {
        file: join(dir, missing[0] as string),
      },
    );
  }
}

async function readManifest(path: string): Promise<Manifest | null> {
  try {
    const m = JSON.parse(await readFile(path, 'utf8')) as Manifest;
    return m.format === 'grassflow-model-cache' && typeof m.files === 'object' && m.files !== null ? m : null;
  } catch {
    return null;
  }
}

/** Checks a downloaded or hand-placed file's content; throws CORRUPT_FILE. */
async function validateFile(
  file: ModelFileName,
  path: string,
  expectedSha: string | undefined,
): Promise<{ bytes: number; sha256: string }> {
  const bytes = (await stat(path)).size;
  const sha256 = await sha256File(path);
  if (expectedSha !== undefined && sha256 !== expectedSha) {
    throw new DistilBertError(
      'CHECKSUM_MISMATCH',
      `${path}: SHA-256 ${sha256} differs from the published ${expectedSha}; the file is corrupt or not the expected ${file}`,
      { file: path },
    );
  }
  if (file === 'config.json') parseDistilBertConfig(await readFile(path, 'utf8'), path);
  if (file === 'model.safetensors') {
    try {
      // header validated against the file size: offsets tile the data exactly
      await (await openSafetensorsFile(path)).close();
    } catch (err) {
      throw new DistilBertError('CORRUPT_FILE', `${path} is not a valid safetensors file: ${messageOf(err)}`, {
        file: path,
        cause: err,
      });
    }
  }
  return { bytes, sha256 };
}

function placeByHand(repo: string, revision: string, dir: string, files: readonly string[], o: ResolveOptions): string {
  const lines = files.map((f) => `  ${hubFileUrl(repo, revision, f, o)} → ${join(dir, f)}`);
  return (
    `To provide the model by hand, download:\n${lines.join('\n')}\n` +
    `or pass the path of a folder that holds config.json, vocab.txt and model.safetensors to loadDistilBert.`
  );
}

/**
 * Find the folder of a model: an existing folder is used as is (it must hold config.json, vocab.txt or
 * tokenizer.json, and model.safetensors); otherwise `dirOrModelId` is a hub id, looked up in the cache
 * (`<cache>/models/<owner>/<name>/<revision>/`, each file checked against the size and SHA-256 of
 * the cache manifest) and downloaded where missing or corrupt, through @grassflow/checkpoints' `downloadFile`
 * (size bound, published SHA-256 where known, atomic rename), then validated (config parsed,
 * safetensors header checked against the file size) and recorded in the manifest.
 */
export async function resolveModelFiles(dirOrModelId: string, o: ResolveOptions = {}): Promise<ResolvedModelFiles> {
  if (dirOrModelId === '')
    throw new DistilBertError(
      'INVALID_ARGUMENT',
      'loadDistilBert needs a folder path or a model id, got an empty string',
    );
  const asPath = resolve(dirOrModelId);
  const kind = await exists(asPath);
  if (kind === 'dir') {
    await checkFolder(asPath);
    return { dir: asPath, source: 'folder', downloaded: [] };
  }
  if (kind === 'file' || looksLikePath(dirOrModelId)) {
    throw new DistilBertError(
      'NOT_FOUND',
      `${asPath} is not a folder: pass a folder holding config.json, vocab.txt and model.safetensors, or a hub id such as 'distilbert-base-uncased'`,
      {
        file: asPath,
      },
    );
  }
  const repo = hubRepoOf(dirOrModelId);
  const revision = o.revision ?? hubSettings.revision ?? 'main';
  if (revision === '' || revision.split('/').some((p) => p === '..' || p === '.' || p === '')) {
    throw new DistilBertError('INVALID_ARGUMENT', `revision '${revision}' is not a branch, tag or commit name`);
  }
  const dir = join(resolveCacheDir(o), 'models', ...repo.split('/'), encodeURIComponent(revision));
  const manifestPath = join(dir, CACHE_MANIFEST);
  const known = o.knownSha256 ?? KNOWN_SHA256;
  const verify = o.verifyCache ?? hubSettings.verifyCache ?? true;
  const manifest = await readManifest(manifestPath);
  const entries: Partial<Record<ModelFileName, ManifestEntry>> = { ...(manifest?.files ?? {}) };
  const needed: ModelFileName[] = [];
  let changed = false;
  for (const file of MODEL_FILES) {
    const path = join(dir, file);
    if ((await exists(path)) !== 'file') {
      needed.push(file);
      continue;
    }
    const entry = entries[file];
    const bytes = (await stat(path)).size;
    const good = entry !== undefined && entry.bytes === bytes && (!verify || (await sha256File(path)) === entry.sha256);
    if (good) continue;
    if (entry === undefined) {
      // placed by hand (or an interrupted first load): validate it and record it
      entries[file] = await validateFile(file, path, known[`${repo}/${file}`]);
      changed = true;
      continue;
    }
    if (offline(o)) {
      throw new DistilBertError(
        'CORRUPT_FILE',
        `${path} does not match the cache manifest (${entry.bytes} bytes, SHA-256 ${entry.sha256}): it was modified or damaged. ` +
          `Delete it and load again with downloads allowed, or replace it by hand.\n${placeByHand(repo, revision, dir, [file], o)}`,
        { file: path },
      );
    }
    await rm(path, { force: true });
    delete entries[file];
    needed.push(file);
  }
  if (needed.length > 0) {
    if (offline(o)) {
      const why =
        (o.localFilesOnly ?? hubSettings.localFilesOnly) ? 'localFilesOnly is set' : 'GRASSFLOW_OFFLINE is set';
      throw new DistilBertError(
        'OFFLINE',
        `Model '${dirOrModelId}' (${repo}@${revision}) is not in the cache (${dir}) and downloads are off (${why}). ${placeByHand(repo, revision, dir, needed, o)}`,
        {
          file: join(dir, needed[0] as string),
        },
      );
    }
    await mkdir(dir, { recursive: true });
    const token = o.token ?? hubSettings.token ?? envOf(o)['HF_TOKEN'];
    const headers: Record<string, string> =
      token !== undefined && token !== '' ? { authorization: `Bearer ${token}` } : {};
    for (const file of needed) {
      const url = hubFileUrl(repo, revision, file, o);
      const dest = join(dir, file);
      const maxBytes =
        file === 'model.safetensors'
          ? (o.maxModelBytes ?? hubSettings.maxModelBytes ?? MAX_BYTES[file])
          : MAX_BYTES[file];
      try {
        await downloadFile(url, dest, {
          sha256: known[`${repo}/${file}`] ?? null,
          maxBytes,
          headers,
          userAgent: 'grassflow-distilbert-adapter/0.0.0 (node)',
        });
        entries[file] = { ...(await validateFile(file, dest, undefined)), url };
      } catch (err) {
        await rm(dest, { force: true });
        const code =
          err instanceof DownloadError && err.code === 'CHECKSUM_MISMATCH'
            ? 'CHECKSUM_MISMATCH'
            : err instanceof DistilBertError
              ? err.code
              : 'DOWNLOAD_FAILED';
        throw new DistilBertError(
          code,
          `Could not get ${file} of '${dirOrModelId}' (${repo}@${revision}): ${messageOf(err)}\n${placeByHand(repo, revision, dir, needed, o)}`,
          {
            file: url,
            cause: err,
          },
        );
      }
      changed = true;
    }
  }
  if (changed) {
    const next: Manifest = { format: 'grassflow-model-cache', repo, revision, files: entries };
    await writeFileAtomic(manifestPath, new TextEncoder().encode(`${JSON.stringify(next, null, 2)}\n`));
  }
  const sha = entries['model.safetensors']?.sha256;
  return {
    dir,
    source: needed.length > 0 ? 'download' : 'cache',
    repo,
    revision,
    ...(sha !== undefined ? { weightsSha256: sha } : {}),
    downloaded: needed,
  };
}

// Make data files present: use what is in the data folder, else download, unzip, verify and move into place.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  commitFileAtomic,
  DownloadError,
  downloadFile,
  fileSystemProblem,
  makeFolder,
  sha256File,
  type DownloadOptions,
} from '@grassflow/checkpoints';
import { resolveDataDir, type DataDirOptions } from './data-dir.js';
import { DatasetError, messageOf } from './errors.js';
import { isFile } from './files.js';
import {
  DEFAULT_MANIFEST,
  DEFAULT_USER_AGENT,
  findOrigin,
  mirroredUrl,
  sourceByName,
  type ArchiveSource,
  type FileOrigin,
  type FileSource,
  type SourcesManifest,
} from './sources.js';
import { extractZip } from './zip-extract.js';

/** Options of {@link ensureDataset} and {@link ensureDataFile}. */
export interface EnsureOptions extends DataDirOptions {
  /** Sources table (default {@link DEFAULT_MANIFEST}); tests inject their own. */
  manifest?: SourcesManifest;
  /** Mirror root replacing `https://host` (see `mirroredUrl`); default `$GRASSFLOW_MIRROR`. */
  mirror?: string;
  /** Allow downloads (default true unless `$GRASSFLOW_OFFLINE` is `1` or `true`). */
  download?: boolean;
  /** User-Agent of the downloads (`downloadFile` of @grassflow/checkpoints); default {@link DEFAULT_USER_AGENT}. */
  userAgent?: string;
  timeoutMs?: number;
  onProgress?: DownloadOptions['onProgress'];
}

/** Result of {@link ensureDataset}: absolute paths by target (relative data path). */
export interface EnsureResult {
  readonly files: ReadonlyMap<string, string>;
  /** Targets that were downloaded by this call (empty when all were present). */
  readonly downloaded: readonly string[];
}

function envOf(opts: DataDirOptions): Readonly<Record<string, string | undefined>> {
  return opts.env ?? process.env;
}

function downloadsAllowed(opts: EnsureOptions): boolean {
  if (opts.download !== undefined) return opts.download;
  const v = envOf(opts)['GRASSFLOW_OFFLINE'];
  return !(v === '1' || v === 'true');
}

function mirrorOf(opts: EnsureOptions): string | undefined {
  return opts.mirror ?? envOf(opts)['GRASSFLOW_MIRROR'];
}

/**
 * Ensure every file of the named source (e.g. 'wikitext-2', 'wikitext-2-raw', 'snli', 'bert-vocab') is in the
 * data folder. Missing ones are downloaded (archives: to a temp folder inside the data folder, unzipped with
 * {@link extractZip}, each file's SHA-256 and size verified, then renamed into place). Nothing partial is left.
 */
export async function ensureDataset(name: string, opts: EnsureOptions = {}): Promise<EnsureResult> {
  const manifest = opts.manifest ?? DEFAULT_MANIFEST;
  const source = sourceByName(name, manifest);
  const dataDir = resolveDataDir(opts);
  const targets = source.kind === 'file' ? [source.target] : source.members.map((m) => m.target);
  const files = new Map(targets.map((t) => [t, join(dataDir, t)] as const));
  const missing: string[] = [];
  for (const t of targets) if (!(await isFile(join(dataDir, t)))) missing.push(t);
  if (missing.length === 0) return { files, downloaded: [] };

  const url = mirroredUrl(source.url, mirrorOf(opts));
  const how = (cause: string): string => howToProvide(missing, source, url, dataDir, manifest, cause);
  if (!downloadsAllowed(opts)) {
    throw new DatasetError(
      'DOWNLOAD_DISABLED',
      how('downloads are switched off (download: false or GRASSFLOW_OFFLINE)'),
      { file: join(dataDir, missing[0] as string) },
    );
  }
  try {
    if (source.kind === 'file') await fetchSingle(source, url, dataDir, opts);
    else await fetchArchive(source, url, missing, dataDir, opts);
  } catch (err) {
    if (err instanceof DatasetError || err instanceof DownloadError)
      throw new DatasetError(err.code, how(err.message), { file: err.file, cause: err });
    throw new DatasetError('DOWNLOAD_FAILED', how(messageOf(err)), { file: url, cause: err });
  }
  return { files, downloaded: missing };
}

/**
 * Absolute path of a data file (relative path such as 'wikitext-2/wiki.train.tokens'), downloading the
 * source that provides it when it is missing. Throws `FILE_MISSING` for files no source provides.
 */
export async function ensureDataFile(target: string, opts: EnsureOptions = {}): Promise<string> {
  const dataDir = resolveDataDir(opts);
  const path = join(dataDir, target);
  if (await isFile(path)) return path;
  const manifest = opts.manifest ?? DEFAULT_MANIFEST;
  const origin = findOrigin(target, manifest);
  if (origin === undefined) {
    throw new DatasetError(
      'FILE_MISSING',
      `${path} does not exist, and no known source provides '${target}'. Put the file there or set GRASSFLOW_DATA_DIR to a folder that has it.`,
      { file: path },
    );
  }
  if (origin.kind === 'local-only') {
    throw new DatasetError(
      'FILE_MISSING',
      `${path} does not exist. It is ${origin.file.note} Expected SHA-256 ${origin.file.sha256}; or set GRASSFLOW_DATA_DIR to a folder that has it.`,
      { file: path },
    );
  }
  await ensureDataset(origin.source.name, opts);
  return path;
}

/** Result of {@link verifyDataFile}. */
export interface VerifyResult {
  readonly path: string;
  readonly sha256: string;
  /** Published SHA-256, or null when none is known (then `ok` is true). */
  readonly expected: string | null;
  readonly ok: boolean;
}

/** SHA-256 of a data file in the data folder compared with the sources table. */
export async function verifyDataFile(target: string, opts: EnsureOptions = {}): Promise<VerifyResult> {
  const path = join(resolveDataDir(opts), target);
  const origin = findOrigin(target, opts.manifest ?? DEFAULT_MANIFEST);
  const expected = origin === undefined ? null : expectedOf(origin);
  if (!(await isFile(path))) throw new DatasetError('FILE_MISSING', `${path} does not exist.`, { file: path });
  const sha256 = await sha256File(path);
  return { path, sha256, expected, ok: expected === null || expected === sha256 };
}

function expectedOf(o: FileOrigin): string | null {
  return o.kind === 'archive' ? o.member.sha256 : o.kind === 'file' ? o.source.sha256 : o.file.sha256;
}

/** What a download into the data folder tells a user who cannot write there. */
const NOT_WRITABLE_HINT = 'Point GRASSFLOW_DATA_DIR (or the dataDir option) at a writable folder.';

async function makeDataDir(dataDir: string): Promise<void> {
  try {
    await makeFolder(dataDir); // level by level: Node's recursive mkdir never returns under /proc
  } catch (err) {
    const why = fileSystemProblem(dataDir, err as NodeJS.ErrnoException);
    throw new DatasetError('NOT_WRITABLE', `Cannot create the data folder ${dataDir}: ${why}.`, {
      file: dataDir,
      cause: err,
    });
  }
}

async function fetchSingle(source: FileSource, url: string, dataDir: string, opts: EnsureOptions): Promise<void> {
  await makeDataDir(dataDir);
  await downloadFile(url, join(dataDir, source.target), {
    sha256: source.sha256,
    maxBytes: source.maxSize,
    userAgent: opts.userAgent ?? DEFAULT_USER_AGENT,
    notWritableHint: NOT_WRITABLE_HINT,
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
  });
}

async function fetchArchive(
  source: ArchiveSource,
  url: string,
  missing: readonly string[],
  dataDir: string,
  opts: EnsureOptions,
): Promise<void> {
  await makeDataDir(dataDir);
  let tmp: string;
  try {
    tmp = await mkdtemp(join(dataDir, `.grassflow-${source.name}-`));
  } catch (err) {
    throw new DatasetError('NOT_WRITABLE', `Cannot write into the data folder ${dataDir}: ${messageOf(err)}.`, {
      file: dataDir,
      cause: err,
    });
  }
  try {
    const zipPath = join(tmp, 'archive.zip');
    await downloadFile(url, zipPath, {
      maxBytes: source.maxArchiveBytes,
      userAgent: opts.userAgent ?? DEFAULT_USER_AGENT,
      notWritableHint: NOT_WRITABLE_HINT,
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
    });
    const wanted = source.members.filter((m) => missing.includes(m.target));
    const byPath = new Map(wanted.map((m) => [m.archivePath, m] as const));
    const extractDir = join(tmp, 'extract');
    const extracted = await extractZip(zipPath, extractDir, {
      select: (p) => byPath.get(p)?.target ?? null,
      maxTotalBytes: wanted.reduce((s, m) => s + m.maxSize, 0),
      maxEntryBytes: (p) => byPath.get(p)?.maxSize ?? 0,
    });
    for (const m of wanted) {
      const file = extracted.get(m.archivePath);
      if (file === undefined) {
        throw new DatasetError('ARCHIVE_INVALID', `The archive from ${url} has no member '${m.archivePath}'.`, {
          file: url,
        });
      }
      const size = (await stat(file)).size;
      if (m.size !== null && size !== m.size) {
        throw new DatasetError(
          'CHECKSUM_MISMATCH',
          `${m.archivePath} from ${url} has ${size} bytes, expected ${m.size}. Nothing was installed.`,
          { file: m.target },
        );
      }
      if (m.sha256 !== null) {
        const got = await sha256File(file);
        if (got !== m.sha256) {
          throw new DatasetError(
            'CHECKSUM_MISMATCH',
            `${m.archivePath} from ${url} has SHA-256 ${got}, expected ${m.sha256}. Nothing was installed.`,
            { file: m.target },
          );
        }
      }
    }
    for (const m of wanted) {
      const final = join(dataDir, m.target);
      await makeFolder(dirname(final));
      await commitFileAtomic(join(extractDir, m.target), final); // fsync, rename into place, fsync the folder
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function howToProvide(
  missing: readonly string[],
  source: ArchiveSource | FileSource,
  url: string,
  dataDir: string,
  manifest: SourcesManifest,
  cause: string,
): string {
  const lines = [`Missing data file(s) in ${dataDir}: ${missing.join(', ')}. Download from ${url} failed: ${cause}`];
  for (const t of missing) {
    const note = manifest.missingFromSharedData[t];
    if (note !== undefined) lines.push(`  ${t}: ${note}.`);
  }
  if (source.kind === 'archive') {
    const members = source.members.filter((m) => missing.includes(m.target));
    lines.push(
      `To provide by hand: fetch ${source.url}, unzip, and place ${members.map((m) => `${m.archivePath} at ${join(dataDir, m.target)}`).join('; ')}.`,
    );
  } else {
    lines.push(`To provide by hand: fetch ${source.url} and save it as ${join(dataDir, source.target)}.`);
  }
  lines.push('Or set GRASSFLOW_DATA_DIR to a folder that already holds these files (same layout).');
  return lines.join('\n');
}

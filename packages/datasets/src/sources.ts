// The one table of where every data file comes from, its SHA-256 and size (from /work/shared/data/SOURCES.md).
import { DatasetError } from './errors.js';

/** One file taken out of an archive. */
export interface ArchiveMember {
  /** Path inside the zip, '/'-separated. */
  readonly archivePath: string;
  /** Path relative to the data folder where the file is placed. */
  readonly target: string;
  /** SHA-256 (hex) the extracted file must have; `null` when no published value is known (then not verified). */
  readonly sha256: string | null;
  /** Exact size in bytes when known, else `null`. */
  readonly size: number | null;
  /** Upper bound on the extracted size in bytes (equal to `size` when that is known). */
  readonly maxSize: number;
}

/** A zip archive on the web and the members taken from it. */
export interface ArchiveSource {
  readonly kind: 'archive';
  readonly name: string;
  readonly url: string;
  /** Bound on the download: the server must declare (Content-Length) no more, and may send no more. */
  readonly maxArchiveBytes: number;
  readonly members: readonly ArchiveMember[];
  readonly license: string;
}

/** A single file on the web (no archive). */
export interface FileSource {
  readonly kind: 'file';
  readonly name: string;
  readonly url: string;
  readonly target: string;
  readonly sha256: string | null;
  readonly size: number | null;
  readonly maxSize: number;
  readonly license: string;
}

/** A file that exists in the shared data but cannot be downloaded from any official source. */
export interface LocalOnlyFile {
  readonly target: string;
  readonly sha256: string;
  readonly size: number;
  readonly note: string;
}

/** Everything the downloader needs; tests pass their own manifest (with hashes of their own files). */
export interface SourcesManifest {
  readonly sources: readonly (ArchiveSource | FileSource)[];
  readonly localOnly: readonly LocalOnlyFile[];
  /** Notes for files a source provides but the shared data set (/work/shared/data) lacks, by target. */
  readonly missingFromSharedData: Readonly<Record<string, string>>;
}

/** Explicit User-Agent: wikitext.smerity.com refuses some default client strings. */
export const DEFAULT_USER_AGENT = 'grassflow-datasets/0.1.0 (+https://www.npmjs.com/package/@grassflow/datasets; node)';

const MiB = 1024 * 1024;

function member(
  archivePath: string,
  target: string,
  sha256: string | null,
  size: number | null,
  maxIfUnknown = 32 * MiB,
): ArchiveMember {
  return { archivePath, target, sha256, size, maxSize: size ?? maxIfUnknown };
}

/** WikiText-2 word-level `.tokens` (Merity et al. 2016), hosted by the data set's author. */
export const WIKITEXT2_TOKENS: ArchiveSource = {
  kind: 'archive',
  name: 'wikitext-2',
  url: 'https://wikitext.smerity.com/wikitext-2-v1.zip',
  maxArchiveBytes: 32 * MiB, // the zip is ~4.5 MB
  members: [
    member(
      'wikitext-2/wiki.train.tokens',
      'wikitext-2/wiki.train.tokens',
      '9e9fa1ad55b1c2c95b08e37dd8e653f638fac2c6de904b79e813611eefbc985f',
      10_797_148,
    ),
    member(
      'wikitext-2/wiki.valid.tokens',
      'wikitext-2/wiki.valid.tokens',
      'f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8',
      1_121_681,
    ),
    member(
      'wikitext-2/wiki.test.tokens',
      'wikitext-2/wiki.test.tokens',
      'd790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0',
      1_256_449,
    ),
  ],
  license: 'CC BY-SA 3.0 (upstream also GFDL)',
};

/** WikiText-2 raw text (for WordPiece). Sizes of train/valid are not known here, only their published SHA-256. */
export const WIKITEXT2_RAW: ArchiveSource = {
  kind: 'archive',
  name: 'wikitext-2-raw',
  url: 'https://wikitext.smerity.com/wikitext-2-raw-v1.zip',
  maxArchiveBytes: 32 * MiB, // the zip is ~4.7 MB
  members: [
    member(
      'wikitext-2-raw/wiki.train.raw',
      'wikitext-2/wiki.train.raw',
      '6707892fa3788b5ab9ed78ab5ff37d9fe825f6011a2ad4fcd6a6d467f0e7da57',
      null,
    ),
    member(
      'wikitext-2-raw/wiki.valid.raw',
      'wikitext-2/wiki.valid.raw',
      '4cd0f6876d07a413aa911261ff6d363c72d757d47f0fdd6015702014c89cb9c7',
      null,
      4 * MiB,
    ),
    member(
      'wikitext-2-raw/wiki.test.raw',
      'wikitext-2/wiki.test.raw',
      '173c87a53759e0201f33e0ccf978e510c2042d7f2cb78229d9a50d79b9e7dd08',
      1_290_590,
    ),
  ],
  license: 'CC BY-SA 3.0 (upstream also GFDL)',
};

/** SNLI 1.0 (Bowman et al. 2015). The zip (~95 MB) also holds .txt copies, which are not extracted. */
export const SNLI_1_0: ArchiveSource = {
  kind: 'archive',
  name: 'snli',
  url: 'https://nlp.stanford.edu/projects/snli/snli_1.0.zip',
  maxArchiveBytes: 160 * MiB,
  members: [
    member(
      'snli_1.0/snli_1.0_train.jsonl',
      'snli/snli_1.0_train.jsonl',
      'ee95dfbc57800f7b1f62b7602ad2b176c2b983210435a49238e660324a01e963',
      487_457_790,
    ),
    member(
      'snli_1.0/snli_1.0_dev.jsonl',
      'snli/snli_1.0_dev.jsonl',
      '9c03faff70182ef086ebfeed2cffbabb5fcc6a84a8b3314decbbb5b01f07f4bf',
      9_745_714,
    ),
    member(
      'snli_1.0/snli_1.0_test.jsonl',
      'snli/snli_1.0_test.jsonl',
      '1147550151ca8b16ddb31d8dc0e739a670a65f7c3e64aac5951eaeff103fb220',
      9_730_457,
    ),
  ],
  license: 'CC BY-SA 4.0',
};

/** BERT uncased WordPiece vocabulary, from the Hugging Face hub (same blob as bert-base-uncased). */
export const BERT_VOCAB: FileSource = {
  kind: 'file',
  name: 'bert-vocab',
  url: 'https://huggingface.co/distilbert/distilbert-base-uncased/resolve/main/vocab.txt',
  target: 'bert-vocab/vocab.txt',
  sha256: '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
  size: 231_508,
  maxSize: 231_508,
  license: 'Apache 2.0',
};

/** The project's sources table (see SOURCES.md of the shared data). */
export const DEFAULT_MANIFEST: SourcesManifest = {
  sources: [WIKITEXT2_TOKENS, WIKITEXT2_RAW, SNLI_1_0, BERT_VOCAB],
  localOnly: [
    {
      target: 'snli/snli_1.0_train_0.01.jsonl',
      sha256: 'd1aa98e60f8986fb2115bb1ec1bc2ef59583c20fdc6f64e3fc6239581dd23368',
      size: 4_872_438,
      note:
        'a ~1% random sample (5,502 records) of the SNLI train split from uclnlp/inferbeddings ' +
        '(data/snli/fractions/snli_1.0_train_0.01.jsonl.gz, gunzipped); it has no official download: ' +
        'copy it from the shared data, or use the full train split (snli_1.0.zip).',
    },
  ],
  missingFromSharedData: {
    'wikitext-2/wiki.train.raw':
      'the shared data set lacks it (of the raw variant only wiki.test.raw is there; see its SOURCES.md)',
    'wikitext-2/wiki.valid.raw':
      'the shared data set lacks it (of the raw variant only wiki.test.raw is there; see its SOURCES.md)',
    'snli/snli_1.0_train.jsonl':
      'the shared data set lacks it (only the 1% sample snli_1.0_train_0.01.jsonl is there; see its SOURCES.md)',
  },
};

/** Where a data file (relative path) comes from in a manifest. */
export type FileOrigin =
  | { readonly kind: 'archive'; readonly source: ArchiveSource; readonly member: ArchiveMember }
  | { readonly kind: 'file'; readonly source: FileSource }
  | { readonly kind: 'local-only'; readonly file: LocalOnlyFile };

/** Look up the origin of a relative data path; `undefined` when the manifest does not know it. */
export function findOrigin(target: string, manifest: SourcesManifest = DEFAULT_MANIFEST): FileOrigin | undefined {
  for (const source of manifest.sources) {
    if (source.kind === 'file') {
      if (source.target === target) return { kind: 'file', source };
    } else {
      const m = source.members.find((x) => x.target === target);
      if (m !== undefined) return { kind: 'archive', source, member: m };
    }
  }
  const local = manifest.localOnly.find((f) => f.target === target);
  return local === undefined ? undefined : { kind: 'local-only', file: local };
}

/** Expected SHA-256 of a relative data path, or `null` when none is known. */
export function expectedSha256(target: string, manifest: SourcesManifest = DEFAULT_MANIFEST): string | null {
  const o = findOrigin(target, manifest);
  if (o === undefined) return null;
  if (o.kind === 'archive') return o.member.sha256;
  if (o.kind === 'file') return o.source.sha256;
  return o.file.sha256;
}

/** The named source of a manifest; throws `UNKNOWN_DATASET` listing the known names. */
export function sourceByName(name: string, manifest: SourcesManifest = DEFAULT_MANIFEST): ArchiveSource | FileSource {
  const s = manifest.sources.find((x) => x.name === name);
  if (s === undefined) {
    throw new DatasetError(
      'UNKNOWN_DATASET',
      `Unknown data set '${name}'. Known: ${manifest.sources.map((x) => x.name).join(', ')}.`,
    );
  }
  return s;
}

/**
 * URL to fetch, with an optional mirror: `https://host/path` → `${mirror}/host/path`
 * (mirror from the option, else GRASSFLOW_MIRROR). A mirror serves the same layout under its own root.
 */
export function mirroredUrl(url: string, mirror: string | undefined): string {
  if (mirror === undefined || mirror === '') return url;
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${u.host}${u.pathname}${u.search}`;
}

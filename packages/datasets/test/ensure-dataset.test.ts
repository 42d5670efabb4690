import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DatasetError,
  DEFAULT_USER_AGENT,
  ensureDataFile,
  ensureDataset,
  extractZip,
  mirroredUrl,
  type SourcesManifest,
} from '@grassflow/datasets';
import { serveBytes, serveTruncated, startServer, type TestServer } from '../../../tooling/http-test-server.mjs';
import { buildZip, renameEntry } from './helpers/zip.js';

const train = 'alpha beta gamma\n'.repeat(300);
const test = 'delta epsilon\n'.repeat(100);
const hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** A manifest whose archive lives at http://example.test/ds/tiny.zip; the tests reach it through a mirror. */
function manifest(overrides: { trainSha?: string; url?: string } = {}): SourcesManifest {
  return {
    sources: [
      {
        kind: 'archive',
        name: 'tiny',
        url: overrides.url ?? 'http://example.test/ds/tiny.zip',
        maxArchiveBytes: 1 << 20,
        members: [
          {
            archivePath: 'tiny/train.txt',
            target: 'tiny/train.txt',
            sha256: overrides.trainSha ?? hex(train),
            size: train.length,
            maxSize: train.length,
          },
          {
            archivePath: 'tiny/test.txt',
            target: 'tiny/test.txt',
            sha256: hex(test),
            size: test.length,
            maxSize: test.length,
          },
        ],
        license: 'test',
      },
    ],
    localOnly: [{ target: 'tiny/sample.txt', sha256: hex('x'), size: 1, note: 'a test-only sample with no download.' }],
    missingFromSharedData: { 'tiny/train.txt': 'the shared data set lacks it' },
  };
}

let server: TestServer;
let dataDir: string;
let goodZip: Buffer;

beforeAll(async () => {
  server = await startServer();
  goodZip = await buildZip([
    { name: 'tiny/train.txt', data: train },
    { name: 'tiny/test.txt', data: test },
    { name: 'tiny/README', data: 'not extracted' },
  ]);
  server.route('/example.test/ds/tiny.zip', serveBytes(goodZip));
});
afterAll(() => server.close());
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gf-data-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

async function rejection(p: Promise<unknown>): Promise<DatasetError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatasetError);
  return err as DatasetError;
}

describe('ensureDataset against a local server', () => {
  it('mirroredUrl maps https://host/path to <mirror>/host/path', () => {
    expect(mirroredUrl('https://wikitext.smerity.com/wikitext-2-v1.zip', 'http://127.0.0.1:9/')).toBe(
      'http://127.0.0.1:9/wikitext.smerity.com/wikitext-2-v1.zip',
    );
    expect(mirroredUrl('https://a.b/c', undefined)).toBe('https://a.b/c');
  });

  it('downloads, unzips the listed members, verifies them, moves them into place and cleans up', async () => {
    const r = await ensureDataset('tiny', { dataDir, manifest: manifest(), mirror: server.base });
    expect([...r.downloaded].sort()).toEqual(['tiny/test.txt', 'tiny/train.txt']);
    expect(await readFile(join(dataDir, 'tiny/train.txt'), 'utf8')).toBe(train);
    expect(await readFile(join(dataDir, 'tiny/test.txt'), 'utf8')).toBe(test);
    expect(await readdir(dataDir)).toEqual(['tiny']); // no temp folder left
    expect((await readdir(join(dataDir, 'tiny'))).sort()).toEqual(['test.txt', 'train.txt']);
    expect(server.requests.at(-1)).toBe(`/example.test/ds/tiny.zip ${DEFAULT_USER_AGENT}`);
    const n = server.requests.length;
    const again = await ensureDataset('tiny', { dataDir, manifest: manifest(), mirror: server.base });
    expect(again.downloaded).toEqual([]);
    expect(server.requests.length).toBe(n); // present files: no request
  });

  it('takes the mirror from GRASSFLOW_MIRROR and downloads only what is missing via ensureDataFile', async () => {
    const p = await ensureDataFile('tiny/test.txt', {
      dataDir,
      manifest: manifest(),
      env: { GRASSFLOW_MIRROR: server.base },
    });
    expect(p).toBe(join(dataDir, 'tiny/test.txt'));
    expect(await readFile(p, 'utf8')).toBe(test);
  });

  it('on a checksum mismatch installs nothing and says how to provide the file', async () => {
    const err = await rejection(
      ensureDataset('tiny', { dataDir, manifest: manifest({ trainSha: 'f'.repeat(64) }), mirror: server.base }),
    );
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.message).toContain('tiny/train.txt');
    expect(err.message).toContain('http://example.test/ds/tiny.zip'); // the URL to fetch by hand
    expect(err.message).toContain(join(dataDir, 'tiny/train.txt')); // where to put it
    expect(err.message).toContain('GRASSFLOW_DATA_DIR');
    expect(err.message).toContain('the shared data set lacks it');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('on a truncated download installs nothing', async () => {
    server.route('/example.test/ds/short.zip', serveTruncated(goodZip, 100));
    const err = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/short.zip' }),
        mirror: server.base,
      }),
    );
    expect(err.code).toBe('TRUNCATED');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('on HTTP 404 / 500 installs nothing', async () => {
    const e404 = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/none.zip' }),
        mirror: server.base,
      }),
    );
    expect(e404.code).toBe('HTTP_STATUS');
    server.route('/example.test/ds/e500.zip', (_q, res) => {
      res.statusCode = 500;
      res.end();
    });
    const e500 = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/e500.zip' }),
        mirror: server.base,
      }),
    );
    expect(e500.code).toBe('HTTP_STATUS');
    expect(e500.message).toContain('HTTP 500');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it.each([
    ['../evil.txt', 'xx/evil.txt', "'..' path segment", '../evil.txt'],
    ['/abs.txt', 'xabs.txt', 'absolute path', '/abs.txt'],
    ['..\\x.txt', 'yy_x.txt', "'..' path segment", '../x.txt'], // backslashes are read as '/' (yauzl, non-strict)
  ])('refuses an archive with the hostile entry %s', async (hostile, placeholder, reason, shown) => {
    const zip = renameEntry(
      await buildZip([
        { name: 'tiny/train.txt', data: train },
        { name: placeholder, data: 'pwned' },
      ]),
      placeholder,
      hostile,
    );
    server.route('/example.test/ds/hostile.zip', serveBytes(zip));
    const err = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/hostile.zip' }),
        mirror: server.base,
      }),
    );
    expect(err.code).toBe('UNSAFE_ARCHIVE');
    expect(err.message).toContain(`entry '${shown}'`);
    expect(err.message).toContain(reason);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('refuses a symlink entry', async () => {
    const zip = await buildZip([{ name: 'tiny/train.txt', data: '/etc/passwd', mode: 0o120777 }]);
    server.route('/example.test/ds/link.zip', serveBytes(zip));
    const err = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/link.zip' }),
        mirror: server.base,
      }),
    );
    expect(err.code).toBe('UNSAFE_ARCHIVE');
    expect(err.message).toContain('symbolic link');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('bounds the uncompressed size (a member larger than its declared maximum)', async () => {
    const big = 'z'.repeat(200_000); // compresses to a few hundred bytes
    const zip = await buildZip([
      { name: 'tiny/train.txt', data: big },
      { name: 'tiny/test.txt', data: test },
    ]);
    server.route('/example.test/ds/bomb.zip', serveBytes(zip));
    const err = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/bomb.zip' }),
        mirror: server.base,
      }),
    );
    expect(err.code).toBe('UNSAFE_ARCHIVE');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('reports a member missing from the archive', async () => {
    const zip = await buildZip([{ name: 'tiny/train.txt', data: train }]);
    server.route('/example.test/ds/partial.zip', serveBytes(zip));
    const err = await rejection(
      ensureDataset('tiny', {
        dataDir,
        manifest: manifest({ url: 'http://example.test/ds/partial.zip' }),
        mirror: server.base,
      }),
    );
    expect(err.code).toBe('ARCHIVE_INVALID');
    expect(err.message).toContain('tiny/test.txt');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('offline: names the file, the URL and where to put it', async () => {
    const err = await rejection(
      ensureDataFile('tiny/train.txt', { dataDir, manifest: manifest(), env: { GRASSFLOW_OFFLINE: '1' } }),
    );
    expect(err.code).toBe('DOWNLOAD_DISABLED');
    expect(err.message).toContain('http://example.test/ds/tiny.zip');
    expect(err.message).toContain(join(dataDir, 'tiny/train.txt'));
  });

  it('a local-only file without a download says so', async () => {
    const err = await rejection(ensureDataFile('tiny/sample.txt', { dataDir, manifest: manifest() }));
    expect(err.code).toBe('FILE_MISSING');
    expect(err.message).toContain('no download');
  });

  it('single-file sources (like bert-vocab) download atomically and are verified', async () => {
    const vocab = '[PAD]\n[UNK]\nhello\n';
    server.route('/example.test/vocab.txt', serveBytes(Buffer.from(vocab)));
    const fileManifest = (sha256: string): SourcesManifest => ({
      sources: [
        {
          kind: 'file',
          name: 'vocab',
          url: 'http://example.test/vocab.txt',
          target: 'v/vocab.txt',
          sha256,
          size: vocab.length,
          maxSize: vocab.length,
          license: 'test',
        },
      ],
      localOnly: [],
      missingFromSharedData: {},
    });
    const bad = await rejection(
      ensureDataFile('v/vocab.txt', { dataDir, manifest: fileManifest('0'.repeat(64)), mirror: server.base }),
    );
    expect(bad.code).toBe('CHECKSUM_MISMATCH');
    expect(bad.message).toContain(`save it as ${join(dataDir, 'v/vocab.txt')}`);
    expect(await readdir(join(dataDir, 'v'))).toEqual([]);
    const p = await ensureDataFile('v/vocab.txt', { dataDir, manifest: fileManifest(hex(vocab)), mirror: server.base });
    expect(await readFile(p, 'utf8')).toBe(vocab);
  });

  it('a data folder that cannot be created gives NOT_WRITABLE and names it', async () => {
    const blocker = join(dataDir, 'not-a-dir');
    await import('node:fs/promises').then((fs) => fs.writeFile(blocker, 'x'));
    const err = await rejection(ensureDataset('tiny', { dataDir: blocker, manifest: manifest(), mirror: server.base }));
    expect(err.code).toBe('NOT_WRITABLE');
    expect(err.message).toContain(blocker);
    expect(await readdir(dataDir)).toEqual(['not-a-dir']);
  });

  it("a download into a data folder it cannot write is the downloader's NOT_WRITABLE, naming GRASSFLOW_DATA_DIR", async () => {
    server.route('/example.test/v2/vocab.txt', serveBytes(Buffer.from('[PAD]\n')));
    await import('node:fs/promises').then((fs) => fs.writeFile(join(dataDir, 'v2'), 'x')); // a file where v2/ goes
    const one: SourcesManifest = {
      sources: [
        {
          kind: 'file',
          name: 'vocab2',
          url: 'http://example.test/v2/vocab.txt',
          target: 'v2/vocab.txt',
          sha256: hex('[PAD]\n'),
          size: 6,
          maxSize: 6,
          license: 'test',
        },
      ],
      localOnly: [],
      missingFromSharedData: {},
    };
    const err = await rejection(ensureDataFile('v2/vocab.txt', { dataDir, manifest: one, mirror: server.base }));
    expect(err.code).toBe('NOT_WRITABLE');
    expect(err.message).toMatch(/a file is in the way .*Point GRASSFLOW_DATA_DIR \(or the dataDir option\)/);
  });

  it('unknown data set names list the known ones', async () => {
    const err = await rejection(ensureDataset('nope', { dataDir, manifest: manifest() }));
    expect(err.code).toBe('UNKNOWN_DATASET');
    expect(err.message).toContain('tiny');
  });

  it('extractZip rejects a file that is not a zip', async () => {
    const p = join(dataDir, 'not.zip');
    await import('node:fs/promises').then((fs) => fs.writeFile(p, 'hello'));
    const err = await rejection(extractZip(p, join(dataDir, 'out'), { maxTotalBytes: 100 }));
    expect(err.code).toBe('ARCHIVE_INVALID');
  });
});

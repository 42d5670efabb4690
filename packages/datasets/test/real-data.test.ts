// Tests against the real shared files; CI always sets GRASSFLOW_DATA_DIR (../shared/data from the repo root).
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DatasetError,
  DEFAULT_MANIFEST,
  LmTrainBatcher,
  lmEvalBatches,
  loadSnli,
  loadWikitextIds,
  loadWikitextText,
  verifyDataFile,
  type TextEncoderLike,
  type WikitextSplit,
} from '@grassflow/datasets';

const envDir = process.env['GRASSFLOW_DATA_DIR'];
const dataDir = envDir === undefined || envDir === '' ? undefined : resolve(envDir);
/** ASCII whitespace, as Python's str.split() sees it here: train has 36 U+FEFF, which JS's \s would split on. */
const WS = /[ \t\n\r\f\v]+/;

/** Word-level encoder local to the tests (independent of @grassflow/tokenizers): whitespace split, fixed vocab. */
function wordEncoder(vocab: Map<string, number>): TextEncoderLike {
  return {
    id: `test-word-level:${vocab.size}`,
    encode(text) {
      return text
        .split(WS)
        .filter((w) => w !== '')
        .map((w) => {
          const id = vocab.get(w);
          if (id === undefined) throw new Error(`unknown word ${w}`);
          return id;
        });
    },
  };
}

describe.skipIf(dataDir === undefined)('real shared data (GRASSFLOW_DATA_DIR)', () => {
  const dir = dataDir as string;
  let cacheDir: string;
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'gf-real-cache-'));
  });
  afterAll(() => rm(cacheDir, { recursive: true, force: true }));

  it('every shared file matches the SHA-256 of the sources table', async () => {
    const targets = [
      'wikitext-2/wiki.train.tokens',
      'wikitext-2/wiki.valid.tokens',
      'wikitext-2/wiki.test.tokens',
      'wikitext-2/wiki.test.raw',
      'snli/snli_1.0_dev.jsonl',
      'snli/snli_1.0_test.jsonl',
      'snli/snli_1.0_train_0.01.jsonl',
      'bert-vocab/vocab.txt',
    ];
    for (const t of targets) {
      const r = await verifyDataFile(t, { dataDir: dir });
      expect(r.expected, t).not.toBeNull();
      expect(r.sha256, t).toBe(r.expected);
    }
    expect(DEFAULT_MANIFEST.sources.length).toBe(4);
  });

  it.each([
    ['train', 2_088_628, 36_718],
    ['valid', 217_646, 3_760],
    ['test', 245_569, 4_358],
  ] as const)(
    'wiki.%s.tokens has %i word tokens with <eos> (whitespace split + 1 per line)',
    async (split, tokens, lines) => {
      const { text } = await loadWikitextText(split, { dataDir: dir, download: false });
      const ls = text.split('\n');
      expect(ls.pop()).toBe('');
      expect(ls.length).toBe(lines);
      const count = ls.reduce((s, l) => s + l.split(WS).filter((w) => w !== '').length + 1, 0);
      expect(count).toBe(tokens);
    },
  );

  it('a missing raw split names the file, the zip that provides it, and that the shared data lacks it', async () => {
    const err = await loadWikitextText('train', { dataDir: dir, variant: 'raw', download: false }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatasetError);
    const msg = (err as DatasetError).message;
    expect(msg).toContain(join(dir, 'wikitext-2/wiki.train.raw'));
    expect(msg).toContain('https://wikitext.smerity.com/wikitext-2-raw-v1.zip');
    expect(msg).toContain('wikitext-2-raw/wiki.train.raw');
    expect(msg).toContain('shared data set lacks it');
    const test = await loadWikitextText('test', { dataDir: dir, variant: 'raw', download: false });
    expect(test.sha256).toBe('173c87a53759e0201f33e0ccf978e510c2042d7f2cb78229d9a50d79b9e7dd08');
  });

  it.each([
    ['dev', 9_842, [3_329, 3_235, 3_278], 158],
    ['test', 9_824, [3_368, 3_219, 3_237], 176],
  ] as const)('SNLI %s: %i labelled pairs, E/N/C counts from SOURCES.md', async (split, n, counts, dropped) => {
    const d = await loadSnli(split, { dataDir: dir, download: false });
    expect(d.pairs.length).toBe(n);
    expect(d.labelCounts).toEqual(counts);
    expect(d.droppedNoGold).toBe(dropped);
    expect(d.isSample).toBe(false);
  });

  it('SNLI train here is the 1% sample, and the result says so', async () => {
    const d = await loadSnli('train', { dataDir: dir, download: false });
    expect(d.isSample).toBe(true);
    expect(d.file).toBe(join(dir, 'snli/snli_1.0_train_0.01.jsonl'));
    expect(d.labelCounts).toEqual([1_806, 1_786, 1_906]);
    expect(d.droppedNoGold).toBe(4);
  });

  describe('Wikitext-2 ids, cache and batches', () => {
    let encoder: TextEncoderLike;
    let eos: number;
    const ids = new Map<WikitextSplit, Int32Array>();

    beforeAll(async () => {
      const vocab = new Map<string, number>();
      for (const split of ['train', 'valid', 'test'] as const) {
        const { text } = await loadWikitextText(split, { dataDir: dir, download: false });
        for (const w of text.split(WS)) if (w !== '' && !vocab.has(w)) vocab.set(w, vocab.size);
      }
      eos = vocab.size;
      vocab.set('<eos>', eos);
      expect(vocab.size).toBe(33_278);
      encoder = wordEncoder(vocab);
    });

    it('token-id cache: miss, then hit with the same ids; corrupt file rebuilt', async () => {
      const first = await loadWikitextIds('valid', encoder, { dataDir: dir, cacheDir, eolIds: [eos], download: false });
      expect(first.cache).toBe('miss');
      expect(first.ids.length).toBe(217_646);
      const second = await loadWikitextIds('valid', encoder, {
        dataDir: dir,
        cacheDir,
        eolIds: [eos],
        download: false,
      });
      expect(second.cache).toBe('hit');
      expect(second.ids).toEqual(first.ids);
      const other = await loadWikitextIds(
        'valid',
        { ...encoder, id: 'another', encode: (text: string) => encoder.encode(text) },
        { dataDir: dir, cacheDir, eolIds: [eos], download: false },
      );
      expect(other.cache).toBe('miss');
      const bytes = await readFile(second.cachePath as string);
      await writeFile(second.cachePath as string, bytes.subarray(0, 1000));
      const third = await loadWikitextIds('valid', encoder, { dataDir: dir, cacheDir, eolIds: [eos], download: false });
      expect(third.cache).toBe('corrupt');
      expect(third.ids).toEqual(first.ids);
      ids.set('valid', third.ids);
    });

    it('a changed source file makes the cache stale (copy of valid with one edit, verify off)', async () => {
      const copy = await mkdtemp(join(tmpdir(), 'gf-real-copy-'));
      try {
        await copyFile(join(dir, 'wikitext-2/wiki.valid.tokens'), join(copy, 'x'));
        const { mkdir } = await import('node:fs/promises');
        await mkdir(join(copy, 'wikitext-2'));
        const text = (await readFile(join(copy, 'x'), 'utf8')).replace(' the ', ' a ');
        await writeFile(join(copy, 'wikitext-2/wiki.valid.tokens'), text);
        const r = await loadWikitextIds('valid', encoder, {
          dataDir: copy,
          cacheDir,
          eolIds: [eos],
          verify: false,
          download: false,
        });
        expect(r.cache).toBe('stale');
        expect(r.ids.length).toBe(217_646);
        const strict = await loadWikitextIds('valid', encoder, {
          dataDir: copy,
          cacheDir,
          eolIds: [eos],
          download: false,
        }).catch((e: unknown) => e);
        expect((strict as DatasetError).code).toBe('CHECKSUM_MISMATCH');
      } finally {
        await rm(copy, { recursive: true, force: true });
      }
    });

    it('training batches over train: every token in exactly one chunk per epoch, y = x shifted', async () => {
      const train = (
        await loadWikitextIds('train', encoder, { dataDir: dir, cacheDir, eolIds: [eos], download: false })
      ).ids;
      expect(train.length).toBe(2_088_628);
      const L = 128;
      const b = new LmTrainBatcher(train, { seqLen: L, batchSize: 32, seed: 1234 });
      const seen = new Uint8Array(train.length);
      let rows = 0;
      for (const batch of b.epochBatches()) {
        const [B] = batch.shape;
        for (let r = 0; r < B; r++) {
          const s = batch.starts[r] as number;
          for (let t = 0; t <= L; t++) seen[s + t] = (seen[s + t] as number) + 1;
          for (let t = 0; t < L; t++) {
            if (batch.x[r * L + t] !== train[s + t] || batch.y[r * L + t] !== train[s + t + 1])
              throw new Error(`row ${r} position ${t} mismatch`);
          }
          rows++;
        }
      }
      expect(rows).toBe(Math.floor(2_088_628 / 129));
      let once = 0;
      for (let i = 0; i < train.length; i++) if (seen[i] === 1) once++;
      expect(once).toBe(rows * 129);
      expect(b.droppedTokens).toBe(2_088_628 - rows * 129);
      const again = new LmTrainBatcher(train, { seqLen: L, batchSize: 32, seed: 1234 }).nextBatch();
      const other = new LmTrainBatcher(train, { seqLen: L, batchSize: 32, seed: 4321 }).nextBatch();
      const first = new LmTrainBatcher(train, { seqLen: L, batchSize: 32, seed: 1234 }).nextBatch();
      expect(again.starts).toEqual(first.starts);
      expect(other.starts).not.toEqual(first.starts);
    });

    it('evaluation over valid scores every target exactly once (N − 1 targets)', () => {
      const valid = ids.get('valid') as Int32Array;
      const scored = new Uint8Array(valid.length);
      let total = 0;
      for (const batch of lmEvalBatches(valid, { seqLen: 128, batchSize: 16 })) {
        const [B, L] = batch.shape;
        for (let r = 0; r < B; r++) {
          const s = batch.starts[r] as number;
          for (let t = 0; t < L; t++) {
            if (batch.mask[r * L + t] === 1) {
              scored[s + t + 1] = (scored[s + t + 1] as number) + 1;
              expect(batch.y[r * L + t]).toBe(valid[s + t + 1]);
            }
          }
        }
        total += batch.targetCount;
      }
      expect(total).toBe(valid.length - 1);
      expect(scored[0]).toBe(0);
      expect(scored.subarray(1).every((v) => v === 1)).toBe(true);
    });
  });
});

// Integration with the real tokenizers of @grassflow/tokenizers (built dist), on the shared data.
import { WordLevelTokenizer, WordPieceTokenizer } from '@grassflow/tokenizers';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bertVocabPath,
  encodeSnliPairs,
  loadSnli,
  loadWikitextIds,
  snliBatches,
  wikitextPath,
  type CorpusEncoderLike,
  type TextEncoderLike,
} from '@grassflow/datasets';

const envDir = process.env['GRASSFLOW_DATA_DIR'];
const dataDir = envDir === undefined || envDir === '' ? undefined : resolve(envDir);

describe.skipIf(dataDir === undefined)('@grassflow/tokenizers on the shared data', () => {
  const dir = dataDir as string;
  let cacheDir: string;
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'gf-tok-int-'));
  });
  afterAll(() => rm(cacheDir, { recursive: true, force: true }));

  it('WordLevelTokenizer (per line, it appends <eos>) gives the 217,646 valid tokens, cached', async () => {
    const wl = WordLevelTokenizer.fromCorpusFile(wikitextPath('train', 'tokens', { dataDir: dir }));
    expect(wl.vocabSize).toBe(33_278);
    const first = await loadWikitextIds('valid', wl, { dataDir: dir, cacheDir, download: false });
    expect(first.cache).toBe('miss');
    expect(first.ids.length).toBe(217_646);
    expect(first.ids).toEqual(wl.encode(await readFile(wikitextPath('valid', 'tokens', { dataDir: dir }))));
    const again = await loadWikitextIds('valid', wl, { dataDir: dir, cacheDir, download: false });
    expect(again.cache).toBe('hit');
    expect(again.ids).toEqual(first.ids);
  });

  it('WordPiece corpus encoding of wiki.test.raw goes through the cache (miss, then identical hit)', async () => {
    const wp = WordPieceTokenizer.fromVocabFile(bertVocabPath({ dataDir: dir }));
    const corpus: CorpusEncoderLike = { id: wp.id, encodeCorpus: (t) => wp.encodeCorpus(t) };
    const first = await loadWikitextIds('test', corpus, { dataDir: dir, variant: 'raw', cacheDir, download: false });
    expect(first.cache).toBe('miss');
    expect(first.ids.length).toBeGreaterThan(245_569); // word pieces outnumber the 245,569 words
    expect(first.ids.every((id) => id >= 0 && id < 30_522)).toBe(true);
    const hit = await loadWikitextIds('test', corpus, { dataDir: dir, variant: 'raw', cacheDir, download: false });
    expect(hit.cache).toBe('hit');
    expect(hit.ids).toEqual(first.ids);
  });

  it('SNLI dev with WordPiece: [CLS] … [SEP] per sentence, at most 48 ids, masks match lengths', async () => {
    const wp = WordPieceTokenizer.fromVocabFile(bertVocabPath({ dataDir: dir }));
    const enc: TextEncoderLike = { id: wp.id, encode: async (t) => (await wp.encode(t)).ids };
    const dev = await loadSnli('dev', { dataDir: dir, download: false });
    const data = await encodeSnliPairs(dev.pairs.slice(0, 2000), enc, {
      maxTokens: 48,
      keepLastToken: true,
      padId: wp.specialIds.pad,
    });
    const [batch] = [...snliBatches(data, { batchSize: 64 })];
    if (batch === undefined) throw new Error('no batch');
    const T = 48;
    for (let b = 0; b < 64; b++) {
      const len = data.premiseLength[b] as number;
      expect(batch.premise[b * T]).toBe(wp.specialIds.cls);
      expect(batch.premise[b * T + len - 1]).toBe(wp.specialIds.sep);
      expect(batch.premiseMask.subarray(b * T, (b + 1) * T).reduce((s, v) => s + v, 0)).toBe(len);
      if (len < T) expect(batch.premise[b * T + len]).toBe(wp.specialIds.pad);
    }
    const direct = (await wp.encode(dev.pairs[0]?.premise ?? '')).ids;
    expect([...batch.premise.subarray(0, direct.length)]).toEqual([...direct]);
  });
});

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DatasetError,
  encodeLines,
  loadWikitextIds,
  loadWikitextText,
  type CorpusEncoderLike,
  type TextEncoderLike,
} from '@grassflow/datasets';

const text = ' = A = \n \n the cat sat \n the dog \n';
const words = new Map([
  ['=', 1],
  ['A', 2],
  ['the', 3],
  ['cat', 4],
  ['sat', 5],
  ['dog', 6],
]);
const enc: TextEncoderLike = {
  id: 'w',
  encode: (l) =>
    l
      .split(' ')
      .filter((w) => w !== '')
      .map((w) => words.get(w) ?? 0),
};

describe('encodeLines', () => {
  it('concatenates encode(line) ++ eolIds over the lines (no line after the final newline)', async () => {
    expect([...(await encodeLines(text, enc, { eolIds: [9] }))]).toEqual([1, 2, 1, 9, 9, 3, 4, 5, 9, 3, 6, 9]);
    expect([...(await encodeLines(text, enc, { eolIds: [9], skipBlankLines: true }))]).toEqual([
      1, 2, 1, 9, 3, 4, 5, 9, 3, 6, 9,
    ]);
    expect([...(await encodeLines('a\nb', { id: 'len', encode: (l) => [l.length] }))]).toEqual([1, 1]);
  });

  it('accepts asynchronous encoders with the same result', async () => {
    const asyncEnc: TextEncoderLike = { id: 'w', encode: async (l) => enc.encode(l) };
    expect(await encodeLines(text, asyncEnc, { eolIds: [9] })).toEqual(await encodeLines(text, enc, { eolIds: [9] }));
  });

  it('rejects ids that are not int32', async () => {
    const bad: TextEncoderLike = { id: 'bad', encode: () => [1.5] };
    await expect(encodeLines('x\n', bad)).rejects.toThrow(/'bad' returned id 1.5/);
  });
});

describe('loadWikitextIds / loadWikitextText on a small data folder', () => {
  let dataDir: string;
  let cacheDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gf-wt-'));
    cacheDir = join(dataDir, 'cache');
    await mkdir(join(dataDir, 'wikitext-2'));
    await writeFile(join(dataDir, 'wikitext-2/wiki.valid.tokens'), text);
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('verifies the published SHA-256 unless verify: false', async () => {
    const err = await loadWikitextText('valid', { dataDir, download: false }).catch((e: unknown) => e);
    expect((err as DatasetError).code).toBe('CHECKSUM_MISMATCH');
    expect((err as DatasetError).message).toContain('f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8');
    expect((await loadWikitextText('valid', { dataDir, download: false, verify: false })).text).toBe(text);
  });

  it('corpus encoders get the whole text; line options are refused for them', async () => {
    let calls = 0;
    const corpus: CorpusEncoderLike = {
      id: 'corpus',
      encodeCorpus: (t) => {
        calls++;
        return Int32Array.of(t.length);
      },
    };
    const r = await loadWikitextIds('valid', corpus, { dataDir, cacheDir, verify: false, download: false });
    expect([...r.ids]).toEqual([text.length]);
    expect(r.cache).toBe('miss');
    expect((await loadWikitextIds('valid', corpus, { dataDir, cacheDir, verify: false, download: false })).cache).toBe(
      'hit',
    );
    expect(calls).toBe(1);
    await expect(loadWikitextIds('valid', corpus, { dataDir, cacheDir, verify: false, eolIds: [1] })).rejects.toThrow(
      DatasetError,
    );
  });

  it('line encoders: cache keyed by tokenizer id and eolIds; cacheDir false disables it', async () => {
    const o = { dataDir, cacheDir, verify: false, download: false };
    expect((await loadWikitextIds('valid', enc, { ...o, eolIds: [9] })).cache).toBe('miss');
    expect((await loadWikitextIds('valid', enc, { ...o, eolIds: [9] })).cache).toBe('hit');
    expect((await loadWikitextIds('valid', enc, { ...o, eolIds: [8] })).cache).toBe('miss');
    const off = await loadWikitextIds('valid', enc, { ...o, cacheDir: false, eolIds: [9] });
    expect(off.cache).toBe('disabled');
    expect(off.ids.length).toBe(12);
  });
});

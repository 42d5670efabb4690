import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DatasetError,
  encodeSnliPairs,
  loadSnli,
  parseSnliJsonl,
  snliBatches,
  type TextEncoderLike,
} from '@grassflow/datasets';

const rec = (s1: string, s2: string, gold: string, id: string): string =>
  JSON.stringify({ annotator_labels: [gold], gold_label: gold, pairID: id, sentence1: s1, sentence2: s2 });

/** Toy encoder: one id per whitespace word = word length, plus 100 + a trailing [SEP]-like 99. */
const toy: TextEncoderLike = {
  id: 'toy',
  encode: (text) => [
    ...text
      .split(/\s+/)
      .filter((w) => w !== '')
      .map((w) => 100 + w.length),
    99,
  ],
};

const lines = [
  rec('A man sleeps.', 'A person rests.', 'entailment', 'p1'),
  rec('A dog runs.', 'A cat sits.', 'contradiction', 'p2'),
  rec('Kids play.', 'Kids play outside.', 'neutral', 'p3'),
  rec('No one agrees.', 'Unclear.', '-', 'p4'),
  '',
];

describe('SNLI', () => {
  it('drops gold "-", maps E/N/C to 0/1/2 and counts labels', () => {
    const d = parseSnliJsonl(lines.join('\n'), 'mem.jsonl');
    expect(d.pairs.map((p) => p.label)).toEqual([0, 2, 1]);
    expect(d.pairs[0]).toEqual({ premise: 'A man sleeps.', hypothesis: 'A person rests.', label: 0, pairId: 'p1' });
    expect(d.droppedNoGold).toBe(1);
    expect(d.labelCounts).toEqual([1, 1, 1]);
    expect(parseSnliJsonl(Buffer.from(lines.join('\n')), 'mem.jsonl')).toEqual(d); // bytes read line by line
  });

  it.each([
    ['{"sentence1": "a", ', 'not valid JSON'],
    ['[1, 2]', 'JSON object'],
    [JSON.stringify({ sentence1: 'a', gold_label: 'neutral' }), "'sentence2'"],
    [rec('a', 'b', 'maybe', 'x'), "'maybe'"],
  ])('names file and line of a malformed line (%s)', (bad, what) => {
    const text = [lines[0], lines[1], bad, lines[2]].join('\n');
    let err: unknown;
    try {
      parseSnliJsonl(text, 'snli_bad.jsonl');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DatasetError);
    expect((err as DatasetError).code).toBe('MALFORMED_JSONL');
    expect((err as DatasetError).message).toContain('snli_bad.jsonl:3');
    expect((err as DatasetError).message).toContain(what);
    expect(() => parseSnliJsonl(Buffer.from(text), 'snli_bad.jsonl')).toThrow('snli_bad.jsonl:3');
  });

  it('encodes each sentence separately, truncates to T, pads and masks', async () => {
    const long = Array.from({ length: 60 }, (_, i) => 'w'.repeat((i % 5) + 1)).join(' ');
    const pairs = [
      { premise: long, hypothesis: 'a bb', label: 1 as const, pairId: 'x' },
      { premise: 'ccc', hypothesis: long, label: 2 as const, pairId: 'y' },
    ];
    const enc = await encodeSnliPairs(pairs, toy, { maxTokens: 48 });
    expect(enc.premiseLength[0]).toBe(48);
    expect(enc.hypothesisLength[0]).toBe(3);
    expect([...enc.hypothesis.subarray(0, 4)]).toEqual([101, 102, 99, 0]);
    expect(enc.premise[47]).toBe(100 + (47 % 5) + 1); // plain truncation cuts the trailing 99
    expect(enc.truncated).toBe(2);
    const asyncToy: TextEncoderLike = { id: 'toy-async', encode: (t) => Promise.resolve(toy.encode(t)) };
    const viaAsync = await encodeSnliPairs(pairs, asyncToy, { maxTokens: 48 });
    expect(viaAsync.premise).toEqual(enc.premise);
    expect(viaAsync.hypothesis).toEqual(enc.hypothesis);
    const keep = await encodeSnliPairs(pairs, toy, { maxTokens: 48, keepLastToken: true });
    expect(keep.premise[47]).toBe(99);
    const [batch] = [...snliBatches(enc, { batchSize: 4 })];
    expect(batch?.shape).toEqual([2, 48]);
    expect([...(batch?.labels ?? [])]).toEqual([1, 2]);
    expect(batch?.hypothesisMask.subarray(0, 48).reduce((s, v) => s + v, 0)).toBe(3);
    expect(batch?.premiseMask.subarray(48, 96).reduce((s, v) => s + v, 0)).toBe(2);
  });

  it('shuffled batches visit every pair once per epoch, deterministically for a seed', async () => {
    const pairs = Array.from({ length: 103 }, (_, i) => ({
      premise: `p ${i}`,
      hypothesis: 'h',
      label: (i % 3) as 0 | 1 | 2,
      pairId: String(i),
    }));
    const enc = await encodeSnliPairs(pairs, toy);
    const order = (seed: number, epoch: number): number[] =>
      [...snliBatches(enc, { batchSize: 10, seed, epoch })].flatMap((b) => [...b.indices]);
    expect([...order(1, 0)].sort((a, b) => a - b)).toEqual(Array.from({ length: 103 }, (_, i) => i));
    expect(order(1, 0)).toEqual(order(1, 0));
    expect(order(1, 1)).not.toEqual(order(1, 0));
    expect([...snliBatches(enc, { batchSize: 10, dropLastBatch: true })].length).toBe(10);
    for (const b of snliBatches(enc, { batchSize: 10, seed: 4 })) {
      b.indices.forEach((r, i) => expect(b.labels[i]).toBe(r % 3));
    }
  });

  describe('loadSnli file choice', () => {
    let dataDir: string;
    beforeEach(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gf-snli-'));
      await mkdir(join(dataDir, 'snli'));
      await writeFile(join(dataDir, 'snli/snli_1.0_train_0.01.jsonl'), lines.join('\n'));
    });
    afterEach(() => rm(dataDir, { recursive: true, force: true }));

    it("'auto' falls back to the 1% sample and says so; 'full' does not", async () => {
      const d = await loadSnli('train', { dataDir, verify: false, download: false });
      expect(d.isSample).toBe(true);
      expect(d.split).toBe('train_0.01');
      expect(d.file).toBe(join(dataDir, 'snli/snli_1.0_train_0.01.jsonl'));
      const err = await loadSnli('train', { dataDir, train: 'full', download: false }).catch((e: unknown) => e);
      expect((err as DatasetError).code).toBe('DOWNLOAD_DISABLED');
      expect((err as DatasetError).message).toContain('https://nlp.stanford.edu/projects/snli/snli_1.0.zip');
      expect((err as DatasetError).message).toContain('only the 1% sample');
    });

    it('verifies the sample against its known SHA-256', async () => {
      const err = await loadSnli('train', { dataDir, download: false }).catch((e: unknown) => e);
      expect((err as DatasetError).code).toBe('CHECKSUM_MISMATCH');
    });
  });
});

// Pairs and type ids, truncation (whole and per sentence), padding, batches — checked by hand and against HF's own pair
// path.
import { readFileSync } from 'node:fs';
import { Tokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { packBatch, WordPieceTokenizer } from '@grassflow/tokenizers';
import { BERT_VOCAB, dataDir, dataPath, tempDir } from './helpers.js';

const A = 'A man is playing a guitar on stage.'; // a man is playing a guitar on stage . (9 pieces)
const B = 'Someone is making music.'; // someone 2619 is 2003 making 2437 music 2189 . 1012 (5 pieces)
const A_IDS = [1037, 2158, 2003, 2652, 1037, 2858, 2006, 2754, 1012];
const B_IDS = [2619, 2003, 2437, 2189, 1012];

describe.skipIf(dataDir === undefined)('WordPiece pairs, truncation, padding (real vocab.txt)', () => {
  let tok: WordPieceTokenizer;
  beforeAll(() => {
    tok = WordPieceTokenizer.fromVocabFile(dataPath(BERT_VOCAB));
  });

  it('encodes a pair as [CLS] A [SEP] B [SEP] with type ids 0 then 1', async () => {
    const e = await tok.encode(A, B);
    expect(Array.from(e.ids)).toEqual([101, ...A_IDS, 102, ...B_IDS, 102]);
    expect(Array.from(e.typeIds)).toEqual([...Array<number>(11).fill(0), ...Array<number>(6).fill(1)]);
    expect(Array.from(e.attentionMask)).toEqual(Array<number>(17).fill(1));
    expect(Array.from(e.specialTokensMask)).toEqual([
      1,
      ...Array<number>(9).fill(0),
      1,
      ...Array<number>(5).fill(0),
      1,
    ]);
    expect(e.tokens[10]).toBe('[SEP]');
  });

  it('without special tokens gives only the word pieces', async () => {
    const e = await tok.encode(A, B, { addSpecialTokens: false });
    expect(Array.from(e.ids)).toEqual([...A_IDS, ...B_IDS]);
    expect(Array.from(e.typeIds)).toEqual([...Array<number>(9).fill(0), ...Array<number>(5).fill(1)]);
  });

  it('longest_first: m = 12 − 3 = 9; shorter B keeps 5... then both halve: A 5, B 4', async () => {
    // n1 = 5 (B), n2 = max(5, 9 − 5) = 5 → 10 > 9, so the shorter keeps ⌊9/2⌋ = 4, the longer ⌈9/2⌉ = 5.
    const e = await tok.encode(A, B, { truncation: { maxLength: 12 } });
    expect(Array.from(e.ids)).toEqual([101, ...A_IDS.slice(0, 5), 102, ...B_IDS.slice(0, 4), 102]);
    // m = 13 − 3 = 10: B keeps 5, A keeps max(5, 10 − 5) = 5.
    const f = await tok.encode(A, B, { truncation: { maxLength: 13 } });
    expect(Array.from(f.ids)).toEqual([101, ...A_IDS.slice(0, 5), 102, ...B_IDS, 102]);
    // Long enough: untouched.
    expect((await tok.encode(A, B, { truncation: { maxLength: 17 } })).ids.length).toBe(17);
  });

  it('only_first / only_second / left direction', async () => {
    const first = await tok.encode(A, B, { truncation: { maxLength: 12, strategy: 'only_first' } });
    expect(Array.from(first.ids)).toEqual([101, ...A_IDS.slice(0, 4), 102, ...B_IDS, 102]);
    const second = await tok.encode(B, A, { truncation: { maxLength: 12, strategy: 'only_second' } });
    expect(Array.from(second.ids)).toEqual([101, ...B_IDS, 102, ...A_IDS.slice(0, 4), 102]);
    const left = await tok.encode(A, null, { truncation: { maxLength: 5, direction: 'left' } });
    expect(Array.from(left.ids)).toEqual([101, ...A_IDS.slice(-3), 102]); // keeps "on stage ."
    await expect(tok.encode(A, B, { truncation: { maxLength: 6, strategy: 'only_second' } })).rejects.toThrow(
      /too short/,
    );
    await expect(tok.encode(A, B, { truncation: { maxLength: 3 } })).rejects.toThrow(/maxLength ≥ 4/);
    await expect(tok.encode(A, null, { truncation: { maxLength: 2 } })).rejects.toThrow(/maxLength ≥ 3/);
  });

  it('truncation equals HF setTruncation + encode(pair) on the same tokenizer.json', async () => {
    const path = `${tempDir()}/tokenizer.json`;
    tok.saveTokenizerJson(path);
    const snli = readFileSync(dataPath('snli/snli_1.0_dev.jsonl'), 'utf8').split('\n').slice(0, 60);
    const pairs = snli.filter((l) => l !== '').map((l) => JSON.parse(l) as { sentence1: string; sentence2: string });
    const hfName = { longest_first: 'LongestFirst', only_first: 'OnlyFirst', only_second: 'OnlySecond' } as const;
    for (const [maxLength, strategy] of [
      [16, 'longest_first'],
      [21, 'longest_first'],
      [26, 'only_first'],
      [22, 'only_second'],
    ] as const) {
      const hf = Tokenizer.fromFile(path);
      // HF types the strategy as a const enum whose values are these strings.
      hf.setTruncation(maxLength, { strategy: hfName[strategy], direction: 'right' } as never);
      let compared = 0;
      let truncated = 0;
      for (const p of pairs) {
        let ref;
        try {
          ref = await hf.encode(p.sentence1, p.sentence2);
        } catch {
          // only_first / only_second with too short a sentence: HF rejects it, and so do we.
          await expect(tok.encode(p.sentence1, p.sentence2, { truncation: { maxLength, strategy } })).rejects.toThrow(
            /too short/,
          );
          continue;
        }
        const ours = await tok.encode(p.sentence1, p.sentence2, { truncation: { maxLength, strategy } });
        expect(Array.from(ours.ids)).toEqual(ref.getIds());
        expect(Array.from(ours.typeIds)).toEqual(ref.getTypeIds());
        compared++;
        if ((await tok.encode(p.sentence1, p.sentence2)).ids.length > maxLength) truncated++;
      }
      expect(compared).toBeGreaterThan(20);
      expect(truncated).toBeGreaterThan(10); // the setting really cuts
    }
  });

  it('per-sentence truncation keeps at most K pieces of each sentence before [CLS]/[SEP]', async () => {
    const e = await tok.encode(A, B, { maxTokensPerSentence: 3 });
    expect(Array.from(e.ids)).toEqual([101, ...A_IDS.slice(0, 3), 102, ...B_IDS.slice(0, 3), 102]);
    expect(Array.from(e.typeIds)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1]);
    const single = await tok.encode(A, null, { maxTokensPerSentence: 48 });
    expect(single.ids.length).toBe(11); // shorter than K: untouched
  });

  it('pads to a fixed length and to the longest of a batch with [PAD] 0, mask 0, type id 0', async () => {
    const e = await tok.encode(B, null, { padding: { strategy: 'fixed', length: 10 } });
    expect(Array.from(e.ids)).toEqual([101, ...B_IDS, 102, 0, 0, 0]);
    expect(Array.from(e.attentionMask)).toEqual([1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    expect(e.tokens.slice(7)).toEqual(['[PAD]', '[PAD]', '[PAD]']);
    // HF never truncates when padding: a longer encoding stays as it is.
    expect((await tok.encode(A, null, { padding: { strategy: 'fixed', length: 4 } })).ids.length).toBe(11);
    const left = await tok.encode(B, null, { padding: { strategy: 'fixed', length: 9, direction: 'left' } });
    expect(Array.from(left.ids)).toEqual([0, 0, 101, ...B_IDS, 102]);

    const batch = await tok.encodeBatch([B, [A, B], 'Hi.'], { padding: { strategy: 'longest', padToMultipleOf: 8 } });
    expect(batch.map((x) => x.ids.length)).toEqual([24, 24, 24]); // longest 17, rounded up to 24
    expect(Array.from(batch[2]!.ids.slice(0, 5))).toEqual([101, 7632, 1012, 102, 0]); // hi 7631+1 → 7632
    const packed = packBatch(batch);
    expect([packed.batchSize, packed.seqLen]).toEqual([3, 24]);
    expect(packed.ids.slice(24, 48)).toEqual(batch[1]!.ids);
    expect(packed.typeIds.slice(24, 48)).toEqual(batch[1]!.typeIds);
    expect(packed.attentionMask.reduce((s, v) => s + v, 0)).toBe(7 + 17 + 4);
    expect(() => packBatch([batch[0]!, { ...batch[1]!, ids: new Int32Array(3) }])).toThrow(/padding/);
  });

  it('encodeBatch equals encode one by one', async () => {
    const inputs = [A, [A, B] as const, '', 'Café 东京'];
    const batch = await tok.encodeBatch(inputs);
    for (let i = 0; i < inputs.length; i++) {
      const x = inputs[i]!;
      const one = typeof x === 'string' ? await tok.encode(x) : await tok.encode(x[0], x[1]);
      expect(batch[i]).toEqual(one);
    }
    expect(Array.from(batch[2]!.ids)).toEqual([101, 102]);
  });

  it('encodeCorpus gives the word pieces of every line, as encoding the whole text at once', async () => {
    const text = readFileSync(dataPath('wikitext-2/wiki.valid.tokens'), 'utf8').split('\n').slice(0, 300).join('\n');
    const ids = await tok.encodeCorpus(text, { linesPerBatch: 37 });
    const whole = await tok.encode(text, null, { addSpecialTokens: false });
    expect(ids.length).toBeGreaterThan(5000);
    expect(ids).toEqual(whole.ids);
    const withSep = await tok.encodeCorpus(' = Homarus gammarus = \n \n Hi \n', { lineEndId: 102 });
    expect(tok.decode(withSep, { skipSpecialTokens: false })).toBe('= homarus gammarus = [SEP] hi [SEP]');
  });
});

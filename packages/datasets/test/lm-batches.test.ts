import { describe, expect, it } from 'vitest';
import {
  DatasetError,
  LmTrainBatcher,
  lmEvalBatches,
  lmEvalWindowCount,
  type LmBatch,
  type LmTrainOptions,
} from '@grassflow/datasets';

/** ids[i] = i, so every id names its own position. */
const seq = (n: number): Int32Array => Int32Array.from({ length: n }, (_, i) => i);

function epochRows(b: LmTrainBatcher): LmBatch[] {
  return [...b.epochBatches()];
}

/** Checks rows against the definition: x = ids[s..s+len−1), y = ids[s+1..s+len), mask 1 exactly on the real part. */
function checkRows(batch: LmBatch, ids: Int32Array): void {
  const [B, L] = batch.shape;
  for (let b = 0; b < B; b++) {
    const s = batch.starts[b] as number;
    for (let t = 0; t < L; t++) {
      if (batch.mask[b * L + t] === 1) {
        expect(batch.x[b * L + t]).toBe(ids[s + t]);
        expect(batch.y[b * L + t]).toBe(ids[s + t + 1]);
      }
    }
  }
}

describe('LmTrainBatcher', () => {
  it('each token is in exactly one chunk per epoch; targets are inputs shifted by one', () => {
    const N = 10_007;
    const L = 16;
    const ids = seq(N);
    const b = new LmTrainBatcher(ids, { seqLen: L, batchSize: 8, seed: 1 });
    expect(b.numChunks).toBe(Math.floor(N / (L + 1)));
    expect(b.droppedTokens).toBe(N % (L + 1));
    const seen = new Uint8Array(N);
    let rows = 0;
    for (const batch of epochRows(b)) {
      checkRows(batch, ids);
      const [B] = batch.shape;
      for (let r = 0; r < B; r++) {
        const s = batch.starts[r] as number;
        expect(s % (L + 1)).toBe(0);
        for (let t = 0; t <= L; t++) seen[s + t] = (seen[s + t] as number) + 1;
        for (let t = 0; t < L; t++) expect(batch.y[r * L + t]).toBe((batch.x[r * L + t] as number) + 1); // ids[i] = i
        rows++;
      }
    }
    expect(rows).toBe(b.numChunks);
    const covered = b.numChunks * (L + 1);
    for (let i = 0; i < N; i++) expect(seen[i]).toBe(i < covered ? 1 : 0);
    expect(b.state).toEqual({ epoch: 1, position: 0, seed: 1 });
  });

  it("remainder 'pad' adds the tail as one shorter, masked chunk", () => {
    const N = 1000;
    const L = 15; // 1000 = 62·16 + 8
    const ids = seq(N);
    const b = new LmTrainBatcher(ids, { seqLen: L, batchSize: 7, seed: 3, remainder: 'pad', padId: -1 });
    expect(b.numChunks).toBe(63);
    expect(b.droppedTokens).toBe(0);
    const seen = new Uint8Array(N);
    let targets = 0;
    for (const batch of epochRows(b)) {
      checkRows(batch, ids);
      targets += batch.targetCount;
      for (let r = 0; r < batch.shape[0]; r++) {
        const s = batch.starts[r] as number;
        let len = 0;
        for (let t = 0; t < L; t++) len += batch.mask[r * L + t] as number;
        for (let t = 0; t <= len; t++) seen[s + t] = (seen[s + t] as number) + 1;
        if (s === 62 * 16) {
          expect(len).toBe(7);
          expect(batch.x[r * L + 7]).toBe(-1);
        }
      }
    }
    expect([...seen].every((v) => v === 1)).toBe(true);
    expect(targets).toBe(62 * 15 + 7);
  });

  it('is deterministic for a seed; other seeds and other epochs give other orders', () => {
    const ids = seq(5000);
    const order = (seed: number, epochs = 1): number[] => {
      const b = new LmTrainBatcher(ids, { seqLen: 9, batchSize: 4, seed });
      const out: number[] = [];
      for (let e = 0; e < epochs; e++) for (const batch of b.epochBatches()) out.push(...batch.starts);
      return out;
    };
    expect(order(11)).toEqual(order(11));
    expect(order(11)).not.toEqual(order(12));
    const two = order(11, 2);
    expect(two.slice(0, 500)).not.toEqual(two.slice(500));
    expect([...two.slice(500)].sort((a, b) => a - b)).toEqual([...two.slice(0, 500)].sort((a, b) => a - b));
  });

  it('resumes mid-epoch from {epoch, position, seed} with the exact same batches', () => {
    const ids = seq(3000);
    const opts = { seqLen: 8, batchSize: 5, seed: 99 };
    const a = new LmTrainBatcher(ids, opts);
    const ref: number[][] = [];
    for (let i = 0; i < 200; i++) ref.push([...a.nextBatch().starts]); // crosses epoch boundaries (67 batches/epoch)
    const b = new LmTrainBatcher(ids, opts);
    for (let i = 0; i < 90; i++) b.nextBatch();
    const saved = JSON.parse(JSON.stringify(b.state)) as typeof b.state;
    expect(saved).toEqual({ epoch: 1, position: 115, seed: 99 });
    const c = new LmTrainBatcher(ids, opts);
    c.restore(saved);
    for (let i = 90; i < 200; i++) expect([...c.nextBatch().starts]).toEqual(ref[i]);
    expect(() => c.restore({ ...saved, seed: 1 })).toThrow(DatasetError);
  });

  it('dropLastBatch keeps only full batches', () => {
    const b = new LmTrainBatcher(seq(1000), { seqLen: 9, batchSize: 30, seed: 0, dropLastBatch: true });
    const batches = epochRows(b);
    expect(batches.length).toBe(3);
    expect(batches.every((x) => x.shape[0] === 30)).toBe(true);
    expect(b.batchesPerEpoch).toBe(3);
  });

  it('rejects bad arguments with a typed error', () => {
    expect(() => new LmTrainBatcher(seq(5), { seqLen: 8, batchSize: 1, seed: 0 })).toThrow(/do not fill one chunk/);
    expect(() => new LmTrainBatcher(seq(100), { seqLen: 0, batchSize: 1, seed: 0 })).toThrow(DatasetError);
  });
});

describe('lmEvalBatches', () => {
  it.each([
    [1000, 16, 16],
    [1000, 16, 5],
    [17, 16, 16],
    [18, 16, 16],
    [2, 4, 4],
    [777, 32, 1],
  ])('N=%i, L=%i, stride=%i: every target ids[1..N−1] scored exactly once, in order', (N, L, stride) => {
    const ids = seq(N);
    const scored = new Uint8Array(N);
    let windows = 0;
    for (const batch of lmEvalBatches(ids, { seqLen: L, batchSize: 3, stride, padId: -7 })) {
      checkRows(batch, ids);
      let count = 0;
      for (let r = 0; r < batch.shape[0]; r++) {
        for (let t = 0; t < L; t++) {
          if (batch.mask[r * L + t] === 1) {
            const target = batch.y[r * L + t] as number;
            scored[target] = (scored[target] as number) + 1;
            count++;
          }
        }
        windows++;
      }
      expect(batch.targetCount).toBe(count);
    }
    expect(windows).toBe(lmEvalWindowCount(N, stride));
    expect(scored[0]).toBe(0);
    for (let i = 1; i < N; i++) expect(scored[i]).toBe(1);
  });

  it('with stride s < L each scored token sees up to L − 1 tokens of context', () => {
    const L = 8;
    const batches = [...lmEvalBatches(seq(40), { seqLen: L, batchSize: 100, stride: 2 })];
    const b = batches[0] as LmBatch;
    // window 5 scores targets 11, 12 with inputs ids[4..12)
    expect(b.starts[5]).toBe(4);
    expect([...b.mask.subarray(5 * L, 6 * L)]).toEqual([0, 0, 0, 0, 0, 0, 1, 1]);
  });

  it('non-overlapping windows by default; the last one is shorter and padded', () => {
    const batches = [...lmEvalBatches(seq(21), { seqLen: 8, batchSize: 2 })];
    expect(batches.map((b) => b.shape[0])).toEqual([2, 1]);
    const last = batches[1] as LmBatch;
    expect(last.starts[0]).toBe(16);
    expect([...last.x]).toEqual([16, 17, 18, 19, 0, 0, 0, 0]);
    expect([...last.y]).toEqual([17, 18, 19, 20, 0, 0, 0, 0]);
    expect([...last.mask]).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
  });
});

describe('seqLen', () => {
  const ids = Int32Array.from({ length: 200 }, (_, i) => i % 17);
  it('is required, and must fit the data', () => {
    const without = (o: object) => o as LmTrainOptions; // what a caller without types may pass
    expect(() => new LmTrainBatcher(ids, without({ batchSize: 1, seed: 0 }))).toThrow(
      /seqLen \(tokens per row\) is required/,
    );
    // blockSize, the old name, is not an alias (pre-1.0 options are not kept under old names)
    expect(() => new LmTrainBatcher(ids, without({ blockSize: 8, batchSize: 1, seed: 0 }))).toThrow(
      /seqLen .* is required/,
    );
    expect(() => new LmTrainBatcher(Int32Array.from([1, 2]), { seqLen: 8, batchSize: 1, seed: 0 })).toThrow(
      /smaller seqLen/,
    );
  });
});

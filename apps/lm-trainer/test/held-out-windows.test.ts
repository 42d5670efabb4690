// Sliding-window scoring, per-window NLL sums and the uncertainty rows built on them (no data folder needed).
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { TrainingRng } from '@grassflow/training';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluatePerplexity, positionBandEdges } from '@grassflow/training';
import type { HeldOutScore, LedgerRecord } from '../src/study/ledger';
import { gapRows, measureName } from '../src/study/uncertainty';
import { bandColumn, decodeWindowNll, encodeWindowNll, windowCounts } from '../src/study/windows';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

const L = 16;
const model = () => createModel(preset('tiny', { vocabSize: 40, maxLen: L }), { seed: 5 });
const rng = new TrainingRng(9);
const ids = Int32Array.from({ length: 203 }, () => rng.nextUint32() % 40); // 202 targets

/** NLL of target t (1-based) given ids[start .. t), by hand from the logits. */
function nllByHand(m: ReturnType<typeof model>, start: number, t: number): number {
  const x = ids.subarray(start, t);
  const logits = tf
    .tidy(() => m.apply(tf.tensor2d(Array.from(x), [1, x.length], 'int32')))
    .arraySync()[0] as number[][];
  const row = logits[x.length - 1] as number[];
  const max = Math.max(...row);
  return max + Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0)) - (row[ids[t] as number] as number);
}

describe('positionBandEdges', () => {
  it('gives the bands 1, 2–8, 9–16, 17–32, 33–64, 65–128 for L = 128', () => {
    expect(positionBandEdges(128)).toEqual([1, 8, 16, 32, 64, 128]);
    expect(positionBandEdges(16)).toEqual([1, 8, 16]);
    expect(positionBandEdges(100)).toEqual([1, 8, 16, 32, 64, 100]);
  });
});

describe('evaluatePerplexity in sliding windows, with per-window sums', () => {
  it('scores each target once with at least L − stride tokens of context (but the first), as computed by hand', async () => {
    const m = model();
    const stride = 4;
    const r = await evaluatePerplexity(m, ids, { seqLen: L, batch: 5, stride, bandEdges: [L] });
    let sum = 0;
    for (let t = 1; t < ids.length; t++) {
      const k = Math.ceil(t / stride) - 1; // the window that scores t
      const start = Math.max(0, k * stride + stride - L);
      if (t > L) expect(t - start).toBeGreaterThanOrEqual(L - stride + 1); // context ≥ L − stride
      sum += nllByHand(m, start, t);
    }
    expect(r.tokens).toBe(202);
    expect(r.nll).toBeCloseTo(sum / 202, 5);
    const w = r.windowSums as Float64Array;
    expect(w).toHaveLength(Math.ceil(202 / stride));
    expect(w.reduce((s, x) => s + x, 0)).toBeCloseTo(sum, 3);
    m.dispose();
  });

  it('keeps each window’s sums by band where the layout puts targets, and they round-trip through float32', async () => {
    const m = model();
    const bandEdges = positionBandEdges(L);
    const r = await evaluatePerplexity(m, ids, { seqLen: L, batch: 3, bandEdges });
    const sums = r.windowSums as Float64Array;
    const layout = { seqLen: L, stride: L, bandEdges };
    const counts = windowCounts(r.tokens, layout);
    expect(counts).toHaveLength(sums.length);
    expect(counts.reduce((s, c) => s + c, 0)).toBe(202);
    // every target's NLL is positive: a band has a sum exactly where the layout counts targets
    sums.forEach((s, i) => expect(s > 0).toBe((counts[i] as number) > 0));
    // the band sums agree with the NLL by position
    const byPos = r.nllByPosition.map((v, t) => v * (t < 202 % L ? 13 : 12)); // 202 = 12·16 + 10
    expect(bandColumn(sums, 3, 0).reduce((s, x) => s + x, 0)).toBeCloseTo(byPos[0] as number, 3);
    expect(bandColumn(sums, 3, 2).reduce((s, x) => s + x, 0)).toBeCloseTo(
      byPos.slice(8).reduce((s, x) => s + x, 0),
      3,
    );
    const stored = encodeWindowNll(sums, layout);
    expect(stored.windows).toBe(13);
    expect(Array.from(decodeWindowNll(stored))).toEqual(Array.from(Float32Array.from(sums)));
    m.dispose();
  });
});

/** A ledger record of one seed with the given test scores (what gapRows reads). */
function rec(seed: number, test: HeldOutScore): LedgerRecord {
  return { config: { training: { seed } }, heldOut: { valid: test, test } } as unknown as LedgerRecord;
}

/** Test scores from per-window band sums of non-overlapping windows of 16 over 202 targets. */
function scores(sums: Float64Array, slidingSums: Float64Array): HeldOutScore {
  const bandEdges = positionBandEdges(L);
  const counts = windowCounts(202, { seqLen: L, stride: L, bandEdges });
  const pos = Array.from({ length: L }, (_, t) => {
    const band = bandEdges.findIndex((e) => t < e);
    let s = 0;
    let n = 0;
    for (let k = 0; k < 13; k++) {
      s += (sums[k * 3 + band] as number) / Math.max(1, counts[k * 3 + band] as number);
      n += 1;
    }
    return s / n;
  });
  const nll = sums.reduce((s, x) => s + x, 0) / 202;
  const sl = slidingSums.reduce((s, x) => s + x, 0) / 202;
  return {
    tokens: 202,
    nll,
    ppl: Math.exp(nll),
    nllByPosition: pos,
    windows: encodeWindowNll(sums, { seqLen: L, stride: L, bandEdges }),
    sliding: {
      stride: 4,
      tokens: 202,
      nll: sl,
      ppl: Math.exp(sl),
      nllByPosition: pos,
      windows: encodeWindowNll(slidingSums, { seqLen: L, stride: 4, bandEdges: [L] }),
    },
  };
}

describe('gapRows', () => {
  const bandEdges = positionBandEdges(L);
  const counts = windowCounts(202, { seqLen: L, stride: L, bandEdges });
  const slCounts = windowCounts(202, { seqLen: L, stride: 4, bandEdges: [L] });
  const base = (salt: number) => counts.map((c, i) => c * (3 + 0.5 * Math.sin(i + salt)));
  const slBase = (salt: number) => slCounts.map((c, i) => c * (3 + 0.5 * Math.cos(i + salt)));

  it('identical runs: a zero gap with zero-width seed and token intervals', () => {
    const a = [1, 2, 3].map((s) => rec(s, scores(base(s), slBase(s))));
    const b = [1, 2, 3].map((s) => rec(s, scores(base(s), slBase(s))));
    const rows = gapRows({ records: a }, { records: b }, []);
    expect(rows.map((r) => measureName(r.measure))).toEqual([
      'test PPL',
      'position 1',
      'positions 2–8',
      'positions 9–16',
      'test PPL, sliding windows (stride 64)',
    ]);
    for (const r of rows) {
      expect(r.gap).toBe(0);
      expect(r.seeds).toEqual({ lo: 0, hi: 0 });
      expect(r.tokens).toEqual({ lo: 0, hi: 0 });
    }
  });

  it('a constant shift of every target’s NLL gives exactly that gap in every measure, and the tuning term', () => {
    const c = 0.05;
    const a = [1, 2].map((s) =>
      rec(
        s,
        scores(
          base(s).map((x, i) => x + c * (counts[i] as number)),
          slBase(s).map((x, i) => x + c * (slCounts[i] as number)),
        ),
      ),
    );
    const b = [1, 2].map((s) => rec(s, scores(base(s), slBase(s))));
    const worse = [1, 2].map((s) =>
      rec(
        s,
        scores(
          base(s).map((x, i) => x + 2 * c * (counts[i] as number)),
          slBase(s).map((x, i) => x + 2 * c * (slCounts[i] as number)),
        ),
      ),
    );
    const rows = gapRows({ records: a }, { records: b }, [
      { which: 'Grassmann lr+', lr: 0.004, a: { records: worse }, b: { records: b } },
    ]);
    const want = 100 * Math.expm1(c);
    for (const r of rows) {
      expect(r.gap).toBeCloseTo(want, 4);
      expect(r.seeds?.lo).toBeCloseTo(want, 4);
      expect(r.seeds?.hi).toBeCloseTo(want, 4);
      expect(r.tokens?.lo).toBeCloseTo(want, 4);
      expect(r.tokens?.hi).toBeCloseTo(want, 4);
      expect(r.tuning).toHaveLength(1);
      expect(r.tuning[0]?.gap).toBeCloseTo(100 * Math.expm1(2 * c), 4);
    }
  });
});

// The one mixer and the one attention: their incremental (past/cache), traced and bidirectional forms.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  attentionTrace,
  attentionWithCache,
  causalAttention,
  crossEntropy,
  grassmannMixing,
  grassmannMixingStep,
  grassmannMixingTrace,
  pluckerPairs,
  tokenNll,
  type AttentionCache,
  type AttentionWeights,
  type GrassmannMixingPast,
  type GrassmannMixingWeights,
} from '@grassflow/gpu-layers';
import { relErr, useBackend, values } from './helpers.js';

const rnd = (shape: number[], seed: number, s = 1) => tf.randomNormal(shape, 0, s, 'float32', seed);

function mixingWeights(d: number, r: number, seed: number): GrassmannMixingWeights {
  const C = (r * (r - 1)) / 2;
  return {
    wRed: rnd([d, r], seed, 0.7) as tf.Tensor2D,
    bRed: rnd([r], seed + 1, 0.3) as tf.Tensor1D,
    wPlu: rnd([C, d], seed + 2, 0.7) as tf.Tensor2D,
    bPlu: rnd([d], seed + 3, 0.3) as tf.Tensor1D,
    wGate: rnd([2 * d, d], seed + 4, 0.7) as tf.Tensor2D,
    bGate: rnd([d], seed + 5, 0.3) as tf.Tensor1D,
  };
}

function attnWeights(d: number, seed: number): AttentionWeights {
  return {
    wQkv: rnd([d, 3 * d], seed, 0.8) as tf.Tensor2D,
    bQkv: rnd([3 * d], seed + 1, 0.3) as tf.Tensor1D,
    wProj: rnd([d, d], seed + 2, 0.5) as tf.Tensor2D,
    bProj: rnd([d], seed + 3, 0.3) as tf.Tensor1D,
  };
}

/** z = h·W_red + b_red [B, L, r]. */
function zOf(h: tf.Tensor3D, w: GrassmannMixingWeights, r: number): tf.Tensor3D {
  const [B, L, d] = h.shape;
  return tf.reshape(tf.add(tf.matMul(tf.reshape(h, [B * L, d]), w.wRed), w.bRed), [B, L, r]);
}

describe('grassmannMixing with a past', () => {
  it('chunks fed with their past equal the rows of the whole-sequence call (1e-5)', async () => {
    await useBackend('cpu');
    const [B, L, d, r] = [2, 11, 6, 4];
    const offsets = [1, 3, 4];
    const w = mixingWeights(d, r, 10);
    const h = rnd([B, L, d], 1) as tf.Tensor3D;
    const full = values(grassmannMixing(h, w, { offsets, eps: 1e-6, direction: 'causal' }));
    const got = new Float32Array(B * L * d);
    let past: GrassmannMixingPast = { z: null, t0: 0 };
    for (const T of [1, 2, 1, 4, 3]) {
      const chunk = tf.slice(h, [0, past.t0, 0], [B, T, d]);
      const { output, next } = grassmannMixingStep(chunk, w, { offsets, eps: 1e-6, direction: 'causal', past });
      expect(next.z?.shape).toEqual([B, Math.min(past.t0 + T, 4), r]); // the last max(Δ) states only
      const out = values(output);
      for (let b = 0; b < B; b++) got.set(out.subarray(b * T * d, (b + 1) * T * d), (b * L + past.t0) * d);
      past.z?.dispose();
      past = next;
    }
    expect(relErr(got, full)).toBeLessThan(1e-5);
    // the same through grassmannMixing's own option, from a past of exactly max(Δ) states
    const tail = grassmannMixing(tf.slice(h, [0, 7, 0], [B, 4, d]), w, {
      offsets,
      eps: 1e-6,
      direction: 'causal',
      past: { z: tf.slice(zOf(h, w, r), [0, 3, 0], [B, 4, r]), t0: 7 },
    });
    const tailRef = tf.slice(tf.tensor3d(full, [B, L, d]), [0, 7, 0], [B, 4, d]);
    expect(relErr(values(tail), values(tailRef))).toBeLessThan(1e-5);
  });

  it('refuses a past too short for the offsets, and any past of a bidirectional layer', async () => {
    await useBackend('cpu');
    const w = mixingWeights(4, 3, 20);
    const h = rnd([1, 2, 4], 2) as tf.Tensor3D;
    const z = tf.zeros<tf.Rank.R3>([1, 1, 3]);
    expect(() => grassmannMixing(h, w, { offsets: [2], eps: 1e-6, direction: 'causal', past: { z, t0: 5 } })).toThrow(
      /at t0 = 5 past.z needs between 2 and 5 positions, got 1/,
    );
    expect(() =>
      grassmannMixing(h, w, { offsets: [1], eps: 1e-6, direction: 'bidirectional', past: { z, t0: 1 } }),
    ).toThrow(/bidirectional layer reads future positions/);
  });
});

describe('grassmannMixingTrace', () => {
  it('returns the output of grassmannMixing (to 1e-6) and intermediates that satisfy the formulas', async () => {
    await useBackend('cpu');
    const [L, d, r] = [5, 4, 3];
    const offsets = [1, 2];
    const w = mixingWeights(d, r, 30);
    const h = rnd([1, L, d], 3) as tf.Tensor3D;
    const opts = { offsets, eps: 1e-6, direction: 'causal' as const };
    const tr = grassmannMixingTrace(h, w, opts);
    // the trace is the reference forward; grassmannMixing's fused path rounds differently
    expect(relErr(values(tr.output), values(grassmannMixing(h, w, opts)))).toBeLessThan(1e-6);
    const H = h.arraySync()[0] as number[][];
    const z = tr.z.arraySync()[0] as number[][];
    const Wr = w.wRed.arraySync();
    const br = w.bRed.arraySync();
    z.forEach((zt, t) =>
      zt.forEach((v, i) =>
        expect(v).toBeCloseTo(
          H[t]!.reduce((s, x, k) => s + x * Wr[k]![i]!, br[i]!),
          5,
        ),
      ),
    );
    offsets.forEach((delta, o) => {
      const ph = (tr.pHat[o] as tf.Tensor3D).arraySync()[0] as number[][];
      for (let t = 0; t < L; t++) {
        if (t < delta) {
          expect(ph[t]?.map(Math.abs)).toEqual([0, 0, 0]);
          continue;
        }
        const a = z[t - delta] as number[];
        const b = z[t] as number[];
        const p = pluckerPairs(r).map(([i, j]) => a[i]! * b[j]! - a[j]! * b[i]!);
        const n = Math.sqrt(p.reduce((s, x) => s + x * x, 0) + 1e-12);
        p.forEach((x, c) => expect(ph[t]![c]).toBeCloseTo(x / n, 5));
      }
    });
    // h_mix = α ⊙ h + (1 − α) ⊙ g, and g = 0 at t = 0 (no pair)
    const g = values(tr.g);
    const alpha = values(tr.alpha);
    const out = values(tr.output);
    H.flat().forEach((x, k) => expect(out[k]).toBeCloseTo(alpha[k]! * x + (1 - alpha[k]!) * g[k]!, 5));
    expect(Array.from(g.subarray(0, d), Math.abs)).toEqual([0, 0, 0, 0]);
    tf.dispose([tr.output, tr.z, tr.g, tr.alpha, ...tr.pHat]);
  });
});

/** Naive attention of one sequence (internal layout): keys j allowed where (j ≤ i or !causal) and mask[j] = 1. */
function naive(
  h: number[][],
  w: AttentionWeights,
  H: number,
  kind: 'dpa' | 'ea',
  causal: boolean,
  mask: number[],
): number[][] {
  const d = (h[0] as number[]).length;
  const dh = d / H;
  const W = w.wQkv.arraySync();
  const bq = w.bQkv.arraySync();
  const P = w.wProj.arraySync();
  const bp = w.bProj.arraySync();
  const lin = (x: number[], m: number[][], b: number[]) =>
    b.map((bo, o) => x.reduce((s, xv, i) => s + xv * m[i]![o]!, bo));
  const qkv = h.map((x) => lin(x, W, bq));
  const y = h.map((_, i) => {
    const row = new Array<number>(d).fill(0);
    for (let head = 0; head < H; head++) {
      const keys = h.map((_, j) => j).filter((j) => (j <= i || !causal) && mask[j] === 1);
      const s = keys.map((j) => {
        let dot = 0;
        for (let e = 0; e < dh; e++) dot += qkv[i]![head * dh + e]! * qkv[j]![d + head * dh + e]!;
        return dot / Math.sqrt(dh);
      });
      const e = kind === 'dpa' ? s.map((v) => Math.exp(v - Math.max(...s))) : s.map((v) => (v * v) / (1 + v * v));
      const z = e.reduce((p, c) => p + c, 0) + (kind === 'ea' ? 1e-6 : 0);
      keys.forEach((j, n) => {
        for (let k = 0; k < dh; k++) row[head * dh + k]! += (e[n]! / z) * qkv[j]![2 * d + head * dh + k]!;
      });
    }
    return row;
  });
  return y.map((x) => lin(x, P, bp));
}

describe('one attention', () => {
  for (const kind of ['dpa', 'ea'] as const) {
    it(`${kind}: bidirectional with a key padding mask equals a naive reference`, async () => {
      await useBackend('cpu');
      const [B, L, d, H] = [2, 5, 6, 2];
      const w = attnWeights(d, 40);
      const h = rnd([B, L, d], 4) as tf.Tensor3D;
      const mask = [
        [1, 1, 1, 0, 0],
        [1, 1, 1, 1, 1],
      ];
      const out = causalAttention(h, w, { nHeads: H, kind, eps: 1e-6, causal: false, keyMask: tf.tensor2d(mask) });
      const hs = h.arraySync();
      const ref = hs.flatMap((x, b) => naive(x, w, H, kind, false, mask[b] as number[]).flat());
      expect(relErr(values(out), ref)).toBeLessThan(1e-5);
      // causal with padding: query 1 of sequence 0 sees keys 0, 1 only
      const causal = causalAttention(h, w, { nHeads: H, kind, eps: 1e-6, keyMask: tf.tensor2d(mask) });
      const refC = hs.flatMap((x, b) => naive(x, w, H, kind, true, mask[b] as number[]).flat());
      expect(relErr(values(causal), refC)).toBeLessThan(1e-5);
    });

    it(`${kind}: attentionTrace returns causalAttention's output, its scores and causal weights`, async () => {
      await useBackend('cpu');
      const [L, d, H] = [4, 4, 2];
      const w = attnWeights(d, 70);
      const h = rnd([1, L, d], 7) as tf.Tensor3D;
      const tr = attentionTrace(h, w, { nHeads: H, kind, eps: 1e-6 });
      expect(values(tr.output)).toEqual(values(causalAttention(h, w, { nHeads: H, kind, eps: 1e-6 })));
      const a = tr.weights.arraySync();
      const sc = tr.scores.arraySync();
      const q = tf.add<tf.Tensor2D>(tf.matMul(tf.reshape(h, [L, d]), w.wQkv), w.bQkv).arraySync(); // [L, 3d]
      a.forEach((head, hd) =>
        head.forEach((row, i) => {
          row.forEach((v, j) => {
            if (j > i) expect(v).toBe(0);
            let dot = 0;
            for (let e = 0; e < d / H; e++) dot += q[i]![hd * 2 + e]! * q[j]![d + hd * 2 + e]!;
            expect(sc[hd]![i]![j]).toBeCloseTo(dot / Math.sqrt(d / H), 5);
          });
          const sum = row.reduce((x, y) => x + y, 0);
          if (kind === 'dpa') expect(sum).toBeCloseTo(1, 6);
          else expect(sum).toBeLessThan(1);
        }),
      );
    });

    it(`${kind}: a key/value cache fed chunk by chunk equals the whole-sequence call`, async () => {
      await useBackend('cpu');
      const [B, L, d, H] = [2, 7, 4, 2];
      const w = attnWeights(d, 50);
      const h = rnd([B, L, d], 5) as tf.Tensor3D;
      const full = causalAttention(h, w, { nHeads: H, kind, eps: 1e-6 });
      let cache: AttentionCache = { keysT: null, values: null };
      let t0 = 0;
      const outs: tf.Tensor3D[] = [];
      for (const T of [3, 1, 2, 1]) {
        const step = attentionWithCache(tf.slice(h, [0, t0, 0], [B, T, d]), w, { nHeads: H, kind, eps: 1e-6, cache });
        outs.push(step.output);
        cache = step.cache;
        t0 += T;
      }
      expect(cache.keysT?.shape).toEqual([B * H, d / H, L]);
      expect(relErr(values(tf.concat(outs, 1)), values(full))).toBeLessThan(1e-5);
      expect(() => attentionWithCache(h, w, { nHeads: H, kind, eps: 1e-6, cache, causal: false })).toThrow(
        /cache needs causal/,
      );
    });
  }
});

describe('one per-token NLL', () => {
  it('tokenNll is log Σ exp − the target logit per row, and crossEntropy is its mean', async () => {
    await useBackend('cpu');
    const logits = rnd([4, 7], 60, 3) as tf.Tensor2D;
    const targets = tf.tensor1d([0, 6, 3, 3], 'int32');
    const x = logits.arraySync();
    const ref = x.map((row, n) => Math.log(row.reduce((s, v) => s + Math.exp(v), 0)) - row[[0, 6, 3, 3][n]!]!);
    const nll = values(tokenNll(logits, targets));
    ref.forEach((v, n) => expect(nll[n]).toBeCloseTo(v, 5));
    expect(values(crossEntropy(logits, targets))[0]).toBeCloseTo(ref.reduce((s, v) => s + v, 0) / 4, 5);
    expect(() => tokenNll(logits, tf.tensor1d([0, 1, 2, 3]))).toThrow(/tokenNll targets must be int32/);
  });
});

describe('README example: the formulas on their own', () => {
  it('runs and gives the shapes and the NLL it states', async () => {
    await useBackend('cpu');
    // --- README example begins ---
    const [B, L, d, r] = [1, 5, 4, 3];
    const mat = (rows: number, cols: number) => tf.randomNormal<tf.Rank.R2>([rows, cols]);
    const vec = (n: number) => tf.zeros<tf.Rank.R1>([n]);
    const w: GrassmannMixingWeights = {
      wRed: mat(d, r),
      bRed: vec(r),
      wPlu: mat((r * (r - 1)) / 2, d),
      bPlu: vec(d),
      wGate: mat(2 * d, d),
      bGate: vec(d),
    };
    const h = tf.randomNormal<tf.Rank.R3>([B, L, d]);
    const trace = grassmannMixingTrace(h, w, { offsets: [1, 2], eps: 1e-6, direction: 'causal' });
    const attn = { wQkv: mat(d, 3 * d), bQkv: vec(3 * d), wProj: mat(d, d), bProj: vec(d) };
    const mask = tf.tensor2d([[1, 1, 1, 0, 0]]); // 1 real token, 0 padding
    const y = causalAttention(h, attn, { nHeads: 2, kind: 'ea', eps: 1e-6, causal: false, keyMask: mask });
    const nll = tokenNll(tf.tensor2d([[2, 0, 1]]), tf.tensor1d([0], 'int32'));
    // --- README example ends ---
    expect([trace.z.shape, trace.pHat.length, trace.alpha.shape]).toEqual([[1, 5, 3], 2, [1, 5, 4]]);
    expect(y.shape).toEqual([1, 5, 4]);
    expect(values(nll)[0]).toBeCloseTo(Math.log(Math.exp(2) + 1 + Math.exp(1)) - 2, 5);
    expect(values(nll)[0]).toBeCloseTo(0.4076, 4);
  });
});

// DPA and EA against a naive per-head reference built from PyTorch-layout weights; block wiring.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  causalAttention,
  gelu,
  GrassmannBlock,
  grassmannMixing,
  layerNorm,
  linear,
  TransformerBlock,
} from '@grassflow/gpu-layers';
import { relErr, useBackend, values } from './helpers.js';

/** Naive causal attention for one sequence h [L][d] with qkv weight W [3d][d] (rows q, k, v; head h at rows h·dh). */
function naive(
  h: number[][],
  W: number[][],
  bq: number[],
  P: number[][],
  bp: number[],
  H: number,
  kind: 'dpa' | 'ea',
  eps: number,
): number[][] {
  const L = h.length;
  const d = (h[0] as number[]).length;
  const dh = d / H;
  const lin = (x: number[], w: number[][], b: number[]) =>
    w.map((row, o) => row.reduce((s, wv, i) => s + wv * (x[i] as number), b[o] as number));
  const qkv = h.map((x) => lin(x, W, bq)); // [L][3d]
  const y = h.map(() => new Array<number>(d).fill(0));
  for (let head = 0; head < H; head++) {
    for (let i = 0; i < L; i++) {
      const q = (qkv[i] as number[]).slice(head * dh, (head + 1) * dh);
      const s = Array.from({ length: i + 1 }, (_, j) => {
        const k = (qkv[j] as number[]).slice(d + head * dh, d + (head + 1) * dh);
        return q.reduce((acc, qv, e) => acc + qv * (k[e] as number), 0) / Math.sqrt(dh);
      });
      let a: number[];
      if (kind === 'dpa') {
        const m = Math.max(...s);
        const ex = s.map((v) => Math.exp(v - m));
        const z = ex.reduce((p, c) => p + c, 0);
        a = ex.map((v) => v / z);
      } else {
        const e = s.map((v) => (v * v) / (1 + v * v));
        const z = e.reduce((p, c) => p + c, 0) + eps;
        a = e.map((v) => v / z);
      }
      for (let j = 0; j <= i; j++) {
        const v = (qkv[j] as number[]).slice(2 * d + head * dh, 2 * d + (head + 1) * dh);
        for (let e = 0; e < dh; e++) {
          const row = y[i] as number[];
          row[head * dh + e] = (row[head * dh + e] as number) + (a[j] as number) * (v[e] as number);
        }
      }
    }
  }
  return y.map((x) => lin(x, P, bp));
}

describe('attention', () => {
  it.each(['dpa', 'ea'] as const)('%s matches a naive per-head reference (PyTorch qkv layout)', async (kind) => {
    await useBackend('cpu');
    const [L, d, H] = [5, 6, 3];
    const rnd = (shape: number[], seed: number, s = 1) => tf.randomNormal(shape, 0, s, 'float32', seed);
    const h = rnd([1, L, d], 1) as tf.Tensor3D;
    const Wt = rnd([3 * d, d], 2, 0.8); // PyTorch [out, in]
    const bq = rnd([3 * d], 3, 0.3);
    const Pt = rnd([d, d], 4, 0.5);
    const bp = rnd([d], 5, 0.3);
    const out = causalAttention(
      h,
      {
        wQkv: tf.transpose(Wt) as tf.Tensor2D,
        bQkv: bq as tf.Tensor1D,
        wProj: tf.transpose(Pt) as tf.Tensor2D,
        bProj: bp as tf.Tensor1D,
      },
      { nHeads: H, kind, eps: 1e-6 },
    );
    const ref = naive(
      h.arraySync()[0] as number[][],
      Wt.arraySync() as number[][],
      bq.arraySync() as number[],
      Pt.arraySync() as number[][],
      bp.arraySync() as number[],
      H,
      kind,
      1e-6,
    );
    expect(relErr(values(out), ref.flat())).toBeLessThan(1e-5);
  });

  it('EA attends to anti-parallel keys as much as to parallel ones (no −∞ before squaring)', async () => {
    await useBackend('cpu');
    // One head, d = 2, identity q/k/v maps: s_ij = h_i·h_j/√2. Keys ±(3, 0) give the same e for query (3, 0).
    const h = tf.tensor3d([
      [
        [3, 0],
        [-3, 0],
        [3, 0],
      ],
    ]);
    const I2 = tf.tensor2d([
      [1, 0],
      [0, 1],
    ]);
    const wQkv = tf.concat<tf.Tensor2D>([I2, I2, I2], 1); // [d, 3d]
    const w = { wQkv, bQkv: tf.zeros<tf.Rank.R1>([6]), wProj: I2, bProj: tf.zeros<tf.Rank.R1>([2]) };
    const out = values(causalAttention(h, w, { nHeads: 1, kind: 'ea', eps: 1e-6 }));
    // t = 2: s = (9, −9, 9)/√2 → equal weights 1/3 each (up to ε) → y = (3 − 3 + 3)/3 = 1 on axis 0.
    expect(out[4]).toBeCloseTo(1, 5);
    // DPA instead puts almost all weight on the parallel keys: y ≈ 3.
    expect(values(causalAttention(h, w, { nHeads: 1, kind: 'dpa', eps: 1e-6 }))[4]).toBeCloseTo(3, 3);
  });
});

describe('block wiring', () => {
  it.each(['post', 'pre'] as const)('GrassmannBlock (%s-LN) equals its formula', async (norm) => {
    await useBackend('cpu');
    const block = new GrassmannBlock({ r: 3, offsets: [1, 2], dFF: 12, norm, dropout: 0.3, seed: 1 });
    const h = tf.randomNormal<tf.Rank.R3>([2, 5, 4], 0, 1, 'float32', 2);
    block.apply(h); // builds the weights
    // Perturb LN and bias parameters away from ones/zeros so that every term matters.
    block.setWeights(block.getWeights().map((t, k) => tf.add(t, tf.randomNormal(t.shape, 0, 0.1, 'float32', 10 + k))));
    const p = new Map(block.namedParams().map((q) => [q.name, q.variable as tf.Tensor]));
    const g = (n: string) => p.get(n) as tf.Tensor;
    const mix = (x: tf.Tensor3D) =>
      grassmannMixing(
        x,
        {
          wRed: g('mixer.w_red.weight') as tf.Tensor2D,
          bRed: g('mixer.w_red.bias') as tf.Tensor1D,
          wPlu: g('mixer.w_plu.weight') as tf.Tensor2D,
          bPlu: g('mixer.w_plu.bias') as tf.Tensor1D,
          wGate: g('mixer.w_gate.weight') as tf.Tensor2D,
          bGate: g('mixer.w_gate.bias') as tf.Tensor1D,
        },
        { offsets: [1, 2], eps: 1e-6, direction: 'causal' },
      );
    const ln = (x: tf.Tensor, n: string) => layerNorm(x, g(`${n}.weight`), g(`${n}.bias`), 1e-5) as tf.Tensor3D;
    const ffn = (x: tf.Tensor) =>
      linear(gelu(linear(x, g('ffn.fc1.weight'), g('ffn.fc1.bias'))), g('ffn.fc2.weight'), g('ffn.fc2.bias'));
    let expected: tf.Tensor;
    if (norm === 'post') {
      const hHat = ln(mix(h), 'ln1');
      expected = ln(tf.add(hHat, ffn(hHat)), 'ln2');
    } else {
      const x = tf.add<tf.Tensor3D>(h, mix(ln(h, 'ln1')));
      expected = tf.add(x, ffn(ln(x, 'ln2')));
    }
    expect(relErr(values(block.apply(h) as tf.Tensor), values(expected))).toBeLessThan(1e-5); // inference: no dropout
    // Training mode applies dropout: the output changes.
    expect(relErr(values(block.apply(h, { training: true }) as tf.Tensor), values(expected))).toBeGreaterThan(1e-3);
  });

  it.each(['post', 'pre'] as const)('TransformerBlock (%s-LN) equals its formula', async (norm) => {
    await useBackend('cpu');
    const block = new TransformerBlock({ nHeads: 2, dFF: 12, attention: 'ea', norm, seed: 3 });
    const h = tf.randomNormal<tf.Rank.R3>([2, 5, 4], 0, 1, 'float32', 4);
    block.apply(h);
    block.setWeights(block.getWeights().map((t, k) => tf.add(t, tf.randomNormal(t.shape, 0, 0.1, 'float32', 20 + k))));
    const p = new Map(block.namedParams().map((q) => [q.name, q.variable as tf.Tensor]));
    const g = (n: string) => p.get(n) as tf.Tensor;
    const attn = (x: tf.Tensor3D) =>
      causalAttention(
        x,
        {
          wQkv: g('mixer.qkv.weight') as tf.Tensor2D,
          bQkv: g('mixer.qkv.bias') as tf.Tensor1D,
          wProj: g('mixer.proj.weight') as tf.Tensor2D,
          bProj: g('mixer.proj.bias') as tf.Tensor1D,
        },
        { nHeads: 2, kind: 'ea', eps: 1e-6 },
      );
    const ln = (x: tf.Tensor, n: string) => layerNorm(x, g(`${n}.weight`), g(`${n}.bias`), 1e-5) as tf.Tensor3D;
    const ffn = (x: tf.Tensor) =>
      linear(gelu(linear(x, g('ffn.fc1.weight'), g('ffn.fc1.bias'))), g('ffn.fc2.weight'), g('ffn.fc2.bias'));
    let expected: tf.Tensor;
    if (norm === 'post') {
      const x = ln(tf.add(h, attn(h)), 'ln1');
      expected = ln(tf.add(x, ffn(x)), 'ln2');
    } else {
      const x = tf.add<tf.Tensor3D>(h, attn(ln(h, 'ln1')));
      expected = tf.add(x, ffn(ln(x, 'ln2')));
    }
    expect(relErr(values(block.apply(h) as tf.Tensor), values(expected))).toBeLessThan(1e-5);
  });
});

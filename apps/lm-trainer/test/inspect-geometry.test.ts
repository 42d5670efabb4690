// inspectModel on tiny models with hand-set weights: every reported number against an independent computation.
import * as tf from '@tensorflow/tfjs-core';
import {
  createModel,
  initBackend,
  preset,
  type LanguageModel,
  type ModelConfig,
  type LanguageModelBase,
} from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { planeStep } from '../src/inspect/grassmann.js';
import { inspectModel } from '../src/inspect/model.js';
import { summarize } from '../src/inspect/tensors.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

const DEG = 180 / Math.PI;
type Vec = number[];
const dot = (a: Vec, b: Vec) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
const norm = (a: Vec) => Math.sqrt(dot(a, a));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** Deterministic values in [−1, 1) (a small LCG), so hand-set weights need no tfjs randomness. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/** A PyTorch-layout tensor [rows, cols] of a nested array. */
const t2 = (m: number[][]) => tf.tensor2d(m);

/**
 * Principal angles (radians) between span(a0, b0) and span(a1, b1) without grassmann-math: Gram–Schmidt
 * bases, M = Q_Aᵀ Q_B (2×2), cos θ = singular values of M from the closed form σ² = (T ± sqrt(T² − 4D²))/2.
 */
function anglesByHand(a0: Vec, b0: Vec, a1: Vec, b1: Vec): [number, number] {
  const gs = (a: Vec, b: Vec): [Vec, Vec] => {
    const q1 = a.map((x) => x / norm(a));
    const c = dot(q1, b);
    const v = b.map((x, i) => x - c * (q1[i] as number));
    return [q1, v.map((x) => x / norm(v))];
  };
  const [p1, p2] = gs(a0, b0);
  const [q1, q2] = gs(a1, b1);
  const m = [dot(p1, q1), dot(p1, q2), dot(p2, q1), dot(p2, q2)] as [number, number, number, number];
  const T = m.reduce((s, x) => s + x * x, 0);
  const D = m[0] * m[3] - m[1] * m[2];
  const disc = Math.sqrt(Math.max(0, T * T - 4 * D * D));
  const s1 = Math.sqrt((T + disc) / 2);
  const s2 = Math.sqrt(Math.max(0, (T - disc) / 2));
  return [Math.acos(Math.min(1, s1)), Math.acos(Math.min(1, s2))];
}

/** Rows of a [L, d] block input as number arrays. */
function rowsOf(x: tf.Tensor): number[][] {
  return (x.arraySync() as number[][][])[0] as number[][];
}

/** Block inputs computed with the model's own layers: x_0 = embed(ids), x_{i+1} = block_i(x_i). */
function blockInputsByModel(model: LanguageModelBase, ids: number[]): number[][][] {
  return tf.tidy(() => {
    const out: number[][][] = [];
    let x = model.embed(tf.tensor2d(ids, [1, ids.length], 'int32'));
    for (const b of model.blocks) {
      out.push(rowsOf(x));
      x = b.apply(x) as tf.Tensor3D;
    }
    return out;
  });
}

function layerNorm(h: Vec, gamma: Vec, beta: Vec): Vec {
  const mean = h.reduce((s, x) => s + x, 0) / h.length;
  const v = h.reduce((s, x) => s + (x - mean) ** 2, 0) / h.length;
  return h.map((x, k) => ((x - mean) / Math.sqrt(v + 1e-5)) * (gamma[k] as number) + (beta[k] as number));
}

const matVec = (W: number[][], x: Vec, b: Vec) => W.map((row, i) => dot(row, x) + (b[i] as number));

/**
 * Tiny Grassmann model: d 5, r 4, L 6, layer 0 offset 1, layer 1 offsets {1, 2}; layer 0 hand-set so z_t = first 4
 * coordinates of h_t.
 */
function handSetGrassmann(normKind: 'post' | 'pre'): { model: LanguageModel; sd: Map<string, number[][]> } {
  const config: ModelConfig = preset('tiny', {
    vocabSize: 6,
    dModel: 5,
    dFF: 8,
    maxLen: 6,
    r: 4,
    nLayers: 2,
    offsets: [[1], [1, 2]],
    dropout: 0,
    norm: normKind,
  });
  const model = createModel(config, { seed: 5 });
  const rand = lcg(7);
  const sd = new Map<string, number[][]>();
  const dict = model.stateDict();
  for (const [name, t] of dict) {
    // every weight hand-set (biases and LayerNorms too), large enough that gates and planes differ from position to
    // position
    const shape = t.shape.length === 1 ? [1, t.shape[0]] : (t.shape as [number, number]);
    sd.set(
      name,
      Array.from({ length: shape[0] as number }, () =>
        Array.from({ length: shape[1] as number }, () => Math.fround(rand())),
      ),
    ); // float32 values: the model stores exactly these
  }
  sd.set('tok_emb.weight', [
    [1, 0, 0, 0, 0.5],
    [1, 1, 0, 0, -0.25],
    [0, 2, 0, 0, 1],
    [0, 0, 3, 0, 0],
    [2, -1, 1, 1, 0.75],
    [0.5, 0.5, -1, 2, -1],
  ]);
  sd.set(
    'pos_emb.weight',
    Array.from({ length: 6 }, () => [0, 0, 0, 0, 0]),
  );
  sd.set('blocks.0.mixer.w_red.weight', [
    [1, 0, 0, 0, 0],
    [0, 1, 0, 0, 0],
    [0, 0, 1, 0, 0],
    [0, 0, 0, 1, 0],
  ]);
  sd.set('blocks.0.mixer.w_red.bias', [[0, 0, 0, 0]]);
  const load = new Map<string, tf.Tensor>();
  for (const [name, t] of dict) {
    const v = sd.get(name) as number[][];
    load.set(name, t.shape.length === 1 ? tf.tensor1d(v[0] as number[]) : t2(v));
    t.dispose();
  }
  model.loadStateDict(load);
  for (const t of load.values()) t.dispose();
  return { model, sd };
}

const IDS = [0, 1, 2, 3, 4, 5];
const TOKENS = ['a', 'b', 'c', 'd', 'e', 'f'];

describe('inspect: Grassmann geometry equals an independent computation', () => {
  it('layer 0 (post-LN): angles, areas and principal angles of hand-picked vectors, by hand', async () => {
    const { model } = handSetGrassmann('post');
    const r = await inspectModel(model, [{ ids: Int32Array.from(IDS), tokens: TOKENS }]);
    const g = r.grassmann?.[0]?.geometry[0];
    if (g === undefined) throw new Error('no layer 0');
    // z = (1,0,0,0), (1,1,0,0), (0,2,0,0), (0,0,3,0), …
    expect(g.angleDeg[0]?.slice(0, 4)).toEqual([
      null,
      expect.closeTo(45, 10),
      expect.closeTo(45, 10),
      expect.closeTo(90, 10),
    ]);
    expect(g.area[0]?.slice(0, 4)).toEqual([null, expect.closeTo(1, 12), expect.closeTo(2, 12), expect.closeTo(6, 12)]);
    // span(e0, e0+e1) = span(e0+e1, 2e1): no step; span(e0, e1) → span(e1, e2): one angle of 90°
    expect(g.stepDeg[0]?.slice(0, 4)).toEqual([null, null, expect.closeTo(0, 5), expect.closeTo(90, 5)]);
    expect(g.theta2Deg[0]?.[3]).toBeCloseTo(90, 5);
    expect(g.theta1Deg[0]?.[3]).toBeCloseTo(0, 5);
    expect(g.largestSteps[0]).toMatchObject({ position: 3, token: 'd', context: 'c d' });
    model.dispose();
  });

  for (const ln of ['post', 'pre'] as const) {
    it(`every layer (${ln}-LN): angles, areas, flow and gates equal the textbook formulas`, async () => {
      const { model, sd } = handSetGrassmann(ln);
      const lm = model as LanguageModelBase;
      const r = await inspectModel(model, [{ ids: Int32Array.from(IDS), tokens: TOKENS }], { top: 3 });
      const layers = r.grassmann ?? [];
      expect(layers.map((l) => [l.layer, l.offsets])).toEqual([
        [0, [1]],
        [1, [1, 2]],
      ]);
      expect(r.attention).toBeUndefined();
      const inputs = blockInputsByModel(lm, IDS);
      layers.forEach((rep, i) => {
        const p = (n: string) => sd.get(`blocks.${i}.${n}`) as number[][];
        const h = inputs[i] as number[][];
        const u = ln === 'post' ? h : h.map((x) => layerNorm(x, p('ln1.weight')[0] as Vec, p('ln1.bias')[0] as Vec));
        expect(rep.mixerInput).toBe(ln === 'post' ? 'h' : 'LN1(h)');
        const z = u.map((x) => matVec(p('mixer.w_red.weight'), x, p('mixer.w_red.bias')[0] as Vec));
        const pHatSum = z.map(() => new Array<number>(6).fill(0));
        const count = z.map(() => 0);
        rep.offsets.forEach((delta, o) => {
          const geo = rep.geometry[o];
          if (geo === undefined) throw new Error('missing offset');
          for (let t = delta; t < 6; t++) {
            const a = z[t - delta] as Vec;
            const b = z[t] as Vec;
            // angle from the cosine, area from Lagrange's identity |a|²|b|² − (a·b)²; inspect measures the z of the
            // model's own float32 mixing (grassmannMixingTrace), so the tolerances are float32's, not float64's
            expect(geo.angleDeg[0]?.[t]).toBeCloseTo(Math.acos(dot(a, b) / (norm(a) * norm(b))) * DEG, 4);
            expect(geo.area[0]?.[t]).toBeCloseTo(Math.sqrt(dot(a, a) * dot(b, b) - dot(a, b) ** 2), 5);
            const pij: number[] = [];
            for (let i2 = 0; i2 < 4; i2++)
              for (let j = i2 + 1; j < 4; j++)
                pij.push((a[i2] as number) * (b[j] as number) - (a[j] as number) * (b[i2] as number));
            const scale = 1 / Math.sqrt(dot(pij, pij) + 1e-12);
            pij.forEach((x, c) => ((pHatSum[t] as number[])[c] = ((pHatSum[t] as number[])[c] as number) + x * scale));
            count[t] = (count[t] as number) + 1;
            if (t >= delta + 1) {
              const [th1, th2] = anglesByHand(z[t - 1 - delta] as Vec, z[t - 1] as Vec, a, b);
              expect(geo.theta1Deg[0]?.[t]).toBeCloseTo(th1 * DEG, 3);
              expect(geo.theta2Deg[0]?.[t]).toBeCloseTo(th2 * DEG, 3);
              expect(geo.stepDeg[0]?.[t]).toBeCloseTo(Math.hypot(th1, th2) * DEG, 3);
            } else {
              expect(geo.stepDeg[0]?.[t]).toBeNull();
            }
          }
          for (let t = 0; t < delta; t++) expect(geo.angleDeg[0]?.[t]).toBeNull();
          const steps = (geo.stepDeg[0] ?? []).filter((v): v is number => v !== null).sort((x, y) => y - x);
          expect(geo.largestSteps.map((s) => s.stepDeg)).toEqual(steps.slice(0, 3));
          expect(geo.summary.angleDeg.count).toBe(6 - delta);
        });
        // gate: α_t = σ(W_gate [u_t; g_t] + b_gate), g_t = W_plu mean p̂ + b_plu (0 at t = 0, where no pair exists)
        const gs = u.map((_, t) =>
          count[t] === 0
            ? [0, 0, 0, 0, 0]
            : matVec(
                p('mixer.w_plu.weight'),
                (pHatSum[t] as Vec).map((v) => v / (count[t] as number)),
                p('mixer.w_plu.bias')[0] as Vec,
              ),
        );
        const alphas = u.map((x, t) =>
          matVec(p('mixer.w_gate.weight'), [...x, ...(gs[t] as Vec)], p('mixer.w_gate.bias')[0] as Vec).map(sigmoid),
        );
        // the geometric path's share of h_mix: ‖(1 − α) ⊙ g‖ / (‖α ⊙ u‖ + ‖(1 − α) ⊙ g‖)
        const shares = u.map((x, t) => {
          const a = alphas[t] as Vec;
          const keep = norm(x.map((v, k) => (a[k] as number) * v));
          const geo = norm((gs[t] as Vec).map((v, k) => (1 - (a[k] as number)) * v));
          return geo / (keep + geo);
        });
        expect(rep.geometricShare.perPosition[0]?.[0]).toBe(0); // no pair at t = 0: g = 0
        // α and g are the model's float32 values: float32 tolerances
        rep.geometricShare.perPosition[0]?.forEach((v, t) => expect(v).toBeCloseTo(shares[t] as number, 6));
        rep.gate.perPosition[0]?.forEach((v, t) =>
          expect(v).toBeCloseTo((alphas[t] as Vec).reduce((s, x) => s + x, 0) / 5, 6),
        );
        expect(rep.gate.summary.mean).toBeCloseTo(summarize(alphas.flat()).mean as number, 6);
        expect(rep.gate.summary.std).toBeCloseTo(summarize(alphas.flat()).std as number, 6);
        expect(rep.check.maxAbsDiff).toBeLessThan(1e-4);
      });
      model.dispose();
    });
  }

  it('planeStep measures a known rotation in R^4 and reports dependent vectors as no plane', () => {
    // span(e0, e1) against span(e0, cos φ e1 + sin φ e2) and span(cos ψ e0 + sin ψ e3, e1): one angle φ, then ψ
    const phi = 0.3;
    const psi = 1.1;
    const [a, b] = planeStep(
      Float64Array.from([1, 0, 0, 0]),
      Float64Array.from([0, 1, 0, 0]),
      Float64Array.from([1, 0, 0, 0]),
      Float64Array.from([0, Math.cos(phi), Math.sin(phi), 0]),
    ) ?? [NaN, NaN];
    expect([a, b]).toEqual([expect.closeTo(0, 12), expect.closeTo(phi, 12)]);
    const both = planeStep(
      Float64Array.from([1, 0, 0, 0]),
      Float64Array.from([0, 1, 0, 0]),
      Float64Array.from([Math.cos(psi), 0, 0, Math.sin(psi)]),
      Float64Array.from([0, Math.cos(phi), Math.sin(phi), 0]),
    );
    expect(both?.[0]).toBeCloseTo(phi, 12);
    expect(both?.[1]).toBeCloseTo(psi, 12);
    expect(
      planeStep(
        Float64Array.from([1, 2, 0, 0]),
        Float64Array.from([2, 4, 0, 0]),
        Float64Array.from([1, 0, 0, 0]),
        Float64Array.from([0, 1, 0, 0]),
      ),
    ).toBeNull();
  });
});

describe('inspect: attention entropy and antiparallel weight equal an independent computation', () => {
  for (const attention of ['dpa', 'ea'] as const) {
    it(`${attention}: entropy per head and layer, weight on q·k < 0`, async () => {
      const config = preset('tiny', {
        kind: 'transformer',
        attention,
        vocabSize: 6,
        dModel: 4,
        dFF: 8,
        maxLen: 6,
        nHeads: 2,
        nLayers: 2,
        dropout: 0,
      });
      const model = createModel(config, { seed: 3 });
      const rand = lcg(11);
      const dict = model.stateDict();
      const load = new Map<string, tf.Tensor>();
      for (const [name, t] of dict) {
        // scores of order 1: attention far from uniform, and both signs of q·k
        load.set(
          name,
          name.endsWith('qkv.weight')
            ? tf.tensor2d(
                Array.from({ length: t.size }, () => 2 * rand()),
                t.shape as [number, number],
              )
            : tf.clone(t),
        );
        t.dispose();
      }
      model.loadStateDict(load);
      // [3d, d]
      const W = (i: number) => (load.get(`blocks.${i}.mixer.qkv.weight`) as tf.Tensor).arraySync() as number[][];
      const B = (i: number) => (load.get(`blocks.${i}.mixer.qkv.bias`) as tf.Tensor).arraySync() as number[];
      const r = await inspectModel(model, [
        { ids: Int32Array.from([0, 3, 1, 5, 2, 4]), tokens: TOKENS },
        { ids: Int32Array.from([4, 4, 2]), tokens: ['e', 'e', 'c'] },
      ]);
      expect(r.grassmann).toBeUndefined();
      const layers = r.attention ?? [];
      expect(layers.map((l) => [l.layer, l.kind, l.heads.length])).toEqual([
        [0, attention, 2],
        [1, attention, 2],
      ]);
      const inputs = [blockInputsByModel(model, [0, 3, 1, 5, 2, 4]), blockInputsByModel(model, [4, 4, 2])];
      layers.forEach((rep, i) => {
        const rowEnt = inputs.map((x) => (x[i] as number[][]).map(() => 0)); // [sample][row]: entropy summed over heads
        for (let head = 0; head < 2; head++) {
          const ent: number[] = [];
          let anti = 0;
          let total = 0;
          for (const [sIdx, sample] of inputs.entries()) {
            const h = sample[i] as number[][];
            const qkv = h.map((x) => matVec(W(i), x, B(i)));
            const q = qkv.map((v) => v.slice(head * 2, head * 2 + 2));
            const k = qkv.map((v) => v.slice(4 + head * 2, 4 + head * 2 + 2));
            q.forEach((qi, row) => {
              const s = k.slice(0, row + 1).map((kj) => dot(qi, kj) / Math.sqrt(2));
              let a: number[];
              if (attention === 'dpa') {
                const e = s.map((x) => Math.exp(x));
                a = e.map((x) => x / e.reduce((m, y) => m + y, 0));
              } else {
                const e = s.map((x) => (x * x) / (1 + x * x));
                a = e.map((x) => x / (e.reduce((m, y) => m + y, 0) + 1e-6));
              }
              const H = -a.reduce((m, x) => m + (x > 0 ? x * Math.log(x) : 0), 0);
              ent.push(H);
              (rowEnt[sIdx] as number[])[row] = ((rowEnt[sIdx] as number[])[row] as number) + H;
              a.forEach((x, j) => {
                total += x;
                if ((s[j] as number) < 0) anti += x;
              });
            });
          }
          const got = rep.heads[head];
          expect(got?.entropy.mean).toBeCloseTo(ent.reduce((m, x) => m + x, 0) / ent.length, 6);
          expect(got?.entropy.count).toBe(9);
          expect(got?.antiparallelWeight).toBeCloseTo(anti / total, 6);
          expect(got?.antiparallelWeight).toBeGreaterThan(0);
        }
        expect(rep.perPositionEntropy.map((x) => x.length)).toEqual([6, 3]);
        rowEnt.forEach((rows, sIdx) =>
          rows.forEach((sum, row) => {
            expect(rep.perPositionEntropy[sIdx]?.[row]).toBeCloseTo(sum / 2, 6);
            if (row === 0) expect(rep.perPositionNormalizedEntropy[sIdx]?.[0]).toBeNull();
            else expect(rep.perPositionNormalizedEntropy[sIdx]?.[row]).toBeCloseTo(sum / 2 / Math.log(row + 1), 6);
          }),
        );
        expect(rep.check.maxAbsDiff).toBeLessThan(1e-4);
      });
      for (const t of load.values()) t.dispose();
      model.dispose();
    });
  }
});

describe('inspectModel input checks', () => {
  it('rejects no samples, an empty sample and one longer than maxLen', async () => {
    const { model } = handSetGrassmann('post');
    await expect(inspectModel(model, [])).rejects.toThrow(/no samples/);
    await expect(inspectModel(model, [{ ids: new Int32Array(0), tokens: [] }])).rejects.toThrow(
      /sample 0 has no tokens/,
    );
    await expect(
      inspectModel(model, [{ ids: new Int32Array(7), tokens: new Array<string>(7).fill('x') }]),
    ).rejects.toThrow(/7 tokens, more than the model's maxLen 6/);
    model.dispose();
  });
});

// The heads in process: parameter counts, Plücker features, loss going down, evaluation against an independent count.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { crossEntropy, initBackend, pluckerPairs } from '@grassflow/gpu-layers';
import { AdamW, saveModelCheckpoint, trainStep } from '@grassflow/training';
import type { EncodedSnli } from '@grassflow/datasets';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  countParams,
  evaluatePairs,
  GrassmannHead,
  grassmannHeadConfig,
  headCheckpointExtra,
  loadHeadCheckpoint,
  modelConfig,
  ParamStore,
  SnliModel,
  type SnliModelConfig,
} from '@grassflow/snli-head';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** A tiny model: the paper's head shapes shrunk (d 32, 2 heads, d_ff 64) over an embedding encoder of V 50, D 16. */
function tinyConfig(kind: 'grassmann' | 'transformer'): SnliModelConfig {
  const c = modelConfig(kind, 16, { vocabSize: 50, dim: 16, maxLen: 16 });
  return { ...c, head: { ...c.head, dModel: 32, nHeads: 2, dFF: 64, dropout: 0 } };
}

/** n random pairs of lengths 3…T over ids 1…49 with labels 0…2 (fixed seed). */
function randomPairs(n: number, T: number, seed: number): EncodedSnli {
  let s = seed;
  const rand = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const premise = new Int32Array(n * T);
  const hypothesis = new Int32Array(n * T);
  const premiseLength = new Uint16Array(n);
  const hypothesisLength = new Uint16Array(n);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    premiseLength[i] = 3 + Math.floor(rand() * (T - 2));
    hypothesisLength[i] = 3 + Math.floor(rand() * (T - 2));
    for (let t = 0; t < (premiseLength[i] as number); t++) premise[i * T + t] = 1 + Math.floor(rand() * 49);
    for (let t = 0; t < (hypothesisLength[i] as number); t++) hypothesis[i * T + t] = 1 + Math.floor(rand() * 49);
    labels[i] = Math.floor(rand() * 3);
  }
  return { count: n, maxTokens: T, premise, premiseLength, hypothesis, hypothesisLength, labels, truncated: 0 };
}

describe('parameter counts', () => {
  it('the analytic count equals the built model, for both heads, with and without the embedding encoder', () => {
    const rows: string[] = [];
    for (const inputDim of [64, 768]) {
      for (const kind of ['grassmann', 'transformer'] as const) {
        const cfg = modelConfig(kind, inputDim, inputDim === 64 ? { vocabSize: 30522, dim: 64, maxLen: 48 } : null);
        const m = new SnliModel(cfg, 1);
        expect(m.countBuilt()).toBe(countParams(cfg).total);
        rows.push(`${kind} D=${inputDim}: head ${countParams(cfg).head}, backbone ${countParams(cfg).backbone}`);
        m.dispose();
      }
    }
    // the paper-shaped heads, pinned: a change to either architecture shows up here
    expect(countParams(modelConfig('grassmann', 64, null)).head).toBe(892_739);
    expect(countParams(modelConfig('transformer', 64, null)).head).toBe(1_073_923);
    expect(countParams(modelConfig('grassmann', 64, { vocabSize: 30522, dim: 64, maxLen: 48 })).backbone).toBe(
      30522 * 64 + 48 * 64 + 128,
    );
    console.log(rows.join('\n'));
  });
});

describe('Grassmann–Plücker head', () => {
  it('pairs two different token vectors in each window and its Plücker features are non-zero', () => {
    const cfg = { ...grassmannHeadConfig(16), dModel: 32, nHeads: 2, dFF: 64 };
    const params = new ParamStore(3);
    const head = new GrassmannHead(cfg, params);
    const B = 2;
    const T = 16;
    const x = tf.randomNormal<tf.Rank.R3>([B, T, 16], 0, 1, 'float32', 5);
    const mask = tf.ones<tf.Rank.R2>([B, T]);
    const probe = { headInputs: [] as tf.Tensor3D[] };
    tf.tidy(() => head.encode(x, mask, false, probe));
    expect(probe.headInputs).toHaveLength(cfg.nHeads);
    const named = new Map(params.named().map((p) => [p.name, p.variable]));
    const pairs = pluckerPairs(cfg.r);
    let checked = 0;
    probe.headInputs.forEach((hk, k) => {
      expect(hk.shape).toEqual([(B * T) / cfg.window, cfg.window, cfg.dModel / cfg.nHeads]); // [B·T/w, w, d_proj]
      const z = tf.tidy(() =>
        tf.add(
          tf.matMul(tf.reshape(hk, [-1, hk.shape[2]]), named.get(`head.layers.0.mix.${k}.w_red.weight`) as tf.Tensor),
          named.get(`head.layers.0.mix.${k}.w_red.bias`) as tf.Tensor,
        ),
      );
      const zs = z.arraySync() as number[][]; // [B·T, r], window-major
      for (let w = 0; w < hk.shape[0]; w++) {
        for (let t = 1; t < cfg.window; t++) {
          for (let delta = 1; delta <= t; delta++) {
            const a = zs[w * cfg.window + t - delta] as number[];
            const b = zs[w * cfg.window + t] as number[];
            expect(a).not.toEqual(b); // two different vectors (offsets start at 1)
            const p = pairs.map(([i, j]) => (a[i] as number) * (b[j] as number) - (a[j] as number) * (b[i] as number));
            // ‖p‖ = ‖a‖‖b‖ sin θ: non-zero, and not a near-parallel degenerate pair
            expect(Math.hypot(...p) / (Math.hypot(...a) * Math.hypot(...b))).toBeGreaterThan(1e-3);
            checked++;
          }
        }
      }
      z.dispose();
    });
    expect(checked).toBe(cfg.nHeads * ((B * T) / cfg.window) * ((cfg.window * (cfg.window - 1)) / 2));
    // the Plücker projection gets a gradient: the head does not reduce to a bias (p(z, z) = 0 would give exactly 0)
    const y = tf.tensor1d([0, 2], 'int32');
    const wPlu = named.get('head.layers.0.mix.0.w_plu.weight') as tf.Variable;
    const { value, grads } = tf.variableGrads(() => crossEntropy(head.forward(x, mask, x, mask, false), y), [wPlu]);
    expect(tf.norm(grads[wPlu.name] as tf.Tensor).dataSync()[0]).toBeGreaterThan(1e-6);
    tf.dispose([value, ...Object.values(grads), ...probe.headInputs, x, mask, y]);
    params.dispose();
  });

  it('a batch length that is not a multiple of the window is refused with a clear error', () => {
    const params = new ParamStore(1);
    const head = new GrassmannHead({ ...grassmannHeadConfig(16), dModel: 32, nHeads: 2, dFF: 64 }, params);
    const x = tf.zeros<tf.Rank.R3>([1, 12, 16]);
    expect(() => head.encode(x, tf.ones<tf.Rank.R2>([1, 12]), false)).toThrow(
      /T = 12 is not a multiple of the window 8/,
    );
    params.dispose();
  });
});

describe('training and evaluation', () => {
  it.each(['grassmann', 'transformer'] as const)(
    'a few steps on a handful of pairs lower the loss (%s head)',
    async (kind) => {
      const m = new SnliModel(tinyConfig(kind), 7);
      const data = randomPairs(6, 16, 11);
      const rows = [0, 1, 2, 3, 4, 5];
      const opt = new AdamW(m.params.named(), { weightDecay: 0 });
      const before = tf.memory().numTensors;
      const losses: number[] = [];
      for (let s = 0; s < 25; s++) {
        const r = await trainStep(
          () => {
            const mk = (which: 'premise' | 'hypothesis') => {
              const ids = which === 'premise' ? data.premise : data.hypothesis;
              const lens = which === 'premise' ? data.premiseLength : data.hypothesisLength;
              const mask = new Float32Array(6 * 16);
              rows.forEach((r2) => mask.fill(1, r2 * 16, r2 * 16 + (lens[r2] as number)));
              return { ids: tf.tensor2d(ids, [6, 16], 'int32'), mask: tf.tensor2d(mask, [6, 16]) };
            };
            return crossEntropy(m.forward(mk('premise'), mk('hypothesis'), true), tf.tensor1d(data.labels, 'int32'));
          },
          opt,
          { lr: 3e-3, randomSeed: s },
        );
        losses.push(r.loss);
      }
      expect(tf.memory().numTensors).toBe(before); // no tensor leaks per step
      expect(losses[0]).toBeGreaterThan(0.9); // ≈ ln 3 at init
      expect(losses[losses.length - 1]).toBeLessThan(0.5 * (losses[0] as number));
      opt.dispose();
      m.dispose();
    },
  );

  it.each(['grassmann', 'transformer'] as const)(
    'evaluatePairs equals a pair-by-pair count and its confusion matrix (%s head)',
    async (kind) => {
      const m = new SnliModel(tinyConfig(kind), 3);
      const data = randomPairs(37, 16, 5);
      const r = await evaluatePairs(m, data, null, 8); // batched, sorted by length, padded to multiples of 8
      // independent: each pair alone, exactly its own tokens (padded only to the window for the Grassmann head)
      const confusion = [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ];
      let nll = 0;
      for (let i = 0; i < data.count; i++) {
        const pl = data.premiseLength[i] as number;
        const hl = data.hypothesisLength[i] as number;
        const T = Math.ceil(Math.max(pl, hl) / 8) * 8;
        const sent = (src: Int32Array, n: number) => {
          const ids = new Int32Array(T);
          ids.set(src.subarray(i * 16, i * 16 + n));
          return {
            ids: tf.tensor2d(ids, [1, T], 'int32'),
            mask: tf.tensor2d(
              Float32Array.from({ length: T }, (_, t) => (t < n ? 1 : 0)),
              [1, T],
            ),
          };
        };
        const logits = tf.tidy(
          () => m.forward(sent(data.premise, pl), sent(data.hypothesis, hl), false).arraySync()[0] as number[],
        );
        const pred = logits.indexOf(Math.max(...logits));
        const gold = data.labels[i] as number;
        (confusion[gold] as number[])[pred] = ((confusion[gold] as number[])[pred] as number) + 1;
        const mx = Math.max(...logits);
        nll += mx + Math.log(logits.reduce((s, v) => s + Math.exp(v - mx), 0)) - (logits[gold] as number);
      }
      expect(r.confusion).toEqual(confusion);
      expect(r.count).toBe(37);
      expect(r.accuracy).toBeCloseTo((confusion[0]![0]! + confusion[1]![1]! + confusion[2]![2]!) / 37, 12);
      expect(r.loss).toBeCloseTo(nll / 37, 4);
      m.dispose();
    },
  );
});

describe('checkpoint', () => {
  it('an SnliModel round-trips through the toolkit checkpoint (same logits), with its backbone and seqLen', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'grassflow-snli-ck-')), 'ck');
    const m = new SnliModel(tinyConfig('grassmann'), 5);
    await saveModelCheckpoint(dir, m, { extra: headCheckpointExtra({ backbone: 'none', seqLen: 16 }) });
    const ck = await loadHeadCheckpoint(dir);
    expect(ck).toMatchObject({ backbone: 'none', seqLen: 16 });
    const data = randomPairs(3, 16, 2);
    const input = (which: 'premise' | 'hypothesis') => ({
      ids: tf.tensor2d(which === 'premise' ? data.premise : data.hypothesis, [3, 16], 'int32'),
      mask: tf.ones<tf.Rank.R2>([3, 16]),
    });
    const [a, b] = [m, ck.model].map((x) =>
      Array.from(x.forward(input('premise'), input('hypothesis'), false).dataSync()),
    );
    expect(b).toEqual(a);
    ck.model.dispose();
    m.dispose();
  });

  it('a head checkpoint of the earlier format is refused with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-snli-old-'));
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ format: 'grassflow-snli-checkpoint', formatVersion: 1, files: {} }),
    );
    await expect(loadHeadCheckpoint(dir)).rejects.toThrow(
      /earlier grassflow-snli \(grassflow-snli-checkpoint\).*retrain/,
    );
  });
});

// The adaptive softmax head: exact normalised probabilities, its loss, gradients, parameters and checkpoints.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adaptiveHeadShapes,
  countParams,
  createModel,
  frequencyOrder,
  lmLoss,
  loadCheckpoint,
  preset,
  saveCheckpoint,
  validateModelConfig,
  ModelConfigError,
} from '@grassflow/gpu-layers';
import { tokenIds, useBackend, type TestBackend } from './helpers.js';

const V = 64;
const CUTOFFS = [8, 24];
const config = (kind: 'grassmann' | 'transformer' = 'grassmann') =>
  preset('tiny', { kind, vocabSize: V, head: 'adaptive', cutoffs: CUTOFFS, dropout: 0 });

/** Targets that put rows in the shortlist and in both tail clusters (ids 0 … V−1 in turn). */
function allClusterTargets(B: number, L: number): Int32Array {
  return Int32Array.from({ length: B * L }, (_, k) => (k * 7) % V);
}

/**
 * log p(w | h) computed independently in float64 from the PyTorch-layout state dict:
 * head = h·Wᵀ, log p(w) = lsm(head)[w] (w < c_1), lsm(head)[c_1 + i] + lsm(O_i·P_i·h)[w − c_i] (cluster i).
 */
function float64LogProbs(h: Float32Array, d: number, dict: Map<string, tf.Tensor>): Float64Array[] {
  const order = (dict.get('adaptive.order') as tf.Tensor).dataSync(); // rank → id
  const mat = (name: string) => {
    const t = dict.get(name) as tf.Tensor;
    return { w: Float64Array.from(t.dataSync()), rows: t.shape[0], cols: t.shape[1] as number };
  };
  const apply = (m: { w: Float64Array; rows: number; cols: number }, x: Float64Array) =>
    Float64Array.from({ length: m.rows }, (_, i) =>
      x.reduce((s, xj, j) => s + (m.w[i * m.cols + j] as number) * xj, 0),
    );
  const lsm = (x: Float64Array) => {
    const m = Math.max(...x);
    const lse = m + Math.log(x.reduce((s, v) => s + Math.exp(v - m), 0));
    return x.map((v) => v - lse);
  };
  const head = mat('adaptive.head.weight');
  const out: Float64Array[] = [];
  for (let n = 0; n < h.length / d; n++) {
    const x = Float64Array.from(h.subarray(n * d, (n + 1) * d));
    const headLp = lsm(apply(head, x));
    const byRank = new Float64Array(V);
    for (let w = 0; w < (CUTOFFS[0] as number); w++) byRank[w] = headLp[w] as number;
    CUTOFFS.forEach((c, i) => {
      const tail = lsm(apply(mat(`adaptive.tail.${i}.1.weight`), apply(mat(`adaptive.tail.${i}.0.weight`), x)));
      tail.forEach((v, j) => (byRank[c + j] = (headLp[(CUTOFFS[0] as number) + i] as number) + v));
    });
    const lp = new Float64Array(V);
    byRank.forEach((v, k) => (lp[order[k] as number] = v)); // log p(id) = log p_rank(rank(id))
    out.push(lp);
  }
  return out;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('adaptive head config', () => {
  it('is left out of a config at its default, default cutoffs where none are given, bad cutoffs refused', () => {
    expect('head' in validateModelConfig({ kind: 'grassmann', head: 'tied' })).toBe(false);
    expect(validateModelConfig({ kind: 'grassmann', head: 'adaptive' }).cutoffs).toEqual([2000, 10000]);
    expect(() => validateModelConfig({ kind: 'grassmann', head: 'adaptive', cutoffs: [10, 5] })).toThrow(
      /ModelConfig\.cutoffs: must be increasing integers/,
    );
    expect(() => validateModelConfig({ kind: 'grassmann', head: 'adaptive', cutoffs: [40000] })).toThrow(
      ModelConfigError,
    );
    expect(() => validateModelConfig({ kind: 'grassmann', cutoffs: [10] })).toThrow(/give head: 'adaptive'/);
    expect(() => validateModelConfig({ ...preset('tiny'), head: 'adaptive' })).toThrow(/give cutoffs/);
  });

  it('shapes as PyTorch AdaptiveLogSoftmaxWithLoss(d, V, cutoffs, div_value=4, head_bias=False)', () => {
    const s = adaptiveHeadShapes(128, 30522, [2000, 10000]);
    expect(s.head).toEqual([2002, 128]);
    expect(s.tails).toEqual([
      { proj: [32, 128], out: [8000, 32] },
      { proj: [8, 128], out: [20522, 8] },
    ]);
    expect(s.params).toBe(2002 * 128 + 32 * 128 + 8000 * 32 + 8 * 128 + 20522 * 8);
  });
});

/** A vocabulary order that is far from the identity: the frequency order of a skewed id stream. */
function skewedOrder(): Int32Array {
  const ids = Int32Array.from({ length: 4000 }, (_, k) => (Math.floor(V * Math.pow((k * 0.618) % 1, 3)) * 37) % V);
  return frequencyOrder(ids, V);
}

describe('frequencyOrder', () => {
  it('ranks ids by decreasing count, ties by id, unseen ids last', () => {
    expect(Array.from(frequencyOrder([3, 1, 3, 2, 1, 3], 5))).toEqual([3, 1, 2, 0, 4]);
    expect(() => frequencyOrder([5], 5)).toThrow(/outside \[0, 5\)/);
  });
});

describe.each<TestBackend>(['cpu', 'wasm'])('adaptive head (%s)', (backend) => {
  it('probabilities sum to 1 over the vocabulary and equal a float64 computation (1e-5)', async () => {
    await useBackend(backend);
    const model = createModel(config(), { seed: 4 });
    model.adaptiveHead?.setVocabOrder(skewedOrder());
    const ids = tokenIds(2, 8, V);
    const h = model.hidden(ids);
    const lp = model.logits(h); // [2, 8, V] log-probabilities
    const sums = tf.tidy(() => tf.sum(tf.exp(lp), -1).dataSync());
    for (const s of sums) expect(Math.abs(s - 1)).toBeLessThan(1e-5);
    const dict = model.stateDict();
    const want = float64LogProbs(Float32Array.from(h.dataSync()), 16, dict);
    const got = lp.dataSync();
    let worst = 0;
    want.forEach((row, n) =>
      row.forEach((v, w) => (worst = Math.max(worst, Math.abs((got[n * V + w] as number) - v)))),
    );
    expect(worst).toBeLessThan(1e-5);
    // the last position's distribution (decoding) is the same rows
    const last = model.lastLogits(h);
    const lastWant = tf.tidy(() => tf.reshape(tf.slice(lp, [0, 7, 0], [2, 1, V]), [2, V]));
    expect(tf.tidy(() => tf.max(tf.abs(tf.sub(last, lastWant))).dataSync()[0] as number)).toBeLessThan(1e-6);
    tf.dispose([h, lp, last, lastWant, ids, ...dict.values()]);
    model.dispose();
  });

  it('headLoss = mean −log p(t) over rows in every cluster, with the gradients of the dense path (1e-5)', async () => {
    await useBackend(backend);
    const model = createModel(config('transformer'), { seed: 5 });
    model.adaptiveHead?.setVocabOrder(skewedOrder());
    const ids = tokenIds(2, 8, V);
    const targets = allClusterTargets(2, 8);
    const y = tf.tensor2d(targets, [2, 8], 'int32');
    const vars = model.trainableVariables();
    const fast = tf.variableGrads(() => model.headLoss(model.hidden(ids), targets), vars);
    const dense = tf.variableGrads(() => lmLoss(model.apply(ids), y), vars);
    expect(Math.abs((fast.value.dataSync()[0] as number) - (dense.value.dataSync()[0] as number))).toBeLessThan(1e-5);
    const names = model.namedParams().map((p) => p.variable.name);
    let used = 0;
    for (const name of names) {
      const a = fast.grads[name] as tf.Tensor;
      const b = dense.grads[name] as tf.Tensor;
      const err = tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] as number);
      expect(err, name).toBeLessThan(1e-5);
      if (tf.tidy(() => tf.max(tf.abs(a)).dataSync()[0] as number) > 0) used++;
    }
    expect(used).toBe(names.length); // every weight got a gradient: all clusters were exercised
    // per-token NLL (evaluation) = −log p(t) of the full distribution, row by row
    const nll = model.headNll(model.hidden(ids), targets).dataSync();
    const lp = model.logits(model.hidden(ids)).dataSync();
    for (let n = 0; n < targets.length; n++) {
      expect(Math.abs((nll[n] as number) + (lp[n * V + (targets[n] as number)] as number))).toBeLessThan(1e-5);
    }
    expect(
      Math.abs(Array.from(nll).reduce((a, b) => a + b, 0) / nll.length - (fast.value.dataSync()[0] as number)),
    ).toBeLessThan(1e-5);
    // a tensor of targets gives the same loss as host ids
    const viaTensor = model.headLoss(model.hidden(ids), y);
    expect(Math.abs((viaTensor.dataSync()[0] as number) - (fast.value.dataSync()[0] as number))).toBeLessThan(1e-7);
    expect(() => model.headLoss(model.hidden(ids), targets.subarray(1))).toThrow(/headLoss expects targets/);
    tf.dispose([
      fast.value,
      dense.value,
      viaTensor,
      ids,
      y,
      ...Object.values(fast.grads),
      ...Object.values(dense.grads),
    ]);
    model.dispose();
  });
});

describe('adaptive head in a model', () => {
  it('at V = 30,522 with the default cutoffs, every row sums to 1 (float64 sum, 1e-5)', async () => {
    await useBackend('wasm');
    const model = createModel({ kind: 'grassmann', nLayers: 1, dModel: 16, r: 4, head: 'adaptive' }, { seed: 2 });
    model.adaptiveHead?.setVocabOrder(frequencyOrder(tokenIds(1, 4096, 30522).dataSync(), 30522));
    const ids = tokenIds(1, 6, 30522);
    const lp = model.logits(model.hidden(ids)).dataSync();
    for (let t = 0; t < 6; t++) {
      const sum = Array.from(lp.subarray(t * 30522, (t + 1) * 30522)).reduce((a, v) => a + Math.exp(v), 0);
      expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
    }
    ids.dispose();
    model.dispose();
  });

  it('counts its parameters, trains, and round-trips through a checkpoint under its documented names', async () => {
    await useBackend('cpu');
    const c = config();
    const model = createModel(c, { seed: 6 });
    const order = skewedOrder();
    model.adaptiveHead?.setVocabOrder(order);
    expect(() => model.adaptiveHead?.setVocabOrder(new Int32Array(V))).toThrow(/not a permutation/);
    expect(model.numParams()).toBe(countParams(c));
    expect(countParams(c) - countParams(preset('tiny', { vocabSize: V }))).toBe(
      adaptiveHeadShapes(16, V, CUTOFFS).params,
    );
    const names = model.namedParams().map((p) => p.name);
    expect(names.slice(-5)).toEqual([
      'adaptive.head.weight',
      'adaptive.tail.0.0.weight',
      'adaptive.tail.0.1.weight',
      'adaptive.tail.1.0.weight',
      'adaptive.tail.1.1.weight',
    ]);
    const dict = model.stateDict();
    expect(dict.get('adaptive.order')?.shape).toEqual([V]); // a buffer: in the state dict, not a parameter
    expect(dict.get('adaptive.head.weight')?.shape).toEqual([(CUTOFFS[0] as number) + 2, 16]); // nn.Linear [out, in]
    expect(dict.get('adaptive.tail.1.1.weight')?.shape).toEqual([V - 24, 1]);
    tf.dispose([...dict.values()]);

    // a few AdamW-free SGD steps on one batch lower the loss
    const ids = tokenIds(4, 16, V);
    const targets = allClusterTargets(4, 16);
    const vars = model.trainableVariables();
    const lossAt = () => tf.tidy(() => model.headLoss(model.hidden(ids), targets).dataSync()[0] as number);
    const before = lossAt();
    for (let k = 0; k < 20; k++) {
      const { value, grads } = tf.variableGrads(() => model.headLoss(model.hidden(ids), targets), vars);
      tf.tidy(() => vars.forEach((v) => v.assign(tf.sub(v, tf.mul(grads[v.name] as tf.Tensor, 0.5)))));
      tf.dispose([value, ...Object.values(grads)]);
    }
    expect(lossAt()).toBeLessThan(before - 0.3);

    const dir = mkdtempSync(join(tmpdir(), 'adaptive-'));
    dirs.push(dir);
    await saveCheckpoint(join(dir, 'ckpt'), model);
    const loaded = await loadCheckpoint(join(dir, 'ckpt'));
    expect(loaded.model.config).toEqual(validateModelConfig(c));
    expect(Array.from(loaded.model.adaptiveHead?.vocabOrder ?? [])).toEqual(Array.from(order));
    const a = model.apply(ids);
    const b = loaded.model.apply(ids);
    expect(tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] as number)).toBe(0);
    tf.dispose([a, b, ids]);
    loaded.model.dispose();
    model.dispose();
  });
});

// The optional architectures of issue 20 (gate, dropoutAt, mixerNorm, eaEps): reference formulas, decoding,
// dropout placement, EA's relative ε, serialization and training.
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { describe, expect, it } from 'vitest';
import {
  attentionTrace,
  attentionWeights,
  CausalGrassmannMixing,
  causalAttention,
  createModel,
  GrassmannBlock,
  lmLoss,
  preset,
  TransformerBlock,
  type AttentionWeights,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import { decodeInChunks, maxAbsDiff, tokenIds, useBackend, values, type TestBackend } from './helpers.js';

/** Add N(0, std) to every parameter of a block or model (biases and LayerNorm γ, β included). */
function perturb(params: Array<{ variable: tf.Variable }>, seed: number, std = 0.3): void {
  tf.tidy(() => {
    params.forEach((p, k) => {
      p.variable.assign(tf.add(p.variable, tf.randomNormal(p.variable.shape, 0, std, 'float32', seed * 1000 + k)));
    });
  });
}

// ---- reference formulas from primitive ops (independent of the package's code) ----

/** LN(x) = (x − mean)/sqrt(var + 1e-5)·γ + β over the last axis. */
function refLayerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), gamma), beta);
}

/** x·W + b for x [B, L, k], W [k, n] (the package's internal [in, out] layout). */
function refLinear(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const [B, L, k] = x.shape as [number, number, number];
  return tf.reshape(tf.add(tf.matMul(tf.reshape(x, [B * L, k]), w as tf.Tensor2D), b), [B, L, w.shape[1] as number]);
}

/** FFN(x) = fc2(x·Φ(x)) ∘ fc1 with Φ(x) = (1 + erf(x/√2))/2. */
function refFfn(x: tf.Tensor, p: (name: string) => tf.Tensor): tf.Tensor {
  const u = refLinear(x, p('ffn.fc1.weight'), p('ffn.fc1.bias'));
  const gelu = tf.mul(u, tf.mul(0.5, tf.add(1, tf.erf(tf.mul(u, Math.SQRT1_2)))));
  return refLinear(gelu, p('ffn.fc2.weight'), p('ffn.fc2.bias'));
}

/**
 * The mixer, position by position: z = h W_red + b_red; for each Δ with t − Δ ≥ 0,
 * p_ij = z_{t−Δ,i} z_{t,j} − z_{t−Δ,j} z_{t,i} (i < j lexicographic), p̂ = p/sqrt(‖p‖² + ε²);
 * g_t = mean_Δ (p̂ W_plu + b_plu), 0 without a pair; α = σ([h; g] W_gate + b_gate);
 * m = α⊙h + (1−α)⊙g (blend) or α⊙g (additive); LN_mix(m) with mixerNorm.
 */
function refMixer(
  h: tf.Tensor3D,
  p: (name: string) => tf.Tensor,
  offsets: number[],
  eps: number,
  gate: 'blend' | 'additive',
  mixerNorm: boolean,
): tf.Tensor {
  const [B, L, d] = h.shape;
  const z = refLinear(h, p('mixer.w_red.weight'), p('mixer.w_red.bias'));
  const r = z.shape[2] as number;
  const col = (t: number, i: number) => tf.reshape(tf.slice(z, [0, t, i], [B, 1, 1]), [B]); // z_{t,i} [B]
  const gs: tf.Tensor[] = [];
  for (let t = 0; t < L; t++) {
    const terms: tf.Tensor[] = [];
    for (const delta of offsets) {
      if (t - delta < 0) continue;
      const coords: tf.Tensor[] = [];
      for (let i = 0; i < r; i++) {
        for (let j = i + 1; j < r; j++) {
          coords.push(tf.sub(tf.mul(col(t - delta, i), col(t, j)), tf.mul(col(t - delta, j), col(t, i))));
        }
      }
      const pl = tf.stack(coords, 1); // [B, C]
      const pHat = tf.div(pl, tf.sqrt(tf.add(tf.sum(tf.square(pl), 1, true), eps * eps)));
      terms.push(tf.add(tf.matMul(pHat as tf.Tensor2D, p('mixer.w_plu.weight') as tf.Tensor2D), p('mixer.w_plu.bias')));
    }
    gs.push(terms.length === 0 ? tf.zeros([B, d]) : tf.div(tf.addN(terms), terms.length));
  }
  const g = tf.stack(gs, 1); // [B, L, d]
  const alpha = tf.sigmoid(refLinear(tf.concat([h, g], 2), p('mixer.w_gate.weight'), p('mixer.w_gate.bias')));
  const m = gate === 'blend' ? tf.add(tf.mul(alpha, h), tf.mul(tf.sub(1, alpha), g)) : tf.mul(alpha, g);
  return mixerNorm ? refLayerNorm(m, p('mixer.ln.weight'), p('mixer.ln.bias')) : m;
}

/**
 * The block at inference (dropout off, so dropoutAt does not matter):
 * post blend x = LN1(m(h)); post additive x = LN1(h + m(h)); out = LN2(x + FFN(x));
 * pre x = h + m(LN1(h)); out = x + FFN(LN2(x)).
 */
function refGrassmannBlock(
  h: tf.Tensor3D,
  block: GrassmannBlock,
  gate: 'blend' | 'additive',
  mixerNorm: boolean,
): tf.Tensor {
  const byName = new Map(block.namedParams().map((q) => [q.name, q.variable as tf.Tensor]));
  const p = (name: string) => {
    const t = byName.get(name);
    if (t === undefined) throw new Error(`no parameter ${name}`);
    return t;
  };
  const mix = (u: tf.Tensor) => refMixer(u as tf.Tensor3D, p, block.offsets, block.eps, gate, mixerNorm);
  const ln = (x: tf.Tensor, which: string) => refLayerNorm(x, p(`${which}.weight`), p(`${which}.bias`));
  if (block.norm === 'post') {
    const x = ln(gate === 'blend' ? mix(h) : tf.add(h, mix(h)), 'ln1');
    return ln(tf.add(x, refFfn(x, p)), 'ln2');
  }
  const x = tf.add(h, mix(ln(h, 'ln1')));
  return tf.add(x, refFfn(ln(x, 'ln2'), p));
}

/**
 * Multi-head causal EA: s = q kᵀ/sqrt(d_head), e = m ⊙ s²/(1 + s²) (m: causal 0/1),
 * a = e/(Σ_j e + ε) (absolute) or e/(Σ_j e + ε·max_j e + ε²) (relative); out = concat_h(a v) W_proj + b_proj.
 */
function refEa(h: tf.Tensor3D, w: AttentionWeights, H: number, eps: number, eaEps: 'absolute' | 'relative') {
  const [B, L, d] = h.shape;
  const dh = d / H;
  const qkv = refLinear(h, w.wQkv, w.bQkv); // [B, L, 3d]
  const mask = tf.linalg.bandPart(tf.ones([L, L]), -1, 0); // [L, L], 1 where j ≤ i
  const heads: tf.Tensor[] = [];
  for (let k = 0; k < H; k++) {
    const q = tf.slice(qkv, [0, 0, k * dh], [B, L, dh]);
    const key = tf.slice(qkv, [0, 0, d + k * dh], [B, L, dh]);
    const v = tf.slice(qkv, [0, 0, 2 * d + k * dh], [B, L, dh]);
    const s = tf.div(tf.matMul(q as tf.Tensor3D, key as tf.Tensor3D, false, true), Math.sqrt(dh)); // [B, L, L]
    const e = tf.mul(mask, tf.div(tf.square(s), tf.add(1, tf.square(s))));
    const sum = tf.sum(e, -1, true);
    const den =
      eaEps === 'absolute' ? tf.add(sum, eps) : tf.add(tf.add(sum, tf.mul(eps, tf.max(e, -1, true))), eps * eps);
    heads.push(tf.matMul(tf.div<tf.Tensor3D>(e, den), v));
  }
  return refLinear(tf.concat(heads, 2), w.wProj, w.bProj);
}

// ---- (a) the full forward equals the reference formulas ----

describe('GrassmannBlock options equal their formulas (max abs diff ≤ 1e-5)', () => {
  const cases: Array<['post' | 'pre', 'blend' | 'additive', boolean, 'stream' | 'branch']> = [];
  for (const norm of ['post', 'pre'] as const)
    for (const gate of ['blend', 'additive'] as const)
      for (const mixerNorm of [false, true])
        for (const dropoutAt of ['stream', 'branch'] as const) cases.push([norm, gate, mixerNorm, dropoutAt]);

  it.each(cases)('%s-LN, gate %s, mixerNorm %s, dropoutAt %s', async (norm, gate, mixerNorm, dropoutAt) => {
    await useBackend('cpu');
    const block = new GrassmannBlock({
      r: 4,
      offsets: [1, 3],
      dFF: 16,
      norm,
      dropout: 0.1,
      gate,
      mixerNorm,
      dropoutAt,
    });
    const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 11);
    block.apply(h); // build
    perturb(block.namedParams(), 5);
    expect(block.namedParams().some((q) => q.name === 'mixer.ln.weight')).toBe(mixerNorm);
    const got = block.apply(h) as tf.Tensor; // dropout off
    const want = tf.tidy(() => refGrassmannBlock(h, block, gate, mixerNorm));
    expect(maxAbsDiff(got, want)).toBeLessThanOrEqual(1e-5);
    // the other gate's (or norm's) formula is far away: the comparison can fail
    const other = tf.tidy(() => refGrassmannBlock(h, block, gate === 'blend' ? 'additive' : 'blend', mixerNorm));
    expect(maxAbsDiff(got, other)).toBeGreaterThan(1e-2);
    // dropout 0 and training: the same values
    const quiet = new GrassmannBlock({ r: 4, offsets: [1, 3], dFF: 16, norm, dropout: 0, gate, mixerNorm, dropoutAt });
    quiet.apply(h);
    quiet.setWeights(block.getWeights());
    const trained = quiet.apply(h, { training: true }) as tf.Tensor;
    expect(maxAbsDiff(trained, want)).toBeLessThanOrEqual(1e-5);
    tf.dispose([h, got, want, other, trained]);
    block.dispose();
    quiet.dispose();
  });
});

describe('CausalGrassmannMixing takes the same gate and mixerNorm options', () => {
  it.each([
    ['blend', false],
    ['additive', false],
    ['blend', true],
    ['additive', true],
  ] as const)(
    'gate %s, mixerNorm %s: equals the reference mixer, and getConfig round-trips',
    async (gate, mixerNorm) => {
      await useBackend('cpu');
      const layer = new CausalGrassmannMixing({ r: 4, offsets: [1, 2], gate, mixerNorm });
      const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 12);
      layer.apply(h);
      perturb(layer.namedParams(), 6);
      const byName = new Map(layer.namedParams().map((q) => [`mixer.${q.name}`, q.variable as tf.Tensor]));
      const got = layer.apply(h) as tf.Tensor;
      const want = tf.tidy(() => refMixer(h, (n) => byName.get(n) as tf.Tensor, [1, 2], 1e-6, gate, mixerNorm));
      expect(maxAbsDiff(got, want)).toBeLessThanOrEqual(1e-5);
      const clone = CausalGrassmannMixing.fromConfig(CausalGrassmannMixing, layer.getConfig()) as CausalGrassmannMixing;
      expect([clone.gate, clone.mixerNorm]).toEqual([gate, mixerNorm]);
      // d·r + r + C(r,2)·d + d + 2d·d + d = 32 + 4 + 48 + 8 + 128 + 8 at d = 8, r = 4; LN_mix adds 2d
      expect(layer.countParams()).toBe(228 + (mixerNorm ? 16 : 0));
      tf.dispose([h, got, want]);
      layer.dispose();
    },
  );
});

describe("expressive attention's relative ε equals its formula", () => {
  it.each(['absolute', 'relative'] as const)('eaEps %s (ε = 0.05, so the two forms differ)', async (eaEps) => {
    await useBackend('cpu');
    const [B, L, d, H, eps] = [2, 6, 8, 2, 0.05];
    const w: AttentionWeights = {
      wQkv: tf.randomNormal([d, 3 * d], 0, 0.4, 'float32', 1),
      bQkv: tf.randomNormal([3 * d], 0, 0.1, 'float32', 2),
      wProj: tf.randomNormal([d, d], 0, 0.4, 'float32', 3),
      bProj: tf.randomNormal([d], 0, 0.1, 'float32', 4),
    };
    const h = tf.randomNormal<tf.Rank.R3>([B, L, d], 0, 1, 'float32', 5);
    const got = causalAttention(h, w, { nHeads: H, kind: 'ea', eps, eaEps });
    const want = tf.tidy(() => refEa(h, w, H, eps, eaEps));
    const other = tf.tidy(() => refEa(h, w, H, eps, eaEps === 'absolute' ? 'relative' : 'absolute'));
    expect(maxAbsDiff(got, want)).toBeLessThanOrEqual(1e-5);
    expect(maxAbsDiff(got, other)).toBeGreaterThan(1e-3);
    // the trace and the block use the same weights
    const tr = attentionTrace(h, w, { nHeads: H, kind: 'ea', eps, eaEps });
    expect(maxAbsDiff(tr.output, want)).toBeLessThanOrEqual(1e-5);
    tf.dispose([got, want, other, tr.output, tr.scores, tr.weights, h, w.wQkv, w.bQkv, w.wProj, w.bProj]);
  });
});

// ---- (b) decoding equals the full forward ----

/** A model whose every parameter is perturbed by N(0, 0.3). */
function randomisedModel(config: ModelConfig, seed = 3): ReturnType<typeof createModel> {
  const model = createModel(config, { seed });
  perturb(model.namedParams(), seed);
  return model;
}

const base = { vocabSize: 40, dModel: 16, dFF: 32, r: 4, nHeads: 2, nLayers: 2, maxLen: 12, dropout: 0.1 };
const two = { offsets: [[1, 2], [3]] };
const OPTION_CASES: Array<[string, ModelConfig]> = [
  ['grassmann post-LN, additive gate', preset('tiny', { ...base, ...two, gate: 'additive' })],
  ['grassmann pre-LN, additive gate', preset('tiny', { ...base, ...two, norm: 'pre', gate: 'additive' })],
  ['grassmann post-LN, mixerNorm', preset('tiny', { ...base, ...two, mixerNorm: true })],
  ['grassmann pre-LN, mixerNorm (alphaXiv)', preset('tiny', { ...base, ...two, norm: 'pre', mixerNorm: true })],
  [
    'grassmann post-LN, additive, mixerNorm, dropoutAt branch',
    preset('tiny', { ...base, ...two, gate: 'additive', mixerNorm: true, dropoutAt: 'branch' }),
  ],
  ['grassmann post-LN, dropoutAt branch', preset('tiny', { ...base, ...two, dropoutAt: 'branch' })],
  [
    'transformer EA post-LN, eaEps relative',
    preset('tiny', { ...base, kind: 'transformer', attention: 'ea', eaEps: 'relative', eps: 0.05 }),
  ],
  ['transformer DPA post-LN, dropoutAt stream', preset('tiny', { ...base, kind: 'transformer', dropoutAt: 'stream' })],
  [
    'transformer EA pre-LN, eaEps relative',
    preset('tiny', { ...base, kind: 'transformer', attention: 'ea', norm: 'pre', eaEps: 'relative', eps: 0.05 }),
  ],
];

describe.each<TestBackend>(['cpu', 'wasm'])('decoding with the options equals the full forward (%s)', (backend) => {
  it.each(OPTION_CASES)('%s: step by step and in chunks (max abs diff ≤ 1e-4)', async (_name, config) => {
    await useBackend(backend);
    const model = randomisedModel(config);
    const ids = tokenIds(2, config.maxLen, config.vocabSize);
    const full = model.apply(ids);
    expect(tf.tidy(() => tf.max(tf.abs(full)).dataSync()[0] as number)).toBeGreaterThan(0.5);
    const stepped = decodeInChunks(model, ids, new Array<number>(config.maxLen).fill(1));
    const mixed = decodeInChunks(model, ids, [5, 1, 3, 1, 2]);
    expect(maxAbsDiff(stepped, full)).toBeLessThanOrEqual(1e-4);
    expect(maxAbsDiff(mixed, full)).toBeLessThanOrEqual(1e-4);
    tf.dispose([full, stepped, mixed, ids]);
    model.dispose();
  });
});

// ---- plumbing: config → blocks, getConfig/fromConfig, JSON ----

describe('the options reach the blocks and survive serialization', () => {
  it('GrassmannLM and TransformerLM pass the config fields to their blocks', () => {
    const g = createModel(preset('tiny', { gate: 'additive', dropoutAt: 'branch', mixerNorm: true }));
    for (const b of g.blocks as GrassmannBlock[]) {
      expect([b.gate, b.dropoutAt, b.mixerNorm]).toEqual(['additive', 'branch', true]);
    }
    expect(
      g
        .namedParams()
        .filter((q) => q.name.endsWith('mixer.ln.weight'))
        .map((q) => q.name),
    ).toEqual(['blocks.0.mixer.ln.weight', 'blocks.1.mixer.ln.weight']);
    const plain = createModel(preset('tiny'));
    for (const b of plain.blocks as GrassmannBlock[])
      expect([b.gate, b.dropoutAt, b.mixerNorm]).toEqual(['blend', 'stream', false]);
    expect(plain.namedParams().some((q) => q.name.includes('mixer.ln'))).toBe(false);
    expect(g.numParams() - plain.numParams()).toBe(2 * 2 * 16); // LN_mix: 2d per layer
    const t = createModel(preset('tiny', { kind: 'transformer', attention: 'ea', eaEps: 'relative' }));
    for (const b of t.blocks as TransformerBlock[]) expect([b.eaEps, b.dropoutAt]).toEqual(['relative', 'branch']);
    const ts = createModel(preset('tiny', { kind: 'transformer', dropoutAt: 'stream' }));
    for (const b of ts.blocks as TransformerBlock[]) expect(b.dropoutAt).toBe('stream');
    [g, plain, t, ts].forEach((m) => m.dispose());
  });

  it('getConfig/fromConfig and a tfjs-layers JSON round trip keep the fields; defaults are left out', async () => {
    await useBackend('cpu');
    const gb = new GrassmannBlock({
      r: 4,
      offsets: [1, 2],
      dFF: 16,
      gate: 'additive',
      dropoutAt: 'branch',
      mixerNorm: true,
    });
    const cfg = gb.getConfig();
    expect(cfg).toMatchObject({ gate: 'additive', dropoutAt: 'branch', mixerNorm: true });
    const clone = GrassmannBlock.fromConfig(GrassmannBlock, cfg) as GrassmannBlock;
    expect([clone.gate, clone.dropoutAt, clone.mixerNorm]).toEqual(['additive', 'branch', true]);
    const plainCfg = new GrassmannBlock({ r: 4, offsets: [1], dFF: 16 }).getConfig();
    expect(Object.keys(plainCfg).filter((k) => ['gate', 'dropoutAt', 'mixerNorm'].includes(k))).toEqual([]);
    expect('eaEps' in new TransformerBlock({ nHeads: 2, dFF: 8 }).getConfig()).toBe(false);

    const input = tfl.input({ shape: [6, 8] });
    const out = new TransformerBlock({ nHeads: 2, dFF: 16, attention: 'ea', eaEps: 'relative', eps: 0.05 }).apply(
      gb.apply(input),
    ) as tfl.SymbolicTensor;
    const model = tfl.model({ inputs: input, outputs: out });
    const json = model.toJSON(null, false) as tf.serialization.ConfigDict;
    const restored = await tfl.models.modelFromJSON({ modelTopology: json });
    expect(restored.layers[1]?.getConfig()).toMatchObject({ gate: 'additive', dropoutAt: 'branch', mixerNorm: true });
    expect(restored.layers[2]?.getConfig()).toMatchObject({ attention: 'ea', eaEps: 'relative' });
    restored.setWeights(model.getWeights());
    const x = tf.randomNormal([2, 6, 8], 0, 1, 'float32', 1);
    expect(values(restored.predict(x) as tf.Tensor)).toEqual(values(model.predict(x) as tf.Tensor));
    expect(() => new GrassmannBlock({ r: 4, offsets: [1], dFF: 8, gate: 'sum' as 'blend' })).toThrow(/gate/);
    expect(() => new GrassmannBlock({ r: 4, offsets: [1], dFF: 8, dropoutAt: 'x' as 'stream' })).toThrow(/dropoutAt/);
    expect(() => new TransformerBlock({ nHeads: 2, dFF: 8, eaEps: 'x' as 'relative' })).toThrow(/eaEps/);
  });
});

// ---- (c) dropout placement ----

/** Exposes the post-LN first half ĥ of the block, computed as the block's own call computes it. */
class ProbeBlock extends GrassmannBlock {
  firstHalf(h: tf.Tensor3D, training: boolean): tf.Tensor3D {
    return tf.tidy(() => this.postMix(h, training, (u) => this.mix(u, training)));
  }

  setParam(name: string, value: number): void {
    const p = this.namedParams().find((q) => q.name === name);
    if (p === undefined) throw new Error(`no parameter ${name}`);
    p.variable.assign(tf.fill(p.variable.shape, value));
  }
}

describe('dropoutAt: post-LN dropout on the stream or on the mixing branch only (rate 0.5, training)', () => {
  /** ĥ in training and LN1(h) (γ = 1, β = 0) for a block whose α ≈ 1 (blend) or whose g = 0 (additive). */
  function probe(gate: 'blend' | 'additive', dropoutAt: 'stream' | 'branch') {
    const block = new ProbeBlock({ r: 4, offsets: [1, 2], dFF: 16, dropout: 0.5, gate, dropoutAt });
    const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 21);
    block.apply(h);
    if (gate === 'blend') {
      block.setParam('mixer.w_gate.weight', 0);
      block.setParam('mixer.w_gate.bias', 20); // α = σ(20) ≈ 1: h_mix ≈ h, (1−α)⊙g ≈ 0
    } else {
      block.setParam('mixer.w_plu.weight', 0);
      block.setParam('mixer.w_plu.bias', 0); // g = 0: α⊙g = 0, h + α⊙g = h
    }
    const hat = block.firstHalf(h, true);
    const ln1 = tf.tidy(() => {
      const { mean, variance } = tf.moments(h, -1, true);
      return tf.div(tf.sub(h, mean), tf.sqrt(tf.add(variance, 1e-5)));
    });
    const zeros = values(hat).filter((v) => v === 0).length;
    const result = { hat, ln1, zeros, size: hat.size };
    h.dispose();
    block.dispose();
    return result;
  }

  it.each(['blend', 'additive'] as const)(
    "gate %s: 'branch' keeps LN1(h) whole, 'stream' zeroes about half",
    async (gate) => {
      await useBackend('cpu');
      const branch = probe(gate, 'branch');
      expect(branch.zeros).toBe(0);
      expect(maxAbsDiff(branch.hat, branch.ln1)).toBeLessThanOrEqual(1e-5);
      const stream = probe(gate, 'stream');
      expect(stream.zeros).toBeGreaterThan(stream.size * 0.3);
      expect(stream.zeros).toBeLessThan(stream.size * 0.7);
      // the kept entries are LN1(h) / (1 − 0.5)
      const kept = tf.tidy(() => tf.where(tf.equal(stream.hat, 0), tf.zeros(stream.hat.shape), tf.mul(stream.ln1, 2)));
      expect(maxAbsDiff(stream.hat, kept)).toBeLessThanOrEqual(1e-5);
      tf.dispose([branch.hat, branch.ln1, stream.hat, stream.ln1, kept]);
    },
  );

  it("'branch' with the blend does drop the branch: with α ≈ 0 training and inference differ", async () => {
    await useBackend('cpu');
    const block = new ProbeBlock({ r: 4, offsets: [1, 2], dFF: 16, dropout: 0.5, dropoutAt: 'branch' });
    const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 22);
    block.apply(h);
    block.setParam('mixer.w_gate.weight', 0);
    block.setParam('mixer.w_gate.bias', -20); // α ≈ 0: h_mix ≈ Dropout(g)
    block.setParam('mixer.w_plu.bias', 1); // g ≠ 0 wherever a pair exists
    const train = block.firstHalf(h, true);
    const infer = block.firstHalf(h, false);
    expect(maxAbsDiff(train, infer)).toBeGreaterThan(0.1);
    expect(values(train).every(Number.isFinite)).toBe(true);
    tf.dispose([h, train, infer]);
    block.dispose();
  });
});

/** The Transformer's post-LN first half x, computed as the block's own call computes it. */
class TransformerProbe extends TransformerBlock {
  firstHalf(h: tf.Tensor3D, training: boolean): tf.Tensor3D {
    return tf.tidy(() => this.postMix(h, training, (u) => this.mix(u)));
  }
}

describe('dropoutAt on a Transformer (the control of the Grassmann placement): rate 0.5, training', () => {
  it.each(['dpa', 'ea'] as const)(
    "%s with Attn(h) = 0: 'branch' gives LN1(h) whole, 'stream' zeroes about half and scales the rest by 2",
    async (attention) => {
      await useBackend('cpu');
      const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 23);
      const ln1 = tf.tidy(() => {
        const { mean, variance } = tf.moments(h, -1, true);
        return tf.div(tf.sub(h, mean), tf.sqrt(tf.add(variance, 1e-5)));
      });
      const hats = (['branch', 'stream'] as const).map((dropoutAt) => {
        const block = new TransformerProbe({ nHeads: 2, dFF: 16, dropout: 0.5, attention, dropoutAt });
        block.apply(h);
        for (const q of block.namedParams().filter((n) => n.name.startsWith('mixer.proj.'))) {
          q.variable.assign(tf.zerosLike(q.variable)); // Attn(h) = 0, so h + Attn(h) = h
        }
        const hat = block.firstHalf(h, true);
        block.dispose();
        return hat;
      });
      const [branch, stream] = hats as [tf.Tensor3D, tf.Tensor3D];
      // branch: LN1(h + Dropout(0)) = LN1(h), nothing dropped
      expect(values(branch).filter((v) => v === 0).length).toBe(0);
      expect(maxAbsDiff(branch, ln1)).toBeLessThanOrEqual(1e-5);
      // stream: Dropout(LN1(h)), the kept entries LN1(h) / (1 − 0.5)
      const zeros = values(stream).filter((v) => v === 0).length;
      expect(zeros).toBeGreaterThan(stream.size * 0.3);
      expect(zeros).toBeLessThan(stream.size * 0.7);
      const kept = tf.tidy(() => tf.where(tf.equal(stream, 0), tf.zeros(stream.shape), tf.mul(ln1, 2)));
      expect(maxAbsDiff(stream, kept)).toBeLessThanOrEqual(1e-5);
      tf.dispose([h, ln1, branch, stream, kept]);
    },
  );

  it('inference does not depend on dropoutAt (the same weights give the same output)', async () => {
    await useBackend('cpu');
    const h = tf.randomNormal<tf.Rank.R3>([2, 6, 8], 0, 1, 'float32', 24);
    const a = new TransformerBlock({ nHeads: 2, dFF: 16, dropout: 0.5, dropoutAt: 'branch' });
    const b = new TransformerBlock({ nHeads: 2, dFF: 16, dropout: 0.5, dropoutAt: 'stream' });
    a.apply(h);
    b.apply(h);
    b.setWeights(a.getWeights());
    const [ya, yb] = [a.apply(h) as tf.Tensor, b.apply(h) as tf.Tensor];
    expect(maxAbsDiff(ya, yb)).toBe(0);
    const [ta, tb] = [a.apply(h, { training: true }) as tf.Tensor, b.apply(h, { training: true }) as tf.Tensor];
    expect(maxAbsDiff(ta, tb)).toBeGreaterThan(1e-2); // in training they do differ
    tf.dispose([h, ya, yb, ta, tb]);
    a.dispose();
    b.dispose();
  });
});

// ---- (d) EA's relative ε on tiny and masked scores ----

describe("eaEps 'relative': tiny scores still attend, zero rows give 0", () => {
  it('all scores ~3e-5 (e ~ 1e-9 ≪ ε = 1e-6): relative rows sum to ≈ 1, absolute ones to ≈ 0', async () => {
    await useBackend('cpu');
    const L = 6;
    // s ∈ [1.5e-5, 4.5e-5]: e = s²/(1 + s²) ∈ [2.2e-10, 2e-9], so Σ_j e ≤ 1.2e-8 per row
    const scores = tf.mul<tf.Tensor3D>(tf.randomUniform([2, L, L], 0.5, 1.5, 'float32', 3), 3e-5);
    const rel = attentionWeights(scores, 'ea', 1e-6, 'relative');
    const abs = attentionWeights(scores, 'ea', 1e-6, 'absolute');
    const relSums = values(tf.sum(rel, -1));
    const absSums = values(tf.sum(abs, -1));
    // relative: Σe/(Σe + ε·max e + ε²) ≥ 1 − 1e-6 − 1e-12/2.2e-10 > 0.995; absolute: Σe/(Σe + ε) < 0.012
    for (const s of relSums) expect(s).toBeGreaterThan(0.995);
    for (const s of relSums) expect(s).toBeLessThanOrEqual(1 + 1e-6);
    for (const s of absSums) expect(s).toBeLessThan(0.02);
    tf.dispose([scores, rel, abs]);
  });

  it('an all-zero row (and a fully masked sequence) gives weights 0 and no NaN', async () => {
    await useBackend('cpu');
    const scores = tf.concat<tf.Tensor3D>([tf.zeros([1, 4, 4]), tf.randomNormal([1, 4, 4], 0, 1, 'float32', 4)], 0);
    const a = attentionWeights(scores, 'ea', 1e-6, 'relative');
    const v = values(a);
    expect(v.every(Number.isFinite)).toBe(true);
    expect(v.slice(0, 16).every((x) => x === 0)).toBe(true);
    const w: AttentionWeights = {
      wQkv: tf.randomNormal([8, 24], 0, 0.4, 'float32', 1),
      bQkv: tf.zeros([24]),
      wProj: tf.randomNormal([8, 8], 0, 0.4, 'float32', 3),
      bProj: tf.zeros([8]),
    };
    const h = tf.randomNormal<tf.Rank.R3>([2, 5, 8], 0, 1, 'float32', 5);
    const keyMask = tf.tensor2d([0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [2, 5]); // sequence 0: every key is padding
    const tr = attentionTrace(h, w, { nHeads: 2, kind: 'ea', eps: 1e-6, eaEps: 'relative', keyMask });
    const weights = values(tr.weights);
    expect(weights.every(Number.isFinite)).toBe(true);
    expect(weights.slice(0, 2 * 25).every((x) => x === 0)).toBe(true); // rows b·H + head of sequence 0
    expect(values(tr.output).every(Number.isFinite)).toBe(true);
    tf.dispose([scores, a, h, keyMask, tr.output, tr.scores, tr.weights, w.wQkv, w.bQkv, w.wProj, w.bProj]);
  });
});

// ---- (f) gradients are finite and the models train ----

describe('each option trains: finite gradients, the loss falls over 15 Adam steps', () => {
  const tiny = { dropout: 0.1 };
  const configs: Array<[string, ModelConfig]> = [
    ['additive gate, post-LN', preset('tiny', { ...tiny, gate: 'additive' })],
    ['additive gate, pre-LN', preset('tiny', { ...tiny, gate: 'additive', norm: 'pre' })],
    ['dropoutAt branch', preset('tiny', { ...tiny, dropoutAt: 'branch' })],
    ['additive + dropoutAt branch', preset('tiny', { ...tiny, gate: 'additive', dropoutAt: 'branch' })],
    ['mixerNorm, pre-LN', preset('tiny', { ...tiny, mixerNorm: true, norm: 'pre' })],
    ['mixerNorm, post-LN', preset('tiny', { ...tiny, mixerNorm: true })],
    [
      'EA eaEps relative, post-LN',
      preset('tiny', { ...tiny, kind: 'transformer', attention: 'ea', eaEps: 'relative' }),
    ],
    ['DPA dropoutAt stream, post-LN', preset('tiny', { ...tiny, kind: 'transformer', dropoutAt: 'stream' })],
  ];
  it.each(configs)('%s', async (_n, config) => {
    await useBackend('cpu');
    const model = createModel(config, { seed: 2 });
    const optimizer = tf.train.adam(3e-3);
    const ids = tokenIds(4, 12, config.vocabSize, 9);
    const targets = tokenIds(4, 12, config.vocabSize, 10);
    const vars = model.trainableVariables();
    const { grads } = tf.variableGrads(() => lmLoss(model.apply(ids, { training: true }), targets), vars);
    for (const g of Object.values(grads)) expect(values(g).every(Number.isFinite)).toBe(true);
    const lnVars = model.namedParams().filter((q) => q.name.endsWith('mixer.ln.weight'));
    expect(lnVars.length).toBe(config.kind === 'grassmann' && config.mixerNorm === true ? 2 : 0);
    for (const q of lnVars)
      expect(tf.tidy(() => tf.max(tf.abs(grads[q.variable.name] as tf.Tensor)).dataSync()[0])).toBeGreaterThan(0);
    tf.dispose(Object.values(grads));
    const losses: number[] = [];
    for (let step = 0; step < 15; step++) {
      const loss = optimizer.minimize(() => lmLoss(model.apply(ids, { training: true }), targets), true, vars);
      losses.push((loss as tf.Scalar).dataSync()[0] as number);
      loss?.dispose();
    }
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(losses[14] as number).toBeLessThan((losses[0] as number) - 0.05);
    optimizer.dispose();
    tf.dispose([ids, targets]);
    model.dispose();
  });
});

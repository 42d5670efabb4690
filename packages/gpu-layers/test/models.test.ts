// Models: parameter counts, presets, config validation, seeding, state dicts, memory over training.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  checkTokenIds,
  tfjsSeed,
  countParams,
  createModel,
  GrassmannLM,
  lmLoss,
  MODEL_DEFAULTS,
  ModelConfigError,
  offsetSchedule,
  preset,
  PRESETS,
  StateDictError,
  TransformerLM,
  validateModelConfig,
  type ModelConfig,
} from '@grassflow/gpu-layers';
import { tokenIds, useBackend, values } from './helpers.js';

describe('configs and parameter counts', () => {
  it('paper-6l has 12,606,656 (Grassmann) and 12,584,960 (Transformer) parameters', async () => {
    await useBackend('cpu');
    // Analytic (paper-notes §2): 30,522·256 + 128·256 + 6·793,376 = 12,606,656; 6·789,760 → 12,584,960.
    expect(countParams(preset('paper-6l'))).toBe(12_606_656);
    expect(countParams(preset('paper-6l', { kind: 'transformer' }))).toBe(12_584_960);
    expect(countParams(preset('paper-6l', { kind: 'transformer', norm: 'pre' }))).toBe(12_584_960 + 512);
    // The built models agree.
    const g = new GrassmannLM(preset('paper-6l'), { seed: 1 });
    expect(g.numParams()).toBe(12_606_656);
    g.dispose();
    const t = new TransformerLM(preset('paper-6l', { kind: 'transformer' }), { seed: 1 });
    expect(t.numParams()).toBe(12_584_960);
    t.dispose();
  });

  it.each([
    ['tiny grassmann', preset('tiny')],
    [
      'tiny grassmann pre multi',
      preset('tiny', {
        norm: 'pre',
        offsets: [
          [1, 2, 3],
          [4, 5],
        ],
      }),
    ],
    ['tiny transformer', preset('tiny', { kind: 'transformer', attention: 'ea', norm: 'pre' })],
    [
      'odd sizes',
      preset('tiny', {
        vocabSize: 37,
        dModel: 12,
        r: 5,
        dFF: 20,
        nHeads: 3,
        maxLen: 9,
        nLayers: 3,
        offsets: [[1], [2], [3]],
      }),
    ],
  ])('%s: countParams equals the built model', async (_n, config) => {
    await useBackend('cpu');
    for (const kind of ['grassmann', 'transformer'] as const) {
      const c = { ...config, kind };
      const m = createModel(c);
      expect(m.numParams()).toBe(countParams(c));
      expect(m.trainableVariables().reduce((n, v) => n + v.size, 0)).toBe(countParams(c));
      m.dispose();
    }
  });

  it('presets and offset schedules', () => {
    expect(PRESETS['paper-6l'].offsets).toEqual([[1], [2], [4], [8], [12], [16]]);
    expect(PRESETS['paper-6l-multi'].offsets).toEqual(Array(6).fill([1, 2, 4, 8, 12, 16]));
    expect(PRESETS['paper-12l'].offsets.flat()).toEqual([1, 1, 2, 2, 4, 4, 8, 8, 12, 12, 16, 16]);
    expect(PRESETS['paper-12l'].maxLen).toBe(256);
    expect(offsetSchedule([1, 2], 3, 'per-layer')).toEqual([[1], [2], [1]]);
    expect(offsetSchedule([1, 2], 2, 'all')).toEqual([
      [1, 2],
      [1, 2],
    ]);
    const p = preset('paper-6l', { kind: 'transformer', attention: 'ea' });
    expect(p.attention).toBe('ea');
    expect(PRESETS['paper-6l'].kind).toBe('grassmann'); // overrides do not mutate the preset
  });

  it('validateModelConfig names the bad field', () => {
    const good = preset('tiny');
    const bad = (patch: Record<string, unknown>): unknown => ({ ...good, ...patch });
    expect(() => validateModelConfig(bad({ dModel: 0 }))).toThrow(/ModelConfig\.dModel/);
    expect(() => validateModelConfig(bad({ kind: 'rnn' }))).toThrow(/ModelConfig\.kind/);
    expect(() => validateModelConfig(bad({ offsets: [[1]] }))).toThrow(/ModelConfig\.offsets.*2 arrays/);
    expect(() => validateModelConfig(bad({ offsets: [[1], [0]] }))).toThrow(/ModelConfig\.offsets: layer 1/);
    expect(() => validateModelConfig(bad({ dropout: 1 }))).toThrow(/ModelConfig\.dropout/);
    expect(() => validateModelConfig(bad({ eps: 0 }))).toThrow(/ModelConfig\.eps/);
    expect(() => validateModelConfig(bad({ kind: 'transformer', nHeads: 3 }))).toThrow(/ModelConfig\.nHeads/);
    expect(() => validateModelConfig(bad({ norm: undefined }))).toThrow(ModelConfigError);
    expect(validateModelConfig(good)).toEqual(good);
  });

  it('refuses sizes whose weights no tensor can hold, before anything is allocated', () => {
    const good = preset('tiny', { vocabSize: 30522 });
    expect(() => validateModelConfig({ ...good, dModel: 1e6, dFF: 64 })).toThrow(
      'ModelConfig.dModel: the token embedding [30522, 1000000] would have 3.05e+10 entries, more than one tensor can hold',
    );
    expect(() => validateModelConfig({ ...good, maxLen: 1e9 })).toThrow(/ModelConfig\.maxLen: the positional table/);
    expect(() => validateModelConfig({ ...good, r: 100_000 })).toThrow(/ModelConfig\.r: the Plücker projection/);
    expect(validateModelConfig({ ...good, maxLen: 4096 }).maxLen).toBe(4096);
  });

  it('a partial config: kind plus what differs from MODEL_DEFAULTS; fields of the other kind neither needed nor kept', async () => {
    await useBackend('cpu');
    const g = validateModelConfig({ kind: 'grassmann' });
    expect(g).toEqual({ kind: 'grassmann', ...MODEL_DEFAULTS, attention: undefined, nHeads: undefined });
    expect(Object.keys(g)).not.toContain('attention');
    expect(Object.keys(g)).not.toContain('nHeads');
    const t = validateModelConfig({ kind: 'transformer', attention: 'ea' });
    expect(t).toMatchObject({ kind: 'transformer', attention: 'ea', nHeads: 4, dModel: 256, dropout: 0.1 });
    expect(Object.keys(t).sort()).toEqual([
      'attention',
      'dFF',
      'dModel',
      'dropout',
      'eps',
      'kind',
      'maxLen',
      'nHeads',
      'nLayers',
      'norm',
      'vocabSize',
    ]);
    // defaults build the same models as the paper-6l preset
    expect(g).toEqual(preset('paper-6l'));
    expect(countParams({ kind: 'grassmann' })).toBe(12_606_656);
    expect(countParams({ kind: 'transformer', attention: 'ea' })).toBe(12_584_960);
    const paperG = createModel({ kind: 'grassmann' }, { seed: 1 });
    const paperT = createModel({ kind: 'transformer', attention: 'ea' }, { seed: 1 });
    expect(paperG.numParams()).toBe(12_606_656);
    expect(paperT.numParams()).toBe(12_584_960);
    paperG.dispose();
    paperT.dispose();
    // offsets follow nLayers when not given: one offset per layer from the paper's schedule
    expect(validateModelConfig({ kind: 'grassmann', nLayers: 8 })).toMatchObject({
      offsets: [[1], [2], [4], [8], [12], [16], [1], [2]],
    });
    const small = { vocabSize: 20, dModel: 8, dFF: 16, maxLen: 6, nLayers: 2 };
    const gm = createModel({ kind: 'grassmann', ...small, r: 3, offsets: [[1], [2]] }, { seed: 3 });
    const tm = createModel({ kind: 'transformer', attention: 'ea', ...small, nHeads: 2 }, { seed: 3 });
    expect(gm).toBeInstanceOf(GrassmannLM);
    expect(tm).toBeInstanceOf(TransformerLM);
    expect((tm.config as { attention?: string }).attention).toBe('ea');
    expect('r' in tm.config).toBe(false);
    // an old checkpoint's config stores every field: the other kind's fields are accepted, kept (so the file
    // re-saves byte for byte) and ignored; a preset (a size, with both kinds' fields) keeps only the kind's
    const old = { ...PRESETS.tiny, kind: 'transformer', attention: 'dpa', r: 4, offsets: [[1], [2]] };
    expect(validateModelConfig(old)).toMatchObject({ kind: 'transformer', r: 4, nHeads: 2 });
    expect(preset('tiny', { kind: 'transformer' })).not.toHaveProperty('r');
    expect(preset('tiny')).not.toHaveProperty('nHeads');
    // same weights, same logits: a partial config and the full one build identical models
    const full = createModel({ ...PRESETS.tiny, offsets: [[1], [2]] }, { seed: 9 });
    const part = createModel(
      { kind: 'grassmann', vocabSize: 64, dModel: 16, nLayers: 2, dFF: 64, maxLen: 16, r: 4, offsets: [[1], [2]] },
      { seed: 9 },
    );
    const ids = tf.tensor2d([[1, 2, 3]], [1, 3], 'int32');
    expect(values(part.apply(ids))).toEqual(values(full.apply(ids)));
    // unknown fields are refused by name
    expect(() => validateModelConfig({ kind: 'grassmann', heads: 4 })).toThrow(
      /ModelConfig\.heads: unknown field; a model config has kind, /,
    );
    expect(() => createModel({ kind: 'transformer', attention: 'xa' } as never)).toThrow(
      /ModelConfig\.attention: must be one of 'dpa', 'ea', got "xa"/,
    );
    for (const m of [gm, tm, full, part]) m.dispose();
  });
});

describe('models', () => {
  it('createModel returns the class of a literal kind, and the union for a config whose kind is not known', async () => {
    await useBackend('cpu');
    const small = { nLayers: 1, dModel: 8, vocabSize: 16 } as const;
    const g = createModel({ kind: 'grassmann', r: 4, ...small });
    const t = createModel({ kind: 'transformer', attention: 'ea', nHeads: 2, ...small });
    const c: ModelConfig = preset('tiny');
    const either = createModel(c);
    expectTypeOf(g).toEqualTypeOf<GrassmannLM>(); // checked by tsc (pnpm typecheck), not at run time
    expectTypeOf(t).toEqualTypeOf<TransformerLM>();
    expectTypeOf(either).toEqualTypeOf<GrassmannLM | TransformerLM>();
    expect(g).toBeInstanceOf(GrassmannLM);
    expect(t).toBeInstanceOf(TransformerLM);
    expect(either).toBeInstanceOf(GrassmannLM);
    for (const m of [g, t, either]) m.dispose();
  });

  it('one seed gives identical models; logits have shape [B, L, V]', async () => {
    await useBackend('cpu');
    const c = preset('tiny');
    const a = createModel(c, { seed: 42 });
    const b = createModel(c, { seed: 42 });
    const other = createModel(c, { seed: 43 });
    const ids = tokenIds(2, 10, c.vocabSize);
    const la = a.apply(ids);
    expect(la.shape).toEqual([2, 10, c.vocabSize]);
    expect(values(la)).toEqual(values(b.forward(ids)));
    expect(values(la)).not.toEqual(values(other.apply(ids)));
    expect(() => a.apply(tokenIds(1, 17, 64))).toThrow(/maxLen = 16/);
    expect(() => a.apply(tf.zeros<tf.Rank.R2>([1, 4]))).toThrow(/int32/);
    // ids are checked once where they enter (no device read in the forward pass)
    expect(() => checkTokenIds([1, 64], c.vocabSize)).toThrow(
      /token id 64 at flat position 1 is outside \[0, vocabSize = 64\)/,
    );
    expect(() => checkTokenIds(Int32Array.from([3, -1]), c.vocabSize)).toThrow(/token id -1 at flat position 1/);
    expect(() => checkTokenIds([0, 63], c.vocabSize)).not.toThrow();
    for (const m of [a, b, other]) m.dispose();
  });

  it.each(['grassmann', 'transformer'] as const)('%s: every seed is honoured, 0 included', async (kind) => {
    await useBackend('cpu');
    const c = preset('tiny', { kind });
    const ids = tokenIds(1, 8, c.vocabSize);
    // tfjs takes a 0 seed as "no seed" (seed ? seed : Math.random()); the models must not.
    const models = [0, 0, 1, -100, -100].map((seed) => createModel(c, { seed }));
    const [zero, zeroAgain, one, minus, minusAgain] = models.map((m) => values(m.apply(ids)));
    expect(zero).toEqual(zeroAgain);
    expect(zero).not.toEqual(one);
    expect(minus).toEqual(minusAgain); // its first block's seed is −100 + 100 = 0
    expect(tfjsSeed(0)).not.toBe(0);
    expect(tfjsSeed(undefined)).toBeUndefined();
    expect(tfjsSeed(5, 2)).toBe(7);
    for (const m of models) m.dispose();
  });

  it.each(['grassmann', 'transformer'] as const)(
    '%s: stateDict has PyTorch names and layouts and round-trips',
    async (kind) => {
      await useBackend('cpu');
      const c = preset('tiny', { kind, norm: 'pre' });
      const [d, r, V, L, dFF] = [c.dModel, c.kind === 'grassmann' ? c.r : 0, c.vocabSize, c.maxLen, c.dFF];
      const m = createModel(c, { seed: 1 });
      const sd = m.stateDict();
      const shapes = Object.fromEntries([...sd].map(([k, t]) => [k, t.shape]));
      expect(shapes['tok_emb.weight']).toEqual([V, d]);
      expect(shapes['pos_emb.weight']).toEqual([L, d]);
      expect(shapes['ln_f.weight']).toEqual([d]);
      expect(shapes['blocks.1.ffn.fc1.weight']).toEqual([dFF, d]);
      expect(shapes['blocks.1.ffn.fc2.weight']).toEqual([d, dFF]);
      expect(shapes['blocks.0.ln2.bias']).toEqual([d]);
      if (kind === 'grassmann') {
        expect(shapes['blocks.0.mixer.w_red.weight']).toEqual([r, d]);
        expect(shapes['blocks.0.mixer.w_plu.weight']).toEqual([d, (r * (r - 1)) / 2]);
        expect(shapes['blocks.0.mixer.w_gate.weight']).toEqual([d, 2 * d]);
      } else {
        expect(shapes['blocks.0.mixer.qkv.weight']).toEqual([3 * d, d]);
        expect(shapes['blocks.0.mixer.qkv.bias']).toEqual([3 * d]);
        expect(shapes['blocks.0.mixer.proj.weight']).toEqual([d, d]);
      }
      expect(sd.size).toBe(m.trainableVariables().length);
      // A model with other weights computes the same logits once the state dict is loaded.
      const ids = tokenIds(1, 8, V);
      const before = values(m.apply(ids));
      const fresh = createModel(c, { seed: 99 });
      expect(values(fresh.apply(ids))).not.toEqual(before);
      fresh.loadStateDict(sd);
      expect(values(fresh.apply(ids))).toEqual(before);
      // Errors name the tensor and both shapes.
      const missing = new Map(sd);
      missing.delete('blocks.1.ln1.weight');
      expect(() => fresh.loadStateDict(missing)).toThrow(/missing 'blocks\.1\.ln1\.weight'/);
      const wrong = new Map(sd);
      wrong.set('blocks.0.ffn.fc1.weight', tf.zeros([d, dFF]));
      expect(() => fresh.loadStateDict(wrong)).toThrow(
        new StateDictError(`'blocks.0.ffn.fc1.weight' has shape [${d}, ${dFF}], expected [${dFF}, ${d}]`),
      );
      const extra = new Map(sd);
      extra.set('head.weight', tf.zeros([V, d]));
      expect(() => fresh.loadStateDict(extra)).toThrow(/unexpected tensor 'head\.weight'/);
      const int = new Map(sd);
      int.set('tok_emb.weight', tf.zeros([V, d], 'int32'));
      expect(() => fresh.loadStateDict(int)).toThrow(/dtype int32/);
      for (const t of sd.values()) t.dispose();
      m.dispose();
      fresh.dispose();
    },
  );

  it('stateDict linear layout is nn.Linear [out, in]: w_red row k reduces h to z_k', async () => {
    await useBackend('cpu');
    const c = preset('tiny', { nLayers: 1, offsets: [[1]] });
    const m = createModel(c, { seed: 5 });
    const sd = m.stateDict();
    const wRed = sd.get('blocks.0.mixer.w_red.weight') as tf.Tensor2D; // [r, d]
    // [d, r]
    const internal = m.trainableVariables().find((v) => v.shape[0] === c.dModel && v.shape[1] === c.r) as tf.Variable;
    expect(values(wRed)).toEqual(values(tf.transpose(internal)));
    m.dispose();
  });
});

describe.each(['cpu', 'wasm'] as const)('training on %s', (backend) => {
  const configs: Array<[string, ModelConfig]> = [
    ['grassmann', preset('tiny')],
    ['transformer dpa', preset('tiny', { kind: 'transformer', attention: 'dpa' })],
    ['transformer ea', preset('tiny', { kind: 'transformer', attention: 'ea', norm: 'pre' })],
  ];
  it.each(configs)('%s: 20 Adam steps lower the loss and leak no tensors', async (_n, config) => {
    await useBackend(backend);
    const model = createModel(config, { seed: 2 });
    const optimizer = tf.train.adam(3e-3);
    const ids = tokenIds(4, 12, config.vocabSize, 9);
    const targets = tokenIds(4, 12, config.vocabSize, 10);
    const losses: number[] = [];
    let afterFirst = 0;
    for (let step = 0; step < 20; step++) {
      const loss = optimizer.minimize(
        () => lmLoss(model.apply(ids, { training: true }), targets),
        true,
        model.trainableVariables(),
      );
      losses.push((loss as tf.Scalar).dataSync()[0] as number);
      loss?.dispose();
      if (step === 0) afterFirst = tf.memory().numTensors; // Adam's slots exist from here on
    }
    expect(tf.memory().numTensors).toBe(afterFirst);
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(losses[19] as number).toBeLessThan(losses[0] as number);
    optimizer.dispose();
    model.dispose();
  });
});

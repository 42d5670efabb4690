// The stored JSON of configs and layer configs, pinned: written from the build before the option table existed,
// so that config.json, checkpoints and layer configs stay byte for byte what they were.
import { describe, expect, it } from 'vitest';
import {
  CausalGrassmannMixing,
  countParams,
  GrassmannBlock,
  PRESETS,
  TransformerBlock,
  validateModelConfig,
  type ModelConfigInput,
} from '@grassflow/gpu-layers';

/** [input, stored JSON of validateModelConfig(input), countParams(input)] as the build before the table gave. */
const CONFIGS: Record<string, [ModelConfigInput, string, number]> = {
  grassmannDefault: [
    { kind: 'grassmann' },
    '{"kind":"grassmann","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"r":32,"offsets":[[1],[2],[4],[8],[12],[16]],"eps":0.000001,"norm":"post","dropout":0.1}',
    12606656,
  ],
  transformerDefault: [
    { kind: 'transformer' },
    '{"kind":"transformer","attention":"dpa","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1}',
    12584960,
  ],
  tinyAblation: [
    { ...PRESETS.tiny, kind: 'grassmann', gate: 'additive', dropoutAt: 'branch', mixerNorm: true, norm: 'pre' },
    '{"kind":"grassmann","attention":"dpa","vocabSize":64,"dModel":16,"nLayers":2,"dFF":64,"maxLen":16,"r":4,"offsets":[[1],[2]],"eps":0.000001,"nHeads":2,"norm":"pre","dropout":0.1,"gate":"additive","dropoutAt":"branch","mixerNorm":true}',
    7176,
  ],
  atDefaultsLeftOut: [
    { kind: 'grassmann', gate: 'blend', dropoutAt: 'stream', mixerNorm: false, head: 'tied' },
    '{"kind":"grassmann","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"r":32,"offsets":[[1],[2],[4],[8],[12],[16]],"eps":0.000001,"norm":"post","dropout":0.1}',
    12606656,
  ],
  transformerDropoutAt: [
    { kind: 'transformer', dropoutAt: 'stream' },
    '{"kind":"transformer","attention":"dpa","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1,"dropoutAt":"stream"}',
    12584960,
  ],
  transformerDropoutAtDefaultLeftOut: [
    { kind: 'transformer', dropoutAt: 'branch' },
    '{"kind":"transformer","attention":"dpa","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1}',
    12584960,
  ],
  adaptive: [
    { kind: 'grassmann', nLayers: 3, head: 'adaptive' },
    '{"kind":"grassmann","vocabSize":30522,"dModel":256,"nLayers":3,"dFF":1024,"maxLen":128,"r":32,"offsets":[[1],[2],[4]],"eps":0.000001,"norm":"post","dropout":0.1,"head":"adaptive","cutoffs":[2000,10000]}',
    11599872,
  ],
  adaptiveCutoffs: [
    { kind: 'transformer', attention: 'ea', eaEps: 'relative', head: 'adaptive', cutoffs: [100, 5000] },
    '{"kind":"transformer","attention":"ea","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1,"head":"adaptive","cutoffs":[100,5000],"eaEps":"relative"}',
    13353504,
  ],
  oldFullGrassmann: [
    { ...PRESETS['paper-6l'], kind: 'grassmann' },
    '{"kind":"grassmann","attention":"dpa","vocabSize":30522,"dModel":256,"nLayers":6,"dFF":1024,"maxLen":128,"r":32,"offsets":[[1],[2],[4],[8],[12],[16]],"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1}',
    12606656,
  ],
  oldFullTransformer: [
    { ...PRESETS['paper-12l'], kind: 'transformer', attention: 'ea', eaEps: 'absolute' },
    '{"kind":"transformer","attention":"ea","vocabSize":30522,"dModel":256,"nLayers":12,"dFF":1024,"maxLen":256,"r":32,"offsets":[[1],[1],[2],[2],[4],[4],[8],[8],[12],[12],[16],[16]],"eps":0.000001,"nHeads":4,"norm":"post","dropout":0.1}',
    17356288,
  ],
  reordered: [
    { mixerNorm: true, dropout: 0, gate: 'additive', vocabSize: 100, kind: 'grassmann', r: 4, dModel: 8, dFF: 16 },
    '{"kind":"grassmann","vocabSize":100,"dModel":8,"nLayers":6,"dFF":16,"maxLen":128,"r":4,"offsets":[[1],[2],[4],[8],[12],[16]],"eps":0.000001,"norm":"post","dropout":0,"gate":"additive","mixerNorm":true}',
    5160,
  ],
};

/** Layer configs (getConfig, what a tfjs model.json stores) as the build before the table gave. */
const LAYERS: Record<string, [() => { getConfig(): object }, string]> = {
  mixingDefault: [
    () => new CausalGrassmannMixing({ name: 'm', r: 4, offsets: [1, 2] }),
    '{"name":"m","trainable":true,"r":4,"offsets":[1,2],"eps":0.000001,"direction":"causal"}',
  ],
  mixingOptions: [
    () => new CausalGrassmannMixing({ name: 'm', r: 4, offsets: [1, 2], gate: 'additive', mixerNorm: true, seed: 3 }),
    '{"name":"m","trainable":true,"r":4,"offsets":[1,2],"eps":0.000001,"direction":"causal","gate":"additive","mixerNorm":true,"seed":3}',
  ],
  blockDefault: [
    () => new GrassmannBlock({ name: 'b', r: 4, offsets: [1], dFF: 16 }),
    '{"name":"b","trainable":true,"r":4,"offsets":[1],"eps":0.000001,"direction":"causal","dFF":16,"norm":"post","dropout":0.1}',
  ],
  blockOptions: [
    () =>
      new GrassmannBlock({
        name: 'b',
        r: 4,
        offsets: [1],
        dFF: 16,
        gate: 'additive',
        dropoutAt: 'branch',
        mixerNorm: true,
        norm: 'pre',
      }),
    '{"name":"b","trainable":true,"r":4,"offsets":[1],"eps":0.000001,"direction":"causal","gate":"additive","dropoutAt":"branch","mixerNorm":true,"dFF":16,"norm":"pre","dropout":0.1}',
  ],
  transformerDefault: [
    () => new TransformerBlock({ name: 't', nHeads: 2, dFF: 16 }),
    '{"name":"t","trainable":true,"nHeads":2,"attention":"dpa","eps":0.000001,"dFF":16,"norm":"post","dropout":0.1}',
  ],
  transformerOptions: [
    () => new TransformerBlock({ name: 't', nHeads: 2, dFF: 16, attention: 'ea', eaEps: 'relative' }),
    '{"name":"t","trainable":true,"nHeads":2,"attention":"ea","eps":0.000001,"eaEps":"relative","dFF":16,"norm":"post","dropout":0.1}',
  ],
};

describe('stored configs are unchanged', () => {
  it.each(Object.entries(CONFIGS))('%s: validateModelConfig stores the same JSON and counts the same', (_, c) => {
    const [input, stored, params] = c;
    expect(JSON.stringify(validateModelConfig(input))).toBe(stored);
    expect(countParams(input)).toBe(params);
    // a stored config loads to itself (checkpoints re-save byte for byte)
    expect(JSON.stringify(validateModelConfig(JSON.parse(stored)))).toBe(stored);
  });

  it.each(Object.entries(LAYERS))('%s: getConfig is the same', (_, [make, stored]) => {
    expect(JSON.stringify(make().getConfig())).toBe(stored);
  });
});

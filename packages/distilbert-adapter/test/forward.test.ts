// The encoder against an independent float64 computation of the same network (HF modeling_distilbert.py).
import * as tf from '@tensorflow/tfjs-core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDistilBert, type DistilBertEncoder } from '@grassflow/distilbert-adapter';
import { maxAbsDiff, referenceForward } from './helpers/reference.js';
import { flat, makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { writeTinyModel, type RefWeight, type TinyModel } from './helpers/tiny-model.js';

// Three examples of 7 tokens; the second and third end in padding (id 0, mask 0).
const IDS = [
  [2, 6, 8, 9, 5, 11, 3],
  [2, 7, 14, 23, 3, 0, 0],
  [2, 32, 33, 3, 0, 0, 0],
];
const MASK = [
  [1, 1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 0, 0],
  [1, 1, 1, 1, 0, 0, 0],
];

let root: string;
let tiny: TinyModel;
let encoder: DistilBertEncoder;

function run(enc: DistilBertEncoder, ids = IDS, mask = MASK): Float32Array {
  const idsT = tf.tensor2d(ids, undefined, 'int32');
  const maskT = tf.tensor2d(mask, undefined, 'int32');
  const out = enc.forward(idsT, maskT);
  expect(out.shape).toEqual([ids.length, (ids[0] as number[]).length, 32]);
  const v = out.dataSync() as Float32Array;
  tf.dispose([idsT, maskT, out]);
  return v;
}

beforeAll(async () => {
  await useBackend('cpu');
  root = await makeTemp('forward');
  tiny = await writeTinyModel(join(root, 'tiny'));
  encoder = await loadDistilBert(tiny.dir);
});

afterAll(async () => {
  encoder.dispose();
  await removeTemp(root);
});

describe('forward matches the float64 reference', () => {
  it('with the distilbert. prefix, padding masks and MLM head tensors ignored', () => {
    const ref = referenceForward(tiny.weights, tiny.config, IDS, MASK);
    expect(maxAbsDiff(run(encoder), ref)).toBeLessThan(1e-5);
    expect(encoder.info.prefix).toBe('distilbert.');
    expect(encoder.info.source).toBe('folder');
    expect([...encoder.info.ignoredTensors].sort()).toEqual([
      'vocab_layer_norm.bias',
      'vocab_layer_norm.weight',
      'vocab_projector.bias',
      'vocab_transform.bias',
      'vocab_transform.weight',
    ]);
    expect(encoder.config).toMatchObject({
      dim: 32,
      nLayers: 2,
      nHeads: 2,
      hiddenDim: 64,
      vocabSize: 40,
      maxPositionEmbeddings: 64,
      activation: 'gelu',
      layerNormEps: 1e-12,
    });
  });

  it('without the prefix (a DistilBertModel checkpoint) and with F16 weights', async () => {
    const bare = await writeTinyModel(join(root, 'bare'), { prefix: false, heads: false });
    const half = await writeTinyModel(join(root, 'half'), { dtype: 'F16' });
    const ref = referenceForward(tiny.weights, tiny.config, IDS, MASK); // same seed: same values
    for (const dir of [bare.dir, half.dir]) {
      const enc = await loadDistilBert(dir);
      expect(maxAbsDiff(run(enc), ref)).toBeLessThan(1e-5);
      enc.dispose();
    }
    const h = await loadDistilBert(half.dir);
    expect(h.info.widened).toEqual({ F16: 36 });
    h.dispose();
  });

  it('BF16 weights (widened exactly; the reference uses the rounded values)', async () => {
    const m = await writeTinyModel(join(root, 'bf16'), { dtype: 'BF16', seed: 9 });
    const enc = await loadDistilBert(m.dir);
    expect(enc.info.widened).toEqual({ BF16: 36 });
    expect(maxAbsDiff(run(enc), referenceForward(m.weights, m.config, IDS, MASK))).toBeLessThan(1e-5);
    enc.dispose();
  });

  it('relu activation', async () => {
    const m = await writeTinyModel(join(root, 'relu'), { config: { activation: 'relu' }, seed: 5 });
    const enc = await loadDistilBert(m.dir);
    expect(
      maxAbsDiff(run(enc), referenceForward(m.weights, { ...m.config, activation: 'relu' }, IDS, MASK)),
    ).toBeLessThan(1e-5);
    // and it differs from the gelu network with the same weights
    const g = await writeTinyModel(join(root, 'relu-gelu'), { seed: 5 });
    const encG = await loadDistilBert(g.dir);
    expect(maxAbsDiff(run(enc), run(encG))).toBeGreaterThan(1e-3);
    enc.dispose();
    encG.dispose();
  });

  it('sinusoidal_pos_embds: the fixed table of HF create_sinusoidal_embeddings when the file lacks it', async () => {
    const m = await writeTinyModel(join(root, 'sin'), {
      config: { sinusoidal_pos_embds: true },
      edit: (t) => t.delete('distilbert.embeddings.position_embeddings.weight'),
    });
    // np: position_enc[pos, j] = pos / 10000^(2*(j//2)/dim); out[:, 0::2] = sin, out[:, 1::2] = cos
    const P = 64;
    const d = 32;
    const table: RefWeight = { shape: [P, d], data: new Float64Array(P * d) };
    for (let pos = 0; pos < P; pos++) {
      for (let j = 0; j < d; j++) {
        const enc = pos / 10000 ** ((2 * Math.floor(j / 2)) / d);
        table.data[pos * d + j] = j % 2 === 0 ? Math.sin(enc) : Math.cos(enc);
      }
    }
    const enc = await loadDistilBert(m.dir, { mode: 'trainable' });
    expect(enc.info.computedPositionTable).toBe(true);
    expect(maxAbsDiff(run(enc), referenceForward(m.weights, m.config, IDS, MASK, table))).toBeLessThan(1e-5);
    // the fixed table is not a trainable variable: 4 embedding-block + 16 per layer − 1
    expect(enc.trainableVariables()).toHaveLength(2 + 1 + 16 * 2);
    enc.dispose();
  });
});

describe('padding', () => {
  it('padded positions do not change the outputs of the real tokens', () => {
    const short = [[2, 7, 14, 23, 3]];
    const alone = run(encoder, short, [[1, 1, 1, 1, 1]]);
    const padded = run(encoder, [[2, 7, 14, 23, 3, 9, 11, 5, 0]], [[1, 1, 1, 1, 1, 0, 0, 0, 0]]);
    expect(maxAbsDiff(alone, padded.subarray(0, 5 * 32))).toBeLessThan(1e-6);
    // and the padded run is not trivially the same network: unmasking changes the outputs
    const unmasked = run(encoder, [[2, 7, 14, 23, 3, 9, 11, 5, 0]], [[1, 1, 1, 1, 1, 1, 1, 1, 1]]);
    expect(maxAbsDiff(alone, unmasked.subarray(0, 5 * 32))).toBeGreaterThan(1e-3);
  });

  it('a fully masked row gets uniform attention, as masked_fill with finfo.min gives in HF', () => {
    const ids = [[2, 6, 8, 3]];
    const mask = [[0, 0, 0, 0]];
    expect(maxAbsDiff(run(encoder, ids, mask), referenceForward(tiny.weights, tiny.config, ids, mask))).toBeLessThan(
      1e-5,
    );
  });
});

describe('inputs', () => {
  it('Int32Array + shape (packBatch layout) equals tensors; the mask defaults to all ones', () => {
    const fromArrays = encoder.forward({ data: flat(IDS), shape: [3, 7] }, { data: flat(MASK), shape: [3, 7] });
    expect(maxAbsDiff(fromArrays.dataSync(), run(encoder))).toBe(0);
    fromArrays.dispose();
    const noMask = encoder.forward({ data: flat([IDS[0] as number[]]), shape: [1, 7] });
    expect(maxAbsDiff(noMask.dataSync(), run(encoder, [IDS[0] as number[]], [MASK[0] as number[]]))).toBe(0);
    noMask.dispose();
  });

  it('the tokenizer comes from vocab.txt', async () => {
    const e = await encoder.tokenizer.encode('A man is playing the guitar.');
    expect(Array.from(e.ids)).toEqual([2, 5, 6, 8, 9, 10, 11, 23, 3]);
    const out = encoder.forward(
      { data: e.ids, shape: [1, e.ids.length] },
      { data: e.attentionMask, shape: [1, e.ids.length] },
    );
    expect(out.shape).toEqual([1, 9, 32]);
    out.dispose();
  });

  it('bad inputs fail with INVALID_INPUT saying what is wrong', () => {
    const long = { data: new Int32Array(65).fill(5), shape: [1, 65] as const };
    expect(() => encoder.forward(long)).toThrow(/65 tokens per example, more than max_position_embeddings = 64/);
    expect(() => encoder.forward({ data: Int32Array.from([2, 40, 3]), shape: [1, 3] })).toThrow(
      /holds 40 at flat index 1; token ids must be integers in \[0, 40\)/,
    );
    expect(() => encoder.forward({ data: Int32Array.from([2, -1]), shape: [1, 2] })).toThrow(/holds -1/);
    expect(() =>
      encoder.forward(
        { data: Int32Array.from([2, 5, 3]), shape: [1, 3] },
        { data: Int32Array.from([1, 1]), shape: [1, 2] },
      ),
    ).toThrow(/attentionMask has shape \[1, 2\] but inputIds has \[1, 3\]/);
    expect(() =>
      encoder.forward(
        { data: Int32Array.from([2, 5, 3]), shape: [1, 3] },
        { data: Int32Array.from([1, 2, 1]), shape: [1, 3] },
      ),
    ).toThrow(/0 \(padding\) or 1/);
    const float = tf.tensor2d([[2, 5.5]]);
    expect(() => encoder.forward(float)).toThrow(/must hold integers/);
    float.dispose();
    const rank3 = tf.zeros([1, 2, 3], 'int32');
    expect(() => encoder.forward(rank3 as unknown as tf.Tensor2D)).toThrow(/shape \[B, T\]/);
    rank3.dispose();
  });
});

describe('memory', () => {
  it('no tensor survives a forward call except its output', () => {
    run(encoder); // warm-up (kernels, scalars)
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) run(encoder);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('dispose frees every weight, and a disposed encoder says so', async () => {
    const before = tf.memory().numTensors;
    const enc = await loadDistilBert(tiny.dir);
    expect(tf.memory().numTensors).toBe(before + 4 + 16 * 2);
    enc.dispose();
    expect(tf.memory().numTensors).toBe(before);
    expect(() => enc.forward({ data: Int32Array.from([2, 3]), shape: [1, 2] })).toThrow(/disposed/);
  });
});

describe('tokenizer files', () => {
  it('tokenizer.json instead of vocab.txt; tokenizer_config.json do_lower_case: false', async () => {
    const { rm, writeFile } = await import('node:fs/promises');
    const m = await writeTinyModel(join(root, 'tokjson'));
    encoder.tokenizer.saveTokenizerJson(join(m.dir, 'tokenizer.json'));
    await rm(join(m.dir, 'vocab.txt'));
    const fromJson = await loadDistilBert(m.dir);
    expect(Array.from((await fromJson.tokenizer.encode('A man is playing the guitar.')).ids)).toEqual([
      2, 5, 6, 8, 9, 10, 11, 23, 3,
    ]);
    fromJson.dispose();

    const cased = await writeTinyModel(join(root, 'cased'));
    await writeFile(join(cased.dir, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: false }));
    const enc = await loadDistilBert(cased.dir);
    // 'A' is not in the lowercase vocab: [UNK]
    expect(Array.from((await enc.tokenizer.encode('A man')).ids)).toEqual([2, 1, 6, 3]);
    enc.dispose();
    const forced = await loadDistilBert(cased.dir, { lowercase: true });
    expect(Array.from((await forced.tokenizer.encode('A man')).ids)).toEqual([2, 5, 6, 3]);
    forced.dispose();
  });
});

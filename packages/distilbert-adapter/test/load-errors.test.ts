// Folders, configs and weights that do not fit: each fails with a typed error naming the file, field or tensor.
import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistilBertError, loadDistilBert, parseDistilBertConfig } from '@grassflow/distilbert-adapter';
import { makeTemp, removeTemp, useBackend } from './helpers/setup.js';
import { TINY_CONFIG, writeTinyModel, type TinyModelOptions } from './helpers/tiny-model.js';

let root: string;
let n = 0;

beforeAll(async () => {
  await useBackend('cpu');
  root = await makeTemp('errors');
});
afterAll(() => removeTemp(root));

async function loadError(opts: TinyModelOptions): Promise<DistilBertError> {
  const m = await writeTinyModel(join(root, `m${n++}`), opts);
  const err = await loadDistilBert(m.dir).then(
    (enc) => {
      enc.dispose();
      throw new Error('expected the load to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DistilBertError);
  return err as DistilBertError;
}

describe('tensor names and shapes', () => {
  it('a missing tensor is named', async () => {
    const err = await loadError({ edit: (t) => t.delete('distilbert.transformer.layer.1.ffn.lin2.bias') });
    expect(err.code).toBe('TENSOR_MISSING');
    expect(err.message).toContain("tensor 'distilbert.transformer.layer.1.ffn.lin2.bias' is missing");
  });

  it('a wrong shape is named, with the shape config.json implies', async () => {
    const err = await loadError({
      edit: (t) =>
        t.set('distilbert.transformer.layer.0.attention.k_lin.weight', {
          shape: [32, 16],
          data: new Float64Array(512),
        }),
    });
    expect(err.code).toBe('TENSOR_SHAPE');
    expect(err.message).toContain(
      "tensor 'distilbert.transformer.layer.0.attention.k_lin.weight' has shape [32, 16] but config.json implies [dim, dim] = [32, 32]",
    );
  });

  it('config.json inconsistent with the tensors: hidden_dim, vocab_size, n_layers (both ways), max positions', async () => {
    const hidden = await loadError({ config: { hidden_dim: 48 }, shapeConfig: {} });
    expect(hidden.code).toBe('TENSOR_SHAPE');
    expect(hidden.message).toMatch(
      /'distilbert\.transformer\.layer\.0\.ffn\.lin1\.weight' has shape \[64, 32\] but config\.json implies \[hidden_dim, dim\] = \[48, 32\]/,
    );

    const vocab = await loadError({ config: { vocab_size: 50 }, shapeConfig: {} });
    expect(vocab.message).toMatch(
      /'distilbert\.embeddings\.word_embeddings\.weight' has shape \[40, 32\] but config\.json implies \[vocab_size, dim\] = \[50, 32\]/,
    );

    const fewer = await loadError({ config: { n_layers: 1 }, shapeConfig: {} });
    expect(fewer.code).toBe('TENSOR_UNEXPECTED');
    expect(fewer.message).toMatch(
      /unexpected tensor 'distilbert\.transformer\.layer\.1\.[^']+': config\.json says n_layers=1 \(layers 0\.\.0\), but the file has layer 1/,
    );

    const more = await loadError({ config: { n_layers: 3 }, shapeConfig: {} });
    expect(more.code).toBe('TENSOR_MISSING');
    expect(more.message).toMatch(
      /tensor 'distilbert\.transformer\.layer\.2\.[^']+' is missing \(config\.json says n_layers=3/,
    );

    const pos = await loadError({ config: { max_position_embeddings: 128 }, shapeConfig: {} });
    expect(pos.message).toMatch(
      /'distilbert\.embeddings\.position_embeddings\.weight' has shape \[64, 32\] but config\.json implies \[max_position_embeddings, dim\] = \[128, 32\]/,
    );
  });

  it('an integer dtype and an unknown backbone tensor are refused', async () => {
    const dtype = await loadError({
      edit: (t) =>
        t.set('distilbert.embeddings.LayerNorm.bias', { shape: [32], data: new Float64Array(32), dtype: 'I32' }),
    });
    expect(dtype.code).toBe('TENSOR_DTYPE');
    expect(dtype.message).toContain(
      "tensor 'distilbert.embeddings.LayerNorm.bias' has dtype I32; expected a float dtype",
    );
    const odd = await loadError({
      edit: (t) =>
        t.set('distilbert.transformer.layer.0.attention.extra.weight', { shape: [1], data: new Float64Array(1) }),
    });
    expect(odd.code).toBe('TENSOR_UNEXPECTED');
    expect(odd.message).toContain(
      "'distilbert.transformer.layer.0.attention.extra.weight': it is not part of a DistilBERT encoder",
    );
  });

  it('a file without any DistilBERT backbone says so', async () => {
    const err = await loadError({ edit: (t) => t.delete('distilbert.embeddings.word_embeddings.weight') });
    expect(err.code).toBe('TENSOR_MISSING');
    expect(err.message).toContain(
      "no tensor 'distilbert.embeddings.word_embeddings.weight' (nor 'embeddings.word_embeddings.weight')",
    );
  });

  it('the tokenizer must fit vocab_size', async () => {
    const err = await loadError({ config: { vocab_size: 20 }, shapeConfig: { vocab_size: 20 } });
    expect(err.code).toBe('INVALID_CONFIG');
    expect(err.message).toMatch(/vocab_size is 20 but the tokenizer has 36 tokens/);
  });
});

describe('files', () => {
  it('pytorch_model.bin alone: how to convert it', async () => {
    const err = await loadError({ pytorchOnly: true });
    expect(err.code).toBe('PYTORCH_ONLY');
    expect(err.message).toContain('holds pytorch_model.bin but no model.safetensors');
    expect(err.message).toContain('save_file(');
    expect(err.message).toContain('safe_serialization=True');
  });

  it('a truncated or garbage model.safetensors is CORRUPT_FILE', async () => {
    const m = await writeTinyModel(join(root, 'trunc'));
    const path = join(m.dir, 'model.safetensors');
    const size = (await readFile(path)).byteLength;
    await truncate(path, size - 10);
    await expect(loadDistilBert(m.dir)).rejects.toMatchObject({ code: 'CORRUPT_FILE' });
    await writeFile(path, new Uint8Array(100).fill(7));
    await expect(loadDistilBert(m.dir)).rejects.toThrow(/is not a valid safetensors file/);
  });

  it('an incomplete folder lists what is missing; a path that is not a folder says so', async () => {
    const m = await writeTinyModel(join(root, 'novocab'));
    await rm(join(m.dir, 'vocab.txt'));
    await rm(join(m.dir, 'config.json'));
    await expect(loadDistilBert(m.dir)).rejects.toThrow(
      /not a complete DistilBERT folder: config\.json, vocab\.txt missing/,
    );
    await expect(loadDistilBert(join(root, 'nope'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(loadDistilBert('./nope/x')).rejects.toThrow(/is not a folder/);
  });

  it('the mode and featureCache options are checked', async () => {
    const m = await writeTinyModel(join(root, 'opts'));
    await expect(loadDistilBert(m.dir, { mode: 'trainable', featureCache: true })).rejects.toThrow(
      /featureCache needs mode: "frozen"/,
    );
    await expect(loadDistilBert(m.dir, { mode: 'fast' as 'frozen' })).rejects.toThrow(
      /mode must be 'frozen' or 'trainable'/,
    );
  });
});

describe('config.json', () => {
  const base = JSON.stringify(TINY_CONFIG);
  const edit = (e: Record<string, unknown>): string => JSON.stringify({ ...TINY_CONFIG, ...e });

  it('parses the fields, with HF defaults for activation, sinusoidal_pos_embds and dropouts', () => {
    const { activation: _a, sinusoidal_pos_embds: _s, dropout: _d, attention_dropout: _ad, ...rest } = TINY_CONFIG;
    expect(parseDistilBertConfig(JSON.stringify(rest))).toEqual({
      vocabSize: 40,
      dim: 32,
      nLayers: 2,
      nHeads: 2,
      hiddenDim: 64,
      maxPositionEmbeddings: 64,
      activation: 'gelu',
      sinusoidalPosEmbds: false,
      dropout: 0.1,
      attentionDropout: 0.1,
      layerNormEps: 1e-12,
    });
    expect(parseDistilBertConfig(base).dim).toBe(32);
  });

  it('rejects bad files naming the field', () => {
    expect(() => parseDistilBertConfig('{nope', 'c.json')).toThrow(/c\.json: not valid JSON/);
    const { dim: _dim, ...noDim } = TINY_CONFIG;
    expect(() => parseDistilBertConfig(JSON.stringify(noDim))).toThrow(/the field "dim" is missing/);
    expect(() => parseDistilBertConfig(edit({ n_heads: 3 }))).toThrow(/dim \(32\) must be a multiple of n_heads \(3\)/);
    expect(() => parseDistilBertConfig(edit({ hidden_dim: 1.5 }))).toThrow(
      /"hidden_dim" must be a positive integer, got 1\.5/,
    );
    expect(() => parseDistilBertConfig(edit({ activation: 'gelu_new' }))).toThrow(
      /activation "gelu_new" is not supported; supported: "gelu", "relu"/,
    );
    expect(() => parseDistilBertConfig(edit({ model_type: 'bert' }))).toThrow(
      /model_type is "bert", but this package loads DistilBERT models only/,
    );
    expect(() => parseDistilBertConfig(edit({ sinusoidal_pos_embds: 'yes' }))).toThrow(
      /"sinusoidal_pos_embds" must be true or false/,
    );
  });
});

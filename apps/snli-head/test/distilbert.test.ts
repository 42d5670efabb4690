// --backbone DIR: a tiny random DistilBERT in the Hugging Face layout, frozen, through the feature cache.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectedTensors, parseDistilBertConfig } from '@grassflow/distilbert-adapter';
import { writeSafetensorsFile, type SafetensorsTensorInput } from '@grassflow/checkpoints';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, headOf, metrics, tmp } from './helpers.js';

/** Write a DistilBERT folder (dim 32, 2 layers, 2 heads) whose vocab.txt is the BERT vocabulary of the data folder. */
async function tinyDistilBert(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const config = {
    model_type: 'distilbert',
    vocab_size: 30522,
    dim: 32,
    n_layers: 2,
    n_heads: 2,
    hidden_dim: 64,
    max_position_embeddings: 64,
    activation: 'gelu',
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'vocab.txt'), readFileSync(join(DATA_DIR as string, 'bert-vocab/vocab.txt')));
  let s = 1;
  const rand = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
  const tensors = new Map<string, SafetensorsTensorInput>();
  for (const [name, { shape }] of expectedTensors(parseDistilBertConfig(JSON.stringify(config)))) {
    const n = shape.reduce((a, b) => a * b, 1);
    const isScale = /(LayerNorm|layer_norm)\.weight$/.test(name);
    tensors.set(`distilbert.${name}`, {
      dtype: 'F32',
      shape,
      data: Float32Array.from({ length: n }, () => (isScale ? 1 : 0.1 * rand())),
    });
  }
  await writeSafetensorsFile(join(dir, 'model.safetensors'), tensors, { format: 'pt' });
}

describe.skipIf(DATA_DIR === undefined)('DistilBERT backbone', () => {
  it('trains a head on frozen features (feature cache filled) and evaluates the checkpoint', async () => {
    const dir = tmp();
    const model = join(dir, 'tiny-distilbert');
    await tinyDistilBert(model);
    const train = headOf('train_0.01', 24, dir, 'train.jsonl');
    const dev = headOf('dev', 16, dir, 'dev.jsonl');
    const cache = join(dir, 'cache');
    const env = { GRASSFLOW_CACHE_DIR: cache };
    const r = cli(
      [
        'train',
        '--head',
        'transformer',
        '--backbone',
        model,
        '--train-file',
        train,
        '--dev-file',
        dev,
        '--batch',
        '8',
        '--epochs',
        '1',
        '--log-every',
        '1',
        '--quiet',
        '--out',
        join(dir, 'run'),
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`through ${model}`);
    const cfg = JSON.parse(readFileSync(join(dir, 'run', 'config.json'), 'utf8')) as {
      model: { head: { inputDim: number }; embedding: unknown };
      params: { backbone: number };
    };
    expect(cfg.model.head.inputDim).toBe(32); // the DistilBERT width
    expect(cfg.model.embedding).toBeNull();
    expect(cfg.params.backbone).toBe(0); // frozen: nothing of the backbone is trained
    expect(metrics(join(dir, 'run')).filter((m) => m['type'] === 'train')).toHaveLength(3);
    expect(readdirSync(join(cache, 'features')).length).toBeGreaterThan(0);
    const ev = cli(['eval', '--checkpoint', join(dir, 'run'), '--file', dev], env);
    expect(ev.code, ev.stderr).toBe(0);
    expect((JSON.parse(ev.stdout) as { pairs: number }).pairs).toBe(16);
  });
});

// Benchmark: load and run a distilbert-base-sized encoder (random weights, HF layout) on the selected backend.
//
//   pnpm --filter @grassflow/distilbert-adapter bench     (GRASSFLOW_BACKEND=cpu|wasm to force one)
//
// Writes a 265 MB model.safetensors with distilbert-base-uncased's shapes to a temp folder (no download),
// then times loadDistilBert, forward() at B × T = 8 × 48 and 32 × 48 (median of 3 after a warm-up),
// and forwardCached() on hits.
import * as tf from '@tensorflow/tfjs-core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { initBackend } from '@grassflow/gpu-layers';
import { writeSafetensorsFile, type SafetensorsTensorInput } from '@grassflow/checkpoints';
import { expectedTensors, loadDistilBert, parseDistilBertConfig } from '../src/index.js';

const CONFIG = {
  model_type: 'distilbert',
  vocab_size: 30522,
  dim: 768,
  n_layers: 6,
  n_heads: 12,
  hidden_dim: 3072,
  max_position_embeddings: 512,
  activation: 'gelu',
  sinusoidal_pos_embds: false,
};

function randomValues(n: number, seed: number, scale: number, center: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = center + scale * (s / 2 ** 32 - 0.5);
  }
  return out;
}

async function writeBaseModel(dir: string): Promise<void> {
  const config = parseDistilBertConfig(JSON.stringify(CONFIG));
  const tensors = new Map<string, SafetensorsTensorInput>();
  let seed = 1;
  for (const [name, { shape }] of expectedTensors(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNormWeight = /LayerNorm\.weight|layer_norm\.weight/.test(name);
    tensors.set(`distilbert.${name}`, {
      dtype: 'F32',
      shape,
      data: randomValues(n, seed++, isNormWeight ? 0.2 : 0.07, isNormWeight ? 1 : 0),
    });
  }
  await writeSafetensorsFile(join(dir, 'model.safetensors'), tensors, { format: 'pt' });
  await writeFile(join(dir, 'config.json'), JSON.stringify(CONFIG));
  const vocab = ['[PAD]', ...Array.from({ length: 99 }, (_, i) => `[unused${i}]`), '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  while (vocab.length < 30522) vocab.push(`w${vocab.length}`);
  await writeFile(join(dir, 'vocab.txt'), vocab.join('\n') + '\n');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] as number;
}

async function main(): Promise<void> {
  const info = await initBackend();
  const dir = await mkdtemp(join(tmpdir(), 'distilbert-bench-'));
  try {
    let t0 = performance.now();
    await writeBaseModel(dir);
    console.log(
      `backend ${info.name}${info.simd === true ? ' (SIMD)' : ''}; wrote a distilbert-base-sized model in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    t0 = performance.now();
    const enc = await loadDistilBert(dir, { featureCache: join(dir, 'features') });
    console.log(
      `loadDistilBert (265 MB safetensors, SHA-256 for the feature cache identity): ${((performance.now() - t0) / 1000).toFixed(2)} s`,
    );
    const rows: string[] = ['| B × T | forward s (median of 3) | tokens/s |', '|---|---:|---:|'];
    for (const [B, T] of [
      [8, 48],
      [32, 48],
    ] as const) {
      const ids = {
        data: Int32Array.from({ length: B * T }, (_, i) => 1000 + ((i * 7919) % 29000)),
        shape: [B, T] as [number, number],
      };
      const times: number[] = [];
      for (let r = 0; r < 4; r++) {
        const s = performance.now();
        const out = enc.forward(ids);
        await out.data();
        out.dispose();
        if (r > 0) times.push((performance.now() - s) / 1000);
      }
      const m = median(times);
      rows.push(`| ${B} × ${T} | ${m.toFixed(2)} | ${Math.round((B * T) / m)} |`);
      if (B === 32) {
        const first = await enc.forwardCached(ids);
        first.lastHiddenState.dispose();
        const s = performance.now();
        const hit = await enc.forwardCached(ids);
        await hit.lastHiddenState.data();
        hit.lastHiddenState.dispose();
        rows.push(
          `| ${B} × ${T}, forwardCached (all ${hit.hits} hits) | ${((performance.now() - s) / 1000).toFixed(3)} | ${Math.round((B * T) / ((performance.now() - s) / 1000))} |`,
        );
      }
    }
    console.log(rows.join('\n'));
    console.log(`tensors alive after the runs: ${tf.memory().numTensors} (the encoder's ${4 + 16 * 6} weights)`);
    enc.dispose();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

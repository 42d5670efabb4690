// A tiny Grassmann language model end to end, as a Node ES module compiled by tsc (module nodenext): pick a backend,
// train a few steps on random token ids, save a checkpoint, load it back, and generate from the loaded model.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import {
  createModel,
  initBackend,
  lmLoss,
  loadCheckpoint,
  preset,
  sampleIds,
  saveCheckpoint,
} from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/prng';

const info = await initBackend(); // tfjs-node where installed, else WebGPU or wasm; GRASSFLOW_BACKEND=cpu forces one
const config = preset('tiny'); // 2 layers, dModel 16, a 64-token vocabulary, maxLen 16
const model = createModel(config, { seed: 0 });

// One fixed batch of random ids: the loss must fall as the model memorizes it. targets = ids shifted by one.
const rng = new Prng(1);
const batch = Array.from({ length: 4 }, () => Array.from({ length: 17 }, () => rng.nextInt(config.vocabSize)));
const ids = tf.tensor2d(
  batch.map((row) => row.slice(0, 16)),
  [4, 16],
  'int32',
);
const targets = tf.tensor2d(
  batch.map((row) => row.slice(1)),
  [4, 16],
  'int32',
);
const optimizer = tf.train.adam(1e-2);
const losses: number[] = [];
for (let step = 0; step < 20; step++) {
  const loss = optimizer.minimize(() => lmLoss(model.apply(ids, { training: true }), targets), true);
  losses.push(loss?.dataSync()[0] ?? Number.NaN);
  loss?.dispose();
}

const dir = await mkdtemp(join(tmpdir(), 'grassflow-example-'));
await saveCheckpoint(join(dir, 'ckpt'), model, { extra: { step: losses.length } });
const loaded = await loadCheckpoint(join(dir, 'ckpt')); // sizes, SHA-256s, names and shapes checked
const maxDiff = tf.tidy(() => tf.max(tf.abs(tf.sub(model.apply(ids), loaded.model.apply(ids)))).dataSync()[0]);

const generated: number[] = [];
const settings = { maxTokens: 8, temperature: 1, topK: 10 };
for await (const id of sampleIds(loaded.model, Int32Array.from(batch[0].slice(0, 4)), settings, new Prng(2)))
  generated.push(id);

// the last line is what the examples' test reads
console.log(
  JSON.stringify({
    backend: info.name,
    firstLoss: losses[0],
    lastLoss: losses.at(-1),
    step: loaded.extra['step'],
    maxDiff,
    generated,
  }),
);
ids.dispose();
targets.dispose();
loaded.model.dispose();
model.dispose();
await rm(dir, { recursive: true, force: true });

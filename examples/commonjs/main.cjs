// The node-esm example in CommonJS: plain JavaScript, type-checked by tsc (checkJs, strict). CommonJS has no
// top-level await, so the body is an async function.
const { mkdtemp, rm } = require('node:fs/promises');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const tf = require('@tensorflow/tfjs-core');
const {
  createModel,
  initBackend,
  lmLoss,
  loadCheckpoint,
  preset,
  sampleIds,
  saveCheckpoint,
} = require('@grassflow/gpu-layers');
const { Prng } = require('@grassflow/prng');

async function main() {
  const info = await initBackend();
  const config = preset('tiny');
  const model = createModel(config, { seed: 0 });
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
  /** @type {number[]} */
  const losses = [];
  for (let step = 0; step < 20; step++) {
    const loss = optimizer.minimize(() => lmLoss(model.apply(ids, { training: true }), targets), true);
    losses.push(loss?.dataSync()[0] ?? Number.NaN);
    loss?.dispose();
  }
  const dir = await mkdtemp(join(tmpdir(), 'grassflow-example-'));
  await saveCheckpoint(join(dir, 'ckpt'), model, { extra: { step: losses.length } });
  const loaded = await loadCheckpoint(join(dir, 'ckpt'));
  const maxDiff = tf.tidy(() => tf.max(tf.abs(tf.sub(model.apply(ids), loaded.model.apply(ids)))).dataSync()[0]);
  /** @type {number[]} */
  const generated = [];
  const prompt = Int32Array.from(batch[0]?.slice(0, 4) ?? []);
  for await (const id of sampleIds(loaded.model, prompt, { maxTokens: 8, temperature: 1, topK: 10 }, new Prng(2)))
    generated.push(id);
  // the same line as node-esm's (the numbers vary a little: dropout is not seeded), read by the examples' test
  const result = { backend: info.name, firstLoss: losses[0], lastLoss: losses.at(-1), step: loaded.extra['step'] };
  console.log(JSON.stringify({ ...result, maxDiff, generated }));
  tf.dispose([ids, targets]);
  loaded.model.dispose();
  model.dispose();
  await rm(dir, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});

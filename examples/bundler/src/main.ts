// Word-level tokens to a trained Grassmann LM and back to words, bundled by esbuild into one file (build.mjs).
// `./corpus` without an extension: moduleResolution bundler resolves it as esbuild does (nodenext would not).
import * as tf from '@tensorflow/tfjs-core';
import { createDecoder, createModel, initBackend, lmLoss, preset } from '@grassflow/gpu-layers';
import { WordLevelTokenizer } from '@grassflow/tokenizers';
import { CORPUS, windows } from './corpus';

await initBackend();
const tokenizer = WordLevelTokenizer.fromCorpus(CORPUS); // 10 words, <eos> and <unk>
const config = preset('tiny', { vocabSize: tokenizer.vocabSize, dropout: 0 });
const model = createModel(config, { seed: 0 });
const { inputs, targets } = windows(tokenizer.encode(CORPUS), config.maxLen, 8);
const x = tf.tensor2d(inputs, [inputs.length, config.maxLen], 'int32');
const y = tf.tensor2d(targets, [targets.length, config.maxLen], 'int32');
const optimizer = tf.train.adam(3e-2);
let loss = Number.NaN;
for (let step = 0; step < 60; step++) {
  const l = optimizer.minimize(() => lmLoss(model.apply(x, { training: true }), y), true);
  loss = l?.dataSync()[0] ?? Number.NaN;
  l?.dispose();
}

// Greedy decoding with the incremental decoder: the memorized sentence comes back.
const decoder = createDecoder(model, { batch: 1 });
const prompt = tokenizer.encodePrompt('the cat');
let logits = decoder.prime(tf.tensor2d([Array.from(prompt)], [1, prompt.length], 'int32'));
const out = Array.from(prompt);
while (out.length < 9) {
  const next = tf.tidy(() => tf.argMax(logits, -1).dataSync()[0] ?? 0);
  logits.dispose();
  out.push(next);
  logits = decoder.step([next]);
}
console.log(JSON.stringify({ loss, text: tokenizer.decode(out).trim() })); // the line the examples' test reads
tf.dispose([logits, x, y]);
decoder.dispose();
model.dispose();

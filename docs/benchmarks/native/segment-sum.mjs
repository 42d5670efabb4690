// node docs/benchmarks/native/segment-sum.mjs CHECKOUT: ms per tf.unsortedSegmentSum of [1024, 256] rows into 30,522
// segments on wasm (the paper-size embedding's gradient), median of 15 calls after 3, in a built checkout.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = resolve(process.argv[2] ?? '.');
const req = createRequire(`${dir}/packages/gpu-layers/package.json`);
const gl = await import(pathToFileURL(`${dir}/packages/gpu-layers/dist/index.js`).href);
const tf = await import(req.resolve('@tensorflow/tfjs-core'));
await gl.initBackend({ backend: 'wasm' });
const x = tf.randomNormal([1024, 256]);
const ids = tf.tensor1d(
  Array.from({ length: 1024 }, (_, i) => (i * 7919) % 30522),
  'int32',
);
for (let i = 0; i < 3; i++) tf.unsortedSegmentSum(x, ids, 30522).dispose();
const times = [];
for (let i = 0; i < 15; i++) {
  const t0 = performance.now();
  const y = tf.unsortedSegmentSum(x, ids, 30522);
  times.push(performance.now() - t0);
  y.dispose();
}
times.sort((a, b) => a - b);
console.log(dir, 'median ms (the kernel runs synchronously on wasm)', times[7].toFixed(2));

// Kernels and milliseconds of one decoding step of a checkpoint (batch 1, 1 thread), counted by wrapping the tfjs
// engine's runKernel: `node docs/benchmarks/native/decode-kernels.mjs CHECKPOINT_DIR` from the repository root after
// `pnpm build` (CHECKPOINT_DIR: a run's checkpoints/best). Prints the kernels of one step by name, then the mean time
// of 300 steps (re-priming from 2 tokens when the positional table is full).
import { createRequire } from 'node:module';
const require = createRequire(new URL('../../../apps/lm-trainer/package.json', import.meta.url));
const tf = await import(require.resolve('@tensorflow/tfjs-core'));
const g = await import(require.resolve('@grassflow/gpu-layers'));
await g.initBackend({ backend: 'wasm', threads: 1 });
const { model } = await g.loadCheckpoint(process.argv[2]);
const dec = g.createDecoder(model);
tf.dispose(dec.prime(tf.tensor2d([[5, 6, 7, 8, 9, 10]], [1, 6], 'int32')));
const counts = new Map();
const engine = tf.engine();
const runKernel = engine.runKernel.bind(engine);
engine.runKernel = (name, ...rest) => {
  counts.set(name, (counts.get(name) ?? 0) + 1);
  return runKernel(name, ...rest);
};
const one = dec.step([11]);
engine.runKernel = runKernel;
await one.data();
one.dispose();
const total = [...counts.values()].reduce((a, b) => a + b, 0);
const reshapes = counts.get('Reshape') ?? 0;
console.log(`kernels per step: ${total} (${reshapes} of them Reshape, no data moved)`);
console.log(JSON.stringify(Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]))));
const N = 300;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  if (dec.position >= dec.maxLen - 1) {
    dec.reset();
    tf.dispose(dec.prime(tf.tensor2d([[5, 6]], [1, 2], 'int32')));
  }
  const y = dec.step([11 + (i % 50)]);
  await y.data();
  y.dispose();
}
console.log(`ms per step (mean of ${N}): ${((performance.now() - t0) / N).toFixed(3)}`);

// The optimizer phase of a training step (global norm, clipping, AdamW) on the CPU study's size-S parameters
// (docs/results/cpu-study: paper-6l with 4 layers, pre-LN, d 64, r 16, adaptive head; 2,502,760 parameters in 65
// tensors), two ways in one process, interleaved: tf ops (clipByGlobalNorm, then AdamW with onePass: false) against
// trainStep's path (globalNorm, then AdamW's one pass with clipping's factor). Prints the median of 15 of each.
//   pnpm --filter @grassflow/training build && node apps/lm-trainer/scripts/optimizer-ab.mjs
import { loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, preset } from '@grassflow/gpu-layers';
import { AdamW, clipByGlobalNorm, clipFactor, globalNorm, namedParameters } from '@grassflow/training';

const backend = await initBackend({ backend: process.argv[2] ?? 'wasm' });
const offsets = [[1], [2], [4], [8]];
const config = {
  ...preset('paper-6l'),
  nLayers: 4,
  offsets,
  norm: 'pre',
  dModel: 64,
  dFF: 256,
  r: 16,
  head: 'adaptive',
};
const model = createModel(config, { seed: 1 });
const params = namedParameters(model);
const size = params.reduce((s, p) => s + p.variable.size, 0);
const grads = Object.fromEntries(params.map((p) => [p.variable.name, tf.randomNormal(p.variable.shape, 0, 0.01)]));
const ops = new AdamW(params, { onePass: false });
const onePass = new AdamW(params, { onePass: true });
const ways = {
  'tf ops': async () => {
    const c = clipByGlobalNorm(grads, 1);
    await c.norm.data();
    ops.apply(c.grads, 1e-4);
    tf.dispose([c.norm, ...Object.values(c.grads)]);
  },
  'one pass': async () => {
    const norm = await globalNorm(grads);
    onePass.apply(grads, 1e-4, { gradScale: clipFactor(norm, 1) });
  },
};
const load0 = loadavg()[0];
for (let i = 0; i < 3; i++) for (const f of Object.values(ways)) await f(); // warm-up
const ms = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let i = 0; i < 15; i++) {
  for (const [k, f] of Object.entries(ways)) {
    const t0 = performance.now();
    await f();
    ms[k].push(performance.now() - t0);
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `${backend.name}, ${size.toLocaleString('en-US')} parameters in ${params.length} tensors, load ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}`,
);
for (const k of Object.keys(ways)) console.log(`${k.padEnd(9)} ${median(ms[k]).toFixed(1)} ms (median of 15)`);
console.log(`speed-up ${(median(ms['tf ops']) / median(ms['one pass'])).toFixed(2)}×`);

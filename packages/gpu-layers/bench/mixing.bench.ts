// One Grassmann mixing layer at paper size (d 256, r 32, C(r,2) = 496), forward + backward, with the fused
// Plücker gradient (the default) and with the tape's (fused: false), alternated so both see the same machine load.
// Usage: node --import tsx bench/mixing.bench.ts [--steps N] [--batch B] [--offsets 1,2,4]
import * as tf from '@tensorflow/tfjs-core';
import { grassmannMixing, initBackend, type GrassmannMixingWeights } from '@grassflow/gpu-layers';
import { loadavg } from 'node:os';

const arg = (name: string, fallback: string): string => {
  const k = process.argv.indexOf(name);
  return k >= 0 ? (process.argv[k + 1] ?? fallback) : fallback;
};
const STEPS = Number(arg('--steps', '10'));
const B = Number(arg('--batch', '8'));
const OFFSETS = arg('--offsets', '1').split(',').map(Number);
const [L, d, r] = [128, 256, 32];
const C = (r * (r - 1)) / 2;

const info = await initBackend();
const w: GrassmannMixingWeights = {
  wRed: tf.randomNormal([d, r], 0, 0.02, 'float32', 1),
  bRed: tf.zeros([r]),
  wPlu: tf.randomNormal([C, d], 0, 0.02, 'float32', 2),
  bPlu: tf.zeros([d]),
  wGate: tf.randomNormal([2 * d, d], 0, 0.02, 'float32', 3),
  bGate: tf.zeros([d]),
};
const h = tf.randomNormal<tf.Rank.R3>([B, L, d], 0, 1, 'float32', 4);
const probe = tf.randomNormal([B, L, d], 0, 1, 'float32', 5);

/** Seconds of one forward + backward, and the bytes the forward leaves alive until the backward ends. */
function step(fused: boolean): { s: number; heldMb: number } {
  const t0 = performance.now();
  let held = 0;
  const grads = tf.grads((x: tf.Tensor, a: tf.Tensor, p: tf.Tensor) => {
    const before = tf.memory().numBytes;
    const out = grassmannMixing(
      x as tf.Tensor3D,
      { ...w, wRed: a as tf.Tensor2D, wPlu: p as tf.Tensor2D },
      {
        offsets: OFFSETS,
        eps: 1e-6,
        direction: 'causal',
        fused,
      },
    );
    held = tf.memory().numBytes - before;
    return tf.sum(tf.mul(out, probe));
  })([h, w.wRed, w.wPlu]);
  for (const g of grads) g.dataSync();
  tf.dispose(grads);
  return { s: (performance.now() - t0) / 1000, heldMb: held / 2 ** 20 };
}

console.log(
  `backend ${info.name}${info.threads !== undefined ? ` (threads ${info.threads})` : ''}; one mixing layer, B ${B}, ` +
    `L ${L}, d ${d}, r ${r}, offsets ${OFFSETS.join(',')}; median of ${STEPS} after 1 warm-up; load ${loadavg()[0]?.toFixed(2)}`,
);
const times: Record<'fused' | 'tape', number[]> = { fused: [], tape: [] };
const held: Record<'fused' | 'tape', number> = { fused: 0, tape: 0 };
for (let k = 0; k <= STEPS; k++) {
  for (const kind of ['fused', 'tape'] as const) {
    const { s, heldMb } = step(kind === 'fused');
    held[kind] = heldMb;
    if (k > 0) times[kind].push(s);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log('| gradient | fwd+bwd ms | forward tensors held until backward, MB |');
console.log('|---|---:|---:|');
for (const kind of ['fused', 'tape'] as const) {
  console.log(`| ${kind} | ${(1000 * median(times[kind])).toFixed(1)} | ${held[kind].toFixed(1)} |`);
}
console.log(`load at end ${loadavg()[0]?.toFixed(2)}`);

// Expressive attention's weights a = e/(Σe + ε), e = s²/(1 + s²), forward + backward on scores of one training step's
// layer (B·H 64, L 128: the ladder's size S, B 16 with 4 heads), as the fused wasm kernels and as the composed tfjs
// ops (useFusedKernels(false)), alternated so both see the same machine load. Wall and CPU milliseconds (the CPU
// time counts every thread of the process, so it moves less with other work on the machine than the wall clock).
// Usage: node --import tsx bench/expressive.bench.ts [--steps N]
import * as tf from '@tensorflow/tfjs-core';
import { attentionWeights, initBackend, useFusedKernels } from '@grassflow/gpu-layers';
import { loadavg } from 'node:os';

const arg = (name: string, fallback: string): string => {
  const k = process.argv.indexOf(name);
  return k >= 0 ? (process.argv[k + 1] ?? fallback) : fallback;
};
const STEPS = Number(arg('--steps', '10'));
const [BH, L] = [64, 128];

const info = await initBackend({ backend: 'wasm' });
const scores = tf.randomNormal<tf.Rank.R3>([BH, L, L], 0, 2, 'float32', 1);
const probe = tf.randomNormal([BH, L, L], 0, 1, 'float32', 2);

/** Wall and CPU milliseconds of one forward + backward. */
function step(fused: boolean): { wall: number; cpu: number } {
  useFusedKernels(fused);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  tf.tidy(() => {
    const [ds] = tf.grads((s: tf.Tensor) => tf.sum(tf.mul(attentionWeights(s as tf.Tensor3D, 'ea', 1e-6), probe)))([
      scores,
    ]);
    ds?.dataSync();
  });
  const c = process.cpuUsage(c0);
  useFusedKernels(true);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

console.log(
  `backend ${info.name} (threads ${info.threads ?? '-'}); EA weights, scores [${BH}, ${L}, ${L}]; median of ` +
    `${STEPS} after 1 warm-up; load ${loadavg()[0]?.toFixed(2)}`,
);
const ms: Record<'fused' | 'composed', { wall: number[]; cpu: number[] }> = {
  fused: { wall: [], cpu: [] },
  composed: { wall: [], cpu: [] },
};
for (let k = 0; k <= STEPS; k++) {
  for (const path of k % 2 === 0 ? (['fused', 'composed'] as const) : (['composed', 'fused'] as const)) {
    const { wall, cpu } = step(path === 'fused');
    if (k > 0) {
      ms[path].wall.push(wall);
      ms[path].cpu.push(cpu);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log('| path | fwd+bwd wall ms | fwd+bwd CPU ms |');
console.log('|---|---:|---:|');
for (const path of ['fused', 'composed'] as const) {
  console.log(`| ${path} | ${median(ms[path].wall).toFixed(1)} | ${median(ms[path].cpu).toFixed(1)} |`);
}
console.log(`load at end ${loadavg()[0]?.toFixed(2)}`);

// One paper-6l training step (B 8, L 128) of Grassmann, DPA and EA on the backend initBackend picks.
// Usage: pnpm bench [-- --steps N]   (GRASSFLOW_BACKEND=cpu|wasm|tensorflow|tensorflow-gpu forces one)
import * as tf from '@tensorflow/tfjs-core';
import { countParams, createModel, initBackend, lmLoss, preset, type ModelConfig } from '@grassflow/gpu-layers';

const B = 8;
const L = 128;
const stepsArg = process.argv.indexOf('--steps');
const STEPS = stepsArg >= 0 ? Number(process.argv[stepsArg + 1]) : 3;

function randomIds(V: number, seed: number): tf.Tensor2D {
  return tf.tidy(() => tf.cast(tf.floor(tf.randomUniform([B, L], 0, V, 'float32', seed)), 'int32') as tf.Tensor2D);
}

interface Row {
  model: string;
  params: number;
  fwdBwd: number;
  update: number;
}

/** Median seconds of fwd+bwd and of the Adam update over STEPS timed steps after one warm-up step. */
function timeModel(name: string, config: ModelConfig): Row {
  const model = createModel(config, { seed: 0 });
  const optimizer = tf.train.adam(3e-4);
  const ids = randomIds(config.vocabSize, 1);
  const targets = randomIds(config.vocabSize, 2);
  const fb: number[] = [];
  const up: number[] = [];
  for (let step = 0; step <= STEPS; step++) {
    const t0 = performance.now();
    const { value, grads } = tf.variableGrads(
      () => lmLoss(model.apply(ids, { training: true }), targets),
      model.trainableVariables(),
    );
    for (const g of Object.values(grads)) g.dataSync(); // wait for every gradient
    value.dataSync();
    const t1 = performance.now();
    optimizer.applyGradients(Object.entries(grads).map(([name, tensor]) => ({ name, tensor })));
    model.trainableVariables()[0]?.dataSync();
    const t2 = performance.now();
    tf.dispose([value, ...Object.values(grads)]);
    if (step > 0) {
      fb.push((t1 - t0) / 1000);
      up.push((t2 - t1) / 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const row = { model: name, params: countParams(config), fwdBwd: median(fb), update: median(up) };
  tf.dispose([ids, targets]);
  optimizer.dispose();
  model.dispose();
  return row;
}

const info = await initBackend();
console.log(
  `backend: ${info.name}${info.simd !== undefined ? ` (simd ${info.simd}, threads ${info.threads})` : ''}, tfjs-core ${info.tfjsCore}`,
);
console.log(
  `paper-6l training step, B ${B}, L ${L} (${B * L} tokens), Adam; median of ${STEPS} steps after 1 warm-up\n`,
);
const rows = [
  timeModel('Grassmann (offsets 1,2,4,8,12,16 one per layer)', preset('paper-6l')),
  timeModel('Transformer DPA', preset('paper-6l', { kind: 'transformer', attention: 'dpa' })),
  timeModel('Transformer EA', preset('paper-6l', { kind: 'transformer', attention: 'ea' })),
];
console.log('| model | params | fwd+bwd s | update s | s/step | tokens/s |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const step = r.fwdBwd + r.update;
  console.log(
    `| ${r.model} | ${r.params.toLocaleString('en-US')} | ${r.fwdBwd.toFixed(2)} | ${r.update.toFixed(2)} | ${step.toFixed(2)} | ${Math.round((B * L) / step)} |`,
  );
}

// A tiny Grassmann LM trained and sampled in the page. '@grassflow/gpu-layers' resolves to its browser entry: Vite
// applies the "browser" export condition by default, tsc through customConditions in tsconfig.json.
import * as tf from '@tensorflow/tfjs-core';
import { createModel, initBackend, lmLoss, preset, sampleIds } from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/prng';
// tfjs-backend-wasm fetches one of its three binaries at start: Vite copies each into the build and gives its URL.
import wasm from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';

const out = document.querySelector('#result')!;
try {
  const wasmPaths = {
    'tfjs-backend-wasm.wasm': wasm,
    'tfjs-backend-wasm-simd.wasm': wasmSimd,
    'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedSimd,
  };
  const info = await initBackend({ wasmPaths }); // wasm (one thread: this page is not cross-origin isolated)
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
  const losses: number[] = [];
  for (let step = 0; step < 20; step++) {
    const loss = optimizer.minimize(() => lmLoss(model.apply(ids, { training: true }), targets), true);
    losses.push(loss?.dataSync()[0] ?? Number.NaN);
    loss?.dispose();
  }
  const generated: number[] = [];
  const prompt = Int32Array.from(batch[0].slice(0, 4));
  for await (const id of sampleIds(model, prompt, { maxTokens: 8, temperature: 1, topK: 10 }, new Prng(2)))
    generated.push(id);
  tf.dispose([ids, targets]);
  model.dispose();
  // what the examples' test reads from the page
  out.textContent = JSON.stringify({ backend: info.name, firstLoss: losses[0], lastLoss: losses.at(-1), generated });
} catch (error) {
  out.textContent = JSON.stringify({ error: String(error) });
  throw error;
}

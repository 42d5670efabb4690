// The layers inside a user's own tfjs-layers models: symbolic shapes, serialization, training.
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { describe, expect, it } from 'vitest';
import { CausalGrassmannMixing, GrassmannBlock, TransformerBlock } from '@grassflow/gpu-layers';
import { useBackend, values } from './helpers.js';

describe('layers in user models', () => {
  it('README example: CausalGrassmannMixing in a tf.sequential, trained with fit', async () => {
    await useBackend('wasm');
    // --- README example begins ---
    const model = tfl.sequential({
      layers: [
        tfl.layers.dense({ units: 32, inputShape: [20, 8] }), // [B, 20, 8] → [B, 20, 32]
        new CausalGrassmannMixing({ r: 8, offsets: [1, 2, 4] }), // [B, 20, 32], strictly causal
        tfl.layers.dense({ units: 1 }), // [B, 20, 1]
      ],
    });
    const optimizer = tf.train.adam(1e-2);
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const x = tf.randomNormal([16, 20, 8]);
    const y = tf.cumsum(tf.mean(x, -1, true), 1); // running sum of past inputs: needs mixing over time
    const history = await model.fit(x, y, { epochs: 5, batchSize: 8, verbose: 0 });
    // --- README example ends ---
    const loss = history.history['loss'] as number[];
    expect(loss.every(Number.isFinite)).toBe(true);
    expect(loss[4] as number).toBeLessThan(loss[0] as number);
    expect(model.outputs[0]?.shape).toEqual([null, 20, 1]);
    // Further training allocates nothing that stays (tfjs-layers itself keeps one tensor per model, with or without our
    // layer).
    const before = tf.memory().numTensors;
    await model.fit(x, y, { epochs: 2, batchSize: 8, verbose: 0 });
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([x, y]);
    model.dispose();
    optimizer.dispose();
  });

  it('a functional model with all three layers has symbolic shapes and round-trips through JSON', async () => {
    await useBackend('cpu');
    const input = tfl.input({ shape: [12, 16] });
    const mixing = new CausalGrassmannMixing({ r: 4, offsets: [1, 3], eps: 1e-5, seed: 3 });
    const m1 = mixing.apply(input) as tfl.SymbolicTensor;
    expect(m1.shape).toEqual([null, 12, 16]);
    const m2 = new GrassmannBlock({ r: 4, offsets: [2], dFF: 32, norm: 'pre', dropout: 0.2 }).apply(
      m1,
    ) as tfl.SymbolicTensor;
    const m3 = new TransformerBlock({ nHeads: 4, dFF: 24, attention: 'ea' }).apply(m2) as tfl.SymbolicTensor;
    expect(m3.shape).toEqual([null, 12, 16]);
    const model = tfl.model({ inputs: input, outputs: m3 });

    const cfg = mixing.getConfig();
    expect(cfg).toMatchObject({ r: 4, offsets: [1, 3], eps: 1e-5, direction: 'causal', seed: 3 });
    const clone = CausalGrassmannMixing.fromConfig(CausalGrassmannMixing, cfg) as CausalGrassmannMixing;
    expect(clone.getConfig()).toEqual(cfg);

    const json = model.toJSON(null, false) as tf.serialization.ConfigDict;
    const restored = await tfl.models.modelFromJSON({ modelTopology: json });
    restored.setWeights(model.getWeights());
    const x = tf.randomNormal([2, 12, 16], 0, 1, 'float32', 1);
    expect(values(restored.predict(x) as tf.Tensor)).toEqual(values(model.predict(x) as tf.Tensor));
    expect(restored.layers.map((l) => l.getClassName())).toEqual([
      'InputLayer',
      'CausalGrassmannMixing',
      'GrassmannBlock',
      'TransformerBlock',
    ]);
    expect(restored.layers[2]?.getConfig()).toMatchObject({ r: 4, offsets: [2], dFF: 32, norm: 'pre', dropout: 0.2 });
    expect(restored.layers[3]?.getConfig()).toMatchObject({ nHeads: 4, dFF: 24, attention: 'ea', norm: 'post' });
    // Parameter counts of the layers: mixing d·r + r + C(r,2)·d + d + 2d·d + d = 64 + 4 + 96 + 16 + 512 + 16.
    expect(mixing.countParams()).toBe(708);
  });

  it('bad layer arguments throw clear errors', () => {
    expect(() => new TransformerBlock({ nHeads: 0, dFF: 8 })).toThrow(/nHeads/);
    expect(() => new GrassmannBlock({ r: 4, offsets: [1], dFF: 8, norm: 'mid' as 'pre' })).toThrow(/norm/);
    expect(() => new GrassmannBlock({ r: 4, offsets: [1], dFF: 8, dropout: 1 })).toThrow(/dropout/);
    const block = new TransformerBlock({ nHeads: 3, dFF: 8 });
    expect(() => block.apply(tf.zeros([1, 4, 16]))).toThrow(/not divisible by nHeads = 3/);
  });
});

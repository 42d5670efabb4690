// Causality of every mixer: tokens after position t never change the logits at positions ≤ t.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createModel, preset, type ModelConfig } from '@grassflow/gpu-layers';
import { tokenIds, useBackend, values } from './helpers.js';

const KINDS: Array<[string, Partial<ModelConfig>]> = [
  ['grassmann', { kind: 'grassmann', offsets: [[1, 3], [2]] }],
  ['grassmann pre-LN', { kind: 'grassmann', norm: 'pre', offsets: [[1], [1, 2, 4]] }],
  ['transformer dpa', { kind: 'transformer', attention: 'dpa' }],
  ['transformer ea', { kind: 'transformer', attention: 'ea' }],
  ['transformer ea pre-LN', { kind: 'transformer', attention: 'ea', norm: 'pre' }],
];

describe.each(['cpu', 'wasm'] as const)('causality on %s', (backend) => {
  it.each(KINDS)('%s: logits at ≤ t ignore tokens after t', async (_name, overrides) => {
    await useBackend(backend);
    const config = preset('tiny', overrides);
    const model = createModel(config, { seed: 3 });
    const [B, L, V] = [2, config.maxLen, config.vocabSize];
    const ids = tokenIds(B, L, V, 5);
    const base = values(model.apply(ids));
    for (const t of [0, 4, L - 2]) {
      // Replace every token after t by other tokens.
      const changed = tf.tidy(() => {
        const later = tf.mod(
          tf.add(tf.slice(ids, [0, t + 1], [B, L - t - 1]), tf.scalar(17, 'int32')),
          tf.scalar(V, 'int32'),
        );
        return tf.concat([tf.slice(ids, [0, 0], [B, t + 1]), later], 1) as tf.Tensor2D;
      });
      const out = values(model.apply(changed));
      let maxBefore = 0;
      let maxAfter = 0;
      for (let b = 0; b < B; b++) {
        for (let s = 0; s < L; s++) {
          for (let v = 0; v < V; v++) {
            const k = (b * L + s) * V + v;
            const diff = Math.abs((out[k] as number) - (base[k] as number));
            if (s <= t) maxBefore = Math.max(maxBefore, diff);
            else maxAfter = Math.max(maxAfter, diff);
          }
        }
      }
      expect(maxBefore).toBeLessThan(1e-6); // positions ≤ t: unchanged
      expect(maxAfter).toBeGreaterThan(1e-4); // positions > t do see their own (changed) tokens
    }
    model.dispose();
  });
});

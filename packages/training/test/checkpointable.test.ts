import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend, type CheckpointJson } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  loadModelCheckpoint,
  loadTrainerCheckpoint,
  ParamStore,
  saveModelCheckpoint,
  saveTrainerCheckpoint,
  TrainerCheckpointError,
  TrainingRng,
  type Checkpointable,
  type NamedVariable,
  type TrainerState,
} from '@grassflow/training';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** A model written against tfjs-core with a ParamStore: y = x·W + b. */
class Affine implements Checkpointable {
  readonly params: ParamStore;
  constructor(
    readonly config: { inDim: number; outDim: number },
    seed: number,
  ) {
    this.params = new ParamStore(seed);
    this.params.linear('fc', config.inDim, config.outDim);
  }
  checkpointConfig(): CheckpointJson {
    return { ...this.config };
  }
  namedParams(): NamedVariable[] {
    return this.params.named();
  }
  dispose(): void {
    this.params.dispose();
  }
}

const values = (m: Checkpointable) => m.namedParams().map((p) => [p.name, Array.from(p.variable.dataSync())]);
const build = { build: (c: { inDim: number; outDim: number }) => new Affine(c, 99) };

describe('trainer checkpoint of a Checkpointable model', () => {
  it('round-trips parameters, AdamW moments and trainer state by name', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'grassflow-ckpt-')), 'ck');
    const model = new Affine({ inDim: 3, outDim: 2 }, 1);
    const opt = new AdamW(model.namedParams());
    const g = Object.fromEntries(model.namedParams().map((p) => [p.variable.name, tf.onesLike(p.variable)]));
    opt.apply(g, 0.1);
    tf.dispose(Object.values(g));
    const state: TrainerState = {
      step: 1,
      tokensSeen: 8,
      trainSeconds: 0.5,
      rng: new TrainingRng(3).state,
      data: { position: 1 },
      optimizer: opt.state,
      best: null,
    };
    await saveTrainerCheckpoint(dir, model, opt, state, { run: { note: 'x' } });
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'extra.safetensors', 'model.safetensors']);
    const ck = await loadTrainerCheckpoint(dir, build);
    expect(values(ck.model)).toEqual(values(model));
    expect(ck.config).toEqual({ inDim: 3, outDim: 2 });
    expect(ck.state).toEqual(state);
    expect(ck.extra).toEqual({ run: { note: 'x' } });
    const moments = opt.stateTensors();
    expect([...ck.optimizerTensors.keys()].sort()).toEqual([...moments.keys()].sort());
    for (const [k, t] of moments)
      expect(Array.from(ck.optimizerTensors.get(k)!.dataSync())).toEqual(Array.from(t.dataSync()));
    tf.dispose([...moments.values(), ...ck.optimizerTensors.values()]);
    ck.model.dispose();
    opt.dispose();
    model.dispose();
  });

  it('refuses weights that do not fit the built model, and a model-only checkpoint for resuming', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'grassflow-ckpt-')), 'ck');
    const model = new Affine({ inDim: 3, outDim: 2 }, 1);
    await saveModelCheckpoint(dir, model);
    const n0 = tf.memory().numTensors;
    await expect(loadModelCheckpoint(dir, { build: () => new Affine({ inDim: 4, outDim: 2 }, 0) })).rejects.toThrow(
      /fc\.weight/,
    );
    expect(tf.memory().numTensors).toBe(n0); // the model built for the check is freed
    await expect(loadTrainerCheckpoint(dir, build)).rejects.toThrow(TrainerCheckpointError);
    const ok = await loadModelCheckpoint(dir, build);
    expect(values(ok.model)).toEqual(values(model));
    ok.model.dispose();
    model.dispose();
  });
});

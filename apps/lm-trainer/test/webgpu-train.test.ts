// `grassflow-lm train --backend webgpu` at a tiny size: the run trains, names its adapter, and writes a checkpoint
// that loads (on cpu, with the logits of the same checkpoint loaded on webgpu). Without a GPU it runs on Mesa's
// lavapipe (software Vulkan, slow). Skipped only when the webgpu packages or any adapter are missing and
// GRASSFLOW_REQUIRE_WEBGPU is not set (CI installs lavapipe and sets it), or without the data.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { initBackend, loadCheckpoint, webgpuSuiteGate } from '@grassflow/gpu-layers';
import { cli, DATA_DIR, metrics, TINY, tmp } from './helpers.js';

const { missing, skip } = await webgpuSuiteGate('webgpu train test');

describe.skipIf(DATA_DIR === undefined || skip)(
  'train --backend webgpu (tiny, WikiText-2; needs GRASSFLOW_DATA_DIR)',
  () => {
    it('trains a few steps and writes a checkpoint that loads on cpu and webgpu with the same logits', async () => {
      expect(missing).toBeUndefined();
      const run = join(tmp(), 'run');
      const t = cli([
        'train',
        '--model',
        'grassmann',
        ...TINY,
        '--steps',
        '4',
        '--eval-every',
        '4',
        '--backend',
        'webgpu',
        '--out',
        run,
      ]);
      expect(t.code, t.stderr).toBe(0);
      expect(t.stderr).toMatch(/backend: webgpu on /);
      const train = metrics(run).filter((m) => m['type'] === 'train');
      expect(train.map((m) => m['step'])).toEqual([1, 2, 3, 4]);
      for (const m of train) expect(Number.isFinite(m['loss'] as number)).toBe(true);
      // config.json and report.md name the adapter; on a software one the report says its speeds are not a GPU's
      const cfg = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as {
        backend: { name: string; adapter?: string; softwareRendering?: boolean };
      };
      expect(cfg.backend.name).toBe('webgpu');
      expect(cfg.backend.adapter).toEqual(expect.any(String));
      const report = readFileSync(join(run, 'report.md'), 'utf8');
      expect(report).toContain(`Backend webgpu on ${cfg.backend.adapter ?? ''}`);
      if (cfg.backend.softwareRendering === true)
        expect(report).toContain('(software rendering: its tokens/s are not GPU numbers)');
      const logits: Float32Array[] = [];
      for (const backend of ['cpu', 'webgpu'] as const) {
        await initBackend({ backend });
        const { model } = await loadCheckpoint(join(run, 'checkpoints', 'best'));
        const ids = tf.tensor2d(
          Int32Array.from({ length: 16 }, (_, i) => (i * 389) % 30522),
          [1, 16],
          'int32',
        );
        const out = model.apply(ids);
        logits.push((await out.data()) as Float32Array);
        tf.dispose([ids, out]);
        model.dispose();
      }
      const [cpu, gpu] = logits as [Float32Array, Float32Array];
      let diff = 0;
      let scale = 1e-12;
      for (let i = 0; i < cpu.length; i++) {
        diff = Math.max(diff, Math.abs((gpu[i] as number) - (cpu[i] as number)));
        scale = Math.max(scale, Math.abs(cpu[i] as number));
      }
      expect(diff / scale).toBeLessThan(1e-4);
      await initBackend({ backend: 'cpu' });
    });
  },
);

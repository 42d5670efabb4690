// The README's example, verbatim in substance: if this fails, the README is wrong.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointFolder, saveCheckpointFolder, writeJsonAtomic } from '@grassflow/checkpoints';

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'grassflow-readme-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('README example', () => {
  it('saves and loads a head checkpoint folder, and writes JSON atomically', async () => {
    interface HeadConfig {
      kind: 'head';
      dIn: number;
      classes: number;
    }
    const config: HeadConfig = { kind: 'head', dIn: 4, classes: 3 };
    const w = new Float32Array(3 * 4).fill(0.25);
    const b = Float32Array.from([1, 2, 3]);
    const dir = join(cwd, 'runs/head/ckpt');

    await saveCheckpointFolder(dir, {
      model: config,
      tensors: { w: { dtype: 'F32', shape: [3, 4], data: w }, b: { dtype: 'F32', shape: [3], data: b } },
      extraTensors: { step: { dtype: 'I32', shape: [1], data: Int32Array.from([100]) } },
      extra: { step: 100, bestValLoss: 0.61 },
    });

    const loaded = await loadCheckpointFolder<HeadConfig>(dir, {
      parseModel: (v) => {
        const c = v as HeadConfig;
        if (c?.kind !== 'head') throw new Error('not a head config');
        return c;
      },
      expectedTensors: (c) =>
        new Map([
          ['w', [c.classes, c.dIn]],
          ['b', [c.classes]],
        ]),
      describeModel: (c) => `head dIn=${c.dIn} classes=${c.classes}`,
    });
    expect(loaded.model).toEqual({ kind: 'head', dIn: 4, classes: 3 });
    expect(Array.from(loaded.tensors.get('b')?.data ?? [])).toEqual([1, 2, 3]);
    expect(loaded.extra).toEqual({ step: 100, bestValLoss: 0.61 });
    expect(Array.from(loaded.extraTensors.get('step')?.data ?? [])).toEqual([100]);

    const summary = join(cwd, 'runs/head/summary.json');
    await writeJsonAtomic(summary, { accuracy: 0.8 });
    expect(await readFile(summary, 'utf8')).toBe('{\n  "accuracy": 0.8\n}\n');
  });
});

// A save interrupted at any step (simulated crash) leaves the old or the new checkpoint loadable, never a mix.
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError, loadCheckpoint, saveCheckpoint, type LanguageModel } from '@grassflow/gpu-layers';
import { nodeFileSystem, type FileSystemOps, type WritableFileOps } from '@grassflow/checkpoints';
import { logitsOf, tinyModel, useCpu } from './checkpoint-helpers.js';

class SimulatedCrash extends Error {}

/**
 * node:fs with a power cut at the `crashAt`-th mutating operation: that operation throws (a write
 * first lands half its bytes), and every operation after it throws too, as if the process were dead.
 */
class CrashingFs implements FileSystemOps {
  ops = 0;
  dead = false;
  private readonly open: WritableFileOps[] = [];

  constructor(private readonly crashAt = Infinity) {}

  private async step(partial?: () => Promise<void>): Promise<void> {
    if (this.dead) throw new SimulatedCrash('the process is dead');
    this.ops++;
    if (this.ops === this.crashAt) {
      this.dead = true;
      await partial?.();
      throw new SimulatedCrash(`crash at operation ${this.ops}`);
    }
  }

  async create(path: string): Promise<WritableFileOps> {
    await this.step();
    const file = await nodeFileSystem.create(path);
    this.open.push(file);
    return {
      write: async (bytes) => {
        await this.step(() => file.write(bytes.subarray(0, bytes.byteLength >> 1)));
        await file.write(bytes);
      },
      sync: async () => {
        await this.step();
        await file.sync();
      },
      close: async () => {
        await this.step();
        await file.close();
      },
    };
  }
  async rename(from: string, to: string): Promise<void> {
    await this.step();
    await nodeFileSystem.rename(from, to);
  }
  async mkdir(path: string): Promise<void> {
    await this.step();
    await nodeFileSystem.mkdir(path);
  }
  async remove(path: string): Promise<void> {
    await this.step();
    await nodeFileSystem.remove(path);
  }
  async syncDirectory(path: string): Promise<void> {
    await this.step();
    await nodeFileSystem.syncDirectory(path);
  }
  /** What the OS does for a dead process: close its files. */
  async reap(): Promise<void> {
    for (const f of this.open) await f.close().catch(() => undefined);
  }
}

let root: string;
let modelA: LanguageModel;
let modelB: LanguageModel;
let modelC: LanguageModel;
let logits: Map<number, number[]>;

beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-crash-'));
  modelA = tinyModel({}, 21);
  modelB = tinyModel({}, 22);
  modelC = tinyModel({}, 23);
  logits = new Map([
    [1, logitsOf(modelA)],
    [2, logitsOf(modelB)],
    [3, logitsOf(modelC)],
  ]);
});
afterAll(async () => {
  for (const m of [modelA, modelB, modelC]) m.dispose();
  await rm(root, { recursive: true, force: true });
});

/** Loads `dir` and checks the weights are exactly those of the checkpoint its `extra.step` names. */
async function loadStep(dir: string): Promise<{ step: number; recovered: boolean }> {
  const loaded = await loadCheckpoint(dir);
  const step = loaded.extra['step'] as number;
  expect(logitsOf(loaded.model)).toEqual(logits.get(step)); // config, weights and extra agree
  loaded.model.dispose();
  return { step, recovered: loaded.recovered };
}

describe('crash safety of saveCheckpoint', () => {
  it('a crash at every single file-system operation leaves the old or the new checkpoint', async () => {
    // How many mutating operations a save over an existing checkpoint takes.
    const probeDir = join(root, 'probe', 'ckpt');
    await saveCheckpoint(probeDir, modelA, { extra: { step: 1 } });
    const probe = new CrashingFs();
    await saveCheckpoint(probeDir, modelB, { extra: { step: 2 }, fs: probe });
    const total = probe.ops;
    expect(total).toBeGreaterThan(10);
    expect(probe.dead).toBe(false);

    const outcomes: number[] = [];
    let recoveries = 0; // crashes between the two renames: load read <dir>.old-*
    for (let k = 1; k <= total; k++) {
      const dir = join(root, `crash-${k}`, 'ckpt');
      await saveCheckpoint(dir, modelA, { extra: { step: 1 } });
      const fs = new CrashingFs(k);
      const error = await saveCheckpoint(dir, modelB, { extra: { step: 2 }, fs }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await fs.reap();
      const { step, recovered } = await loadStep(dir);
      outcomes.push(step);
      if (recovered) recoveries++;
      // Whatever the save reported must be true of the folder.
      if (step === 1) {
        expect(error, `crash at ${k}`).toBeInstanceOf(CheckpointError);
        expect((error as CheckpointError).code).toBe('WRITE_FAILED');
        expect((error as Error).message).toMatch(/the previous checkpoint there, if any, is unchanged/);
      } else if (error !== undefined) {
        // Crashed after the commit: only the fsync of the parent is reported; cleanup is best effort.
        expect((error as Error).message, `crash at ${k}`).toMatch(/the new checkpoint is in place/);
      }

      // The next save repairs whatever the crash left and succeeds; no temp folders remain.
      await saveCheckpoint(dir, modelC, { extra: { step: 3 } });
      expect((await loadStep(dir)).step).toBe(3);
      expect(await readdir(join(root, `crash-${k}`))).toEqual(['ckpt']);
    }
    // Early crashes keep the old checkpoint, late ones already show the new one; never anything else.
    expect(outcomes[0]).toBe(1);
    expect(outcomes[outcomes.length - 1]).toBe(2);
    expect(new Set(outcomes)).toEqual(new Set([1, 2]));
    const firstNew = outcomes.indexOf(2);
    expect(outcomes.slice(firstNew).every((s) => s === 2)).toBe(true);
    expect(recoveries).toBe(1);
  });

  it('a crash between the two renames: load reads the previous checkpoint from <dir>.old-*', async () => {
    const parent = join(root, 'between');
    const dir = join(parent, 'ckpt');
    await saveCheckpoint(dir, modelA, { extra: { step: 1 } });
    // The state a crash right after `rename(dir, dir.old-…)` leaves, with a half-written new one.
    await rename(dir, `${dir}.old-4242-0123456789ab`);
    await mkdir(`${dir}.tmp-4242-0123456789ab`);
    await writeFile(join(`${dir}.tmp-4242-0123456789ab`, 'model.safetensors'), 'partial');
    expect(await loadStep(dir)).toEqual({ step: 1, recovered: true });
    const loaded = await loadCheckpoint(dir);
    expect(loaded.dir).toBe(`${dir}.old-4242-0123456789ab`);
    loaded.model.dispose();

    await saveCheckpoint(dir, modelB, { extra: { step: 2 } });
    expect(await loadStep(dir)).toEqual({ step: 2, recovered: false });
    expect(await readdir(parent)).toEqual(['ckpt']);
  });

  it('a stale temp folder from an earlier crash is ignored by load and removed by the next save', async () => {
    const parent = join(root, 'stale');
    const dir = join(parent, 'ckpt');
    await saveCheckpoint(dir, modelA, { extra: { step: 1 } });
    const stale = `${dir}.tmp-77-aaaaaaaaaaaa`;
    await mkdir(stale);
    await writeFile(join(stale, 'config.json'), '{"format": "grassflow-checkpoint", "formatVersion": 1');
    expect((await loadStep(dir)).step).toBe(1);
    await saveCheckpoint(dir, modelB, { extra: { step: 2 } });
    expect((await loadStep(dir)).step).toBe(2);
    expect(await readdir(parent)).toEqual(['ckpt']);
  });

  it('an ordinary failure (rename refused) rolls back: the old checkpoint stays in place', async () => {
    const parent = join(root, 'rollback');
    const dir = join(parent, 'ckpt');
    await saveCheckpoint(dir, modelA, { extra: { step: 1 } });
    let renames = 0;
    const flaky: FileSystemOps = {
      ...nodeFileSystem,
      rename: async (from, to) => {
        renames++;
        if (renames === 2) throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
        await nodeFileSystem.rename(from, to);
      },
    };
    const error = await saveCheckpoint(dir, modelB, { extra: { step: 2 }, fs: flaky }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as Error).message).toMatch(/failed \(EXDEV: cross-device link not permitted\)/);
    expect(await loadStep(dir)).toEqual({ step: 1, recovered: false });
    expect(await readdir(parent)).toEqual(['ckpt']);
  });
});

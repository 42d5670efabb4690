// A reader racing a writer that saves every step always gets one whole save: never a mix of two saves' files.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpointFolder, saveCheckpointFolder } from '@grassflow/checkpoints';

const root = await mkdtemp(join(tmpdir(), 'grassflow-readers-'));
afterAll(() => rm(root, { recursive: true, force: true }));

/** Save k: config { save: k } and a tensor whose every value is k, so a read can tell which save each file is from. */
function save(dir: string, k: number) {
  const n = 4096 + (k % 7) * 512; // sizes differ between saves too
  return saveCheckpointFolder(dir, {
    model: { save: k },
    tensors: { w: { dtype: 'F32', shape: [n], data: new Float32Array(n).fill(k) } },
    extra: { step: k },
  });
}

describe('readers against a writer that swaps the folder every save', () => {
  it('every read returns one whole save (config, tensors and extra agree) and none fails', async () => {
    const dir = join(root, 'latest');
    await save(dir, 0);
    let writing = true;
    const writer = (async () => {
      for (let k = 1; k <= 150; k++) await save(dir, k);
      writing = false;
    })();
    const reads: number[] = [];
    const reader = async () => {
      while (writing) {
        const got = await loadCheckpointFolder<{ save: number }>(dir);
        const w = got.tensors.get('w');
        expect(w?.data.every((v) => v === got.model.save)).toBe(true);
        expect(got.extra['step']).toBe(got.model.save);
        reads.push(got.model.save);
      }
    };
    await Promise.all([writer, reader(), reader()]);
    expect(reads.length).toBeGreaterThan(10);
    expect(new Set(reads).size).toBeGreaterThan(2); // the readers really saw the folder change under them
  });
});

// Checkpoints from bytes (the browser path): equal to the folder loader, with its checks; picked files and fetch.
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointError,
  checkpointBytesFromFiles,
  fetchCheckpointBytes,
  loadCheckpointBytes,
  loadCheckpointFolder,
  saveCheckpointFolder,
  type CheckpointFileLike,
} from '@grassflow/checkpoints';

const options = {
  expectedTensors: () =>
    new Map([
      ['w', [2, 3]],
      ['b', [2]],
    ]),
};

let root: string;
let run: string;
let server: Server;
let base: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ck-bytes-'));
  run = join(root, 'run');
  await mkdir(join(run, 'checkpoints'), { recursive: true });
  const tensors = {
    w: { dtype: 'F32' as const, shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
    b: { dtype: 'F32' as const, shape: [2], data: Float32Array.from([-1, 0.5]) },
  };
  const extraTensors = { step: { dtype: 'I32' as const, shape: [1], data: Int32Array.from([7]) } };
  await saveCheckpointFolder(join(run, 'checkpoints', 'best'), { model: { kind: 'head' }, tensors, extraTensors });
  await saveCheckpointFolder(join(run, 'checkpoints', 'latest'), { model: { kind: 'other' }, tensors });
  server = createServer((req, res) => {
    readFile(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)))
      .then((body) => res.end(body))
      .catch(() => {
        res.statusCode = 404;
        res.end();
      });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(root, { recursive: true, force: true });
});

async function folderBytes(dir: string): Promise<{ config: Uint8Array; model: Uint8Array; extra?: Uint8Array }> {
  const read = async (name: string): Promise<Uint8Array> => new Uint8Array(await readFile(join(dir, name)));
  const extra = await read('extra.safetensors').catch(() => undefined);
  return { config: await read('config.json'), model: await read('model.safetensors'), ...(extra ? { extra } : {}) };
}

/** A picked file as a browser gives it: a File (Node 20 has the same class) with its path in the picked folder. */
function picked(path: string, bytes: Uint8Array): CheckpointFileLike {
  const file = new File([bytes], path.slice(path.lastIndexOf('/') + 1));
  Object.defineProperty(file, 'webkitRelativePath', { value: path });
  return file;
}

describe('loadCheckpointBytes', () => {
  it('marks a config.json without file records as unverified, and refuses NaN or ±Infinity, as the folder loader does', async () => {
    const files = await folderBytes(join(run, 'checkpoints', 'latest'));
    expect((await loadCheckpointBytes(files, options)).unverified).toEqual([]);
    const json = JSON.parse(new TextDecoder().decode(files.config)) as Record<string, unknown>;
    const { files: _records, ...bare } = json;
    const unrecorded = { ...files, config: JSON.stringify(bare), source: 'bare' };
    expect((await loadCheckpointBytes(unrecorded, options)).unverified).toEqual(['model.safetensors']);
    const dir = join(root, 'nan');
    const w = Float32Array.from([1, 2, Number.NEGATIVE_INFINITY, 4, 5, 6]);
    const b = Float32Array.from([0, 0]);
    await saveCheckpointFolder(dir, {
      model: { kind: 'head' },
      tensors: { w: { dtype: 'F32', shape: [2, 3], data: w }, b: { dtype: 'F32', shape: [2], data: b } },
    });
    const bad = await loadCheckpointBytes({ ...(await folderBytes(dir)), source: 'nan' }, options).catch(
      (x: unknown) => x,
    );
    expect((bad as CheckpointError).code).toBe('NON_FINITE');
    expect((bad as Error).message).toContain("nan/model.safetensors: tensor 'w' holds -Infinity (entry 2)");
  });

  it('reads what loadCheckpointFolder reads', async () => {
    const dir = join(run, 'checkpoints', 'best');
    const fromFolder = await loadCheckpointFolder(dir, options);
    const fromBytes = await loadCheckpointBytes({ ...(await folderBytes(dir)), source: 'best' }, options);
    expect(fromBytes.model).toEqual({ kind: 'head' });
    expect([...fromBytes.tensors.keys()]).toEqual([...fromFolder.tensors.keys()]);
    expect(Array.from(fromBytes.tensors.get('w')?.data ?? [])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Array.from(fromBytes.extraTensors.get('step')?.data ?? [])).toEqual([7]);
    expect(fromBytes.config).toEqual(fromFolder.config);
  });

  it('refuses a changed byte (SHA-256), a truncated file, a missing extra file and wrong tensors', async () => {
    const files = await folderBytes(join(run, 'checkpoints', 'best'));
    const flipped = files.model.slice();
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    await expect(loadCheckpointBytes({ ...files, model: flipped })).rejects.toThrow(/does not match the SHA-256/);
    await expect(loadCheckpointBytes({ ...files, model: files.model.subarray(1) })).rejects.toThrow(/truncated/);
    await expect(loadCheckpointBytes({ config: files.config, model: files.model })).rejects.toMatchObject({
      code: 'MISSING_FILE',
    });
    const wrong = { expectedTensors: () => new Map([['w', [3, 2]]]) };
    await expect(loadCheckpointBytes(files, wrong)).rejects.toMatchObject({ code: 'TENSOR_SHAPE' });
    // Without the check the flipped byte is read as it is.
    expect((await loadCheckpointBytes({ ...files, model: flipped }, { verifyChecksums: false })).tensors.size).toBe(2);
  });
});

describe('checkpointBytesFromFiles', () => {
  it("takes a run folder's checkpoints/best, and a checkpoint folder as it is", async () => {
    const best = await folderBytes(join(run, 'checkpoints', 'best'));
    const latest = await folderBytes(join(run, 'checkpoints', 'latest'));
    const runFiles = [
      picked('run/checkpoints/latest/config.json', latest.config),
      picked('run/checkpoints/latest/model.safetensors', latest.model),
      picked('run/checkpoints/best/config.json', best.config),
      picked('run/checkpoints/best/model.safetensors', best.model),
      picked('run/checkpoints/best/extra.safetensors', best.extra ?? new Uint8Array()),
      picked('run/config.json', new TextEncoder().encode('{}')),
    ];
    const fromRun = await checkpointBytesFromFiles(runFiles);
    expect(fromRun.source).toBe('run/checkpoints/best');
    expect((await loadCheckpointBytes(fromRun)).model).toEqual({ kind: 'head' });
    const one = await checkpointBytesFromFiles(runFiles.slice(0, 2));
    expect((await loadCheckpointBytes(one)).model).toEqual({ kind: 'other' });
    await expect(checkpointBytesFromFiles(runFiles.slice(5))).rejects.toBeInstanceOf(CheckpointError);
  });
});

describe('fetchCheckpointBytes', () => {
  it('fetches a checkpoint folder, or a run folder (its checkpoints/best), over HTTP', async () => {
    const direct = await fetchCheckpointBytes(`${base}/run/checkpoints/latest/`);
    expect((await loadCheckpointBytes(direct)).model).toEqual({ kind: 'other' });
    const fromRun = await fetchCheckpointBytes(`${base}/run`);
    expect(fromRun.source).toBe(`${base}/run/checkpoints/best`);
    expect((await loadCheckpointBytes(fromRun)).extraTensors.size).toBe(1);
    await expect(fetchCheckpointBytes(`${base}/nothing`)).rejects.toThrow(/no checkpoint at .*HTTP 404/);
  });
});

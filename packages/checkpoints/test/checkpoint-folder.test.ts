// Checkpoint folders for any model (here a toy "head" with named parameters): round trip, records, errors, crashes.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointError,
  loadCheckpointFolder,
  readSafetensorsFile,
  replaceDirectory,
  saveCheckpointFolder,
  nodeFileSystem,
  type CheckpointErrorCode,
  type LoadCheckpointFolderOptions,
  type SafetensorsTensorInput,
} from '@grassflow/checkpoints';
import { RecordingFs } from './recording-fs.js';

/** A head's own config type: what its package validates. */
interface HeadConfig {
  readonly kind: 'head';
  readonly dIn: number;
  readonly classes: number;
}

function parseHead(value: unknown): HeadConfig {
  const v = value as Partial<HeadConfig> | null;
  if (v?.kind !== 'head' || !Number.isInteger(v.dIn) || !Number.isInteger(v.classes)) {
    throw new Error(`not a head config: ${JSON.stringify(value)}`);
  }
  return { kind: 'head', dIn: v.dIn as number, classes: v.classes as number };
}

const headOptions: LoadCheckpointFolderOptions<HeadConfig> = {
  parseModel: parseHead,
  expectedTensors: (c) =>
    new Map([
      ['w', [c.classes, c.dIn]],
      ['b', [c.classes]],
    ]),
  describeModel: (c) => `head dIn=${c.dIn} classes=${c.classes}`,
  reader: '@grassflow/snli-head',
};

function headTensors(c: HeadConfig, seed: number): Map<string, SafetensorsTensorInput> {
  const w = Float32Array.from({ length: c.classes * c.dIn }, (_, i) => Math.sin(seed + i));
  const b = Float32Array.from({ length: c.classes }, (_, i) => seed * 10 + i);
  return new Map<string, SafetensorsTensorInput>([
    ['w', { dtype: 'F32', shape: [c.classes, c.dIn], data: w }],
    ['b', { dtype: 'F32', shape: [c.classes], data: b }],
  ]);
}

const config: HeadConfig = { kind: 'head', dIn: 4, classes: 3 };

async function errorOf(p: Promise<unknown>): Promise<CheckpointError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CheckpointError);
  return e as CheckpointError;
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grassflow-folder-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('saveCheckpointFolder → loadCheckpointFolder', () => {
  it('round-trips a non-LM model: config, tensors, extra tensors and extra JSON; records sizes and SHA-256s', async () => {
    const dir = join(root, 'round', 'ck');
    const extraTensors = new Map<string, SafetensorsTensorInput>([
      ['adam.m.w', { dtype: 'F32', shape: [3, 4], data: new Float32Array(12).fill(0.5) }],
      ['rng', { dtype: 'I32', shape: [2], data: Int32Array.from([7, -8]) }],
      ['mask', { dtype: 'BOOL', shape: [3], data: Uint8Array.from([1, 0, 1]) }],
    ]);
    const saved = await saveCheckpointFolder(dir, {
      model: config,
      tensors: headTensors(config, 1),
      metadata: { 'grassflow.kind': 'head' },
      extraTensors,
      extra: { step: 12, best: { loss: 0.25 } },
    });
    expect(saved.dir).toBe(dir);
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'extra.safetensors', 'model.safetensors']);

    const text = await readFile(join(dir, 'config.json'), 'utf8');
    const json = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['format', 'formatVersion', 'model', 'files', 'extra']);
    expect(json['model']).toEqual(config);
    expect(text.endsWith('}\n')).toBe(true);
    for (const name of ['model.safetensors', 'extra.safetensors']) {
      const bytes = await readFile(join(dir, name));
      expect((json['files'] as Record<string, unknown>)[name]).toEqual({
        bytes: bytes.byteLength,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
    }
    const { metadata } = await readSafetensorsFile(join(dir, 'model.safetensors'));
    expect(metadata).toEqual({
      format: 'pt',
      'grassflow.format': 'grassflow-checkpoint',
      'grassflow.formatVersion': '1',
      'grassflow.kind': 'head',
    });

    const loaded = await loadCheckpointFolder(dir, headOptions);
    expect(loaded.model).toEqual(config);
    expect(loaded.recovered).toBe(false);
    expect(loaded.formatVersion).toBe(1);
    expect(loaded.extra).toEqual({ step: 12, best: { loss: 0.25 } });
    const expected = headTensors(config, 1);
    expect([...loaded.tensors.keys()].sort()).toEqual(['b', 'w']);
    for (const [name, t] of expected) {
      expect(loaded.tensors.get(name)?.shape).toEqual(t.shape);
      expect(Array.from(loaded.tensors.get(name)?.data ?? [])).toEqual(Array.from(t.data as Float32Array));
    }
    expect(loaded.extraTensors.get('rng')).toMatchObject({ dtype: 'I32', shape: [2] });
    expect(Array.from(loaded.extraTensors.get('rng')?.data ?? [])).toEqual([7, -8]);
    expect(Array.from(loaded.extraTensors.get('mask')?.data ?? [])).toEqual([1, 0, 1]);
  });

  it('without options any JSON model and any F32 tensors load; no extra file when there are no extra tensors', async () => {
    const dir = join(root, 'plain');
    await saveCheckpointFolder(dir, {
      model: ['anything', 1],
      tensors: headTensors(config, 2),
      extraTensors: new Map(),
    });
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'model.safetensors']);
    const loaded = await loadCheckpointFolder(dir);
    expect(loaded.model).toEqual(['anything', 1]);
    expect(loaded.extraTensors.size).toBe(0);
    expect(loaded.extra).toEqual({});
  });
});

describe('errors', () => {
  it('refuses model tensors that are not F32 and extra that is not plain JSON', async () => {
    const bad = new Map<string, SafetensorsTensorInput>([['w', { dtype: 'I32', shape: [1], data: new Int32Array(1) }]]);
    const e1 = await errorOf(saveCheckpointFolder(join(root, 'bad1'), { model: config, tensors: bad }));
    expect(e1.code).toBe('INVALID_ARGUMENT');
    expect(e1.message).toBe("model tensor 'w' has dtype I32; checkpoints store F32");
    const e2 = await errorOf(
      saveCheckpointFolder(join(root, 'bad2'), {
        model: config,
        tensors: headTensors(config, 1),
        extra: { t: new Date() } as never,
      }),
    );
    expect(e2.message).toMatch(/extra\.t is a Date; extra must be plain JSON/);
  });

  it('marks a config.json without file records as unverified, and refuses NaN or ±Infinity weights or moments', async () => {
    const dir = join(root, 'cross-checks');
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1) });
    expect((await loadCheckpointFolder(dir, headOptions)).unverified).toEqual([]);
    const configPath = join(dir, 'config.json');
    const saved = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
    const { files: _files, ...withoutFiles } = saved;
    await writeFile(configPath, JSON.stringify(withoutFiles)); // hand-written, e.g. exported from PyTorch
    expect((await loadCheckpointFolder(dir, headOptions)).unverified).toEqual(['model.safetensors']);

    for (const [bad, label] of [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      const tensors = headTensors(config, 2);
      (tensors.get('w')?.data as Float32Array)[5] = bad; // saved with a matching checksum: only the values are wrong
      await saveCheckpointFolder(dir, { model: config, tensors });
      const e2 = await errorOf(loadCheckpointFolder(dir, headOptions));
      expect(e2.code).toBe('NON_FINITE');
      expect(e2.message).toContain(`tensor 'w' holds ${label} (entry 5)`);
      expect(e2.message).toMatch(/diverged .* checkpoints\/best/);
    }
    const moments = new Map<string, SafetensorsTensorInput>([
      ['adam.v.w', { dtype: 'F32', shape: [2], data: Float32Array.from([1, Number.NaN]) }],
    ]);
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 3), extraTensors: moments });
    expect((await errorOf(loadCheckpointFolder(dir, headOptions))).message).toMatch(
      /extra\.safetensors: tensor 'adam\.v\.w' holds NaN/,
    );
  });

  it('checks the tensors against expectedTensors, naming the model with describeModel', async () => {
    const dir = join(root, 'mismatch');
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1) });
    const cases: [Partial<LoadCheckpointFolderOptions<HeadConfig>>, CheckpointErrorCode, RegExp][] = [
      [
        {
          expectedTensors: () =>
            new Map([
              ['w', [3, 4]],
              ['b', [3]],
              ['c', [1]],
            ]),
        },
        'TENSOR_MISSING',
        /has no tensor 'c' \(expected float32 \[1\]\)/,
      ],
      [
        {
          expectedTensors: () =>
            new Map([
              ['w', [4, 3]],
              ['b', [3]],
            ]),
        },
        'TENSOR_SHAPE',
        /tensor 'w' has shape \[3, 4\] but the model expects \[4, 3\]/,
      ],
      [
        { expectedTensors: () => new Map([['w', [3, 4]]]) },
        'TENSOR_UNEXPECTED',
        /holds tensor 'b' F32 \[3\] that the model does not have/,
      ],
    ];
    for (const [override, code, message] of cases) {
      const e = await errorOf(loadCheckpointFolder(dir, { ...headOptions, ...override }));
      expect(e.code).toBe(code);
      expect(e.message).toMatch(message);
      expect(e.message).toMatch(/the weights do not belong to this config\.json \(head dIn=4 classes=3\)/);
    }
  });

  it('reports an invalid model config, a newer version (naming the reader), and a changed file', async () => {
    const dir = join(root, 'config-errors');
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1) });
    const e1 = await errorOf(loadCheckpointFolder(dir, { parseModel: () => parseHead({ kind: 'lm' }) }));
    expect(e1.code).toBe('INVALID_CONFIG');
    expect(e1.message).toMatch(/"model" is not a valid model config \(not a head config: \{"kind":"lm"\}\)/);

    const configPath = join(dir, 'config.json');
    const original = await readFile(configPath, 'utf8');
    await writeFile(configPath, original.replace('"formatVersion": 1', '"formatVersion": 2'));
    const e2 = await errorOf(loadCheckpointFolder(dir, headOptions));
    expect(e2.code).toBe('UNSUPPORTED_VERSION');
    expect(e2.message).toMatch(
      /but this @grassflow\/snli-head reads version 1: upgrade @grassflow\/snli-head to load it/,
    );
    await writeFile(configPath, original);

    // Same size, one byte changed: only the SHA-256 notices.
    const modelPath = join(dir, 'model.safetensors');
    const bytes = await readFile(modelPath);
    bytes[bytes.byteLength - 1] = (bytes[bytes.byteLength - 1] ?? 0) ^ 0xff;
    await writeFile(modelPath, bytes);
    const e3 = await errorOf(loadCheckpointFolder(dir, headOptions));
    expect(e3.code).toBe('CORRUPT_FILE');
    expect(e3.message).toMatch(/does not match the SHA-256 recorded in config\.json/);
    const unchecked = await loadCheckpointFolder(dir, { ...headOptions, verifyChecksums: false });
    expect(unchecked.tensors.size).toBe(2);
  });

  it('replaceDirectory refuses a folder that holds other files', async () => {
    const dir = join(root, 'foreign');
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1) });
    await writeFile(join(dir, 'notes.txt'), 'mine');
    const e = await errorOf(replaceDirectory(dir, nodeFileSystem, () => Promise.resolve()));
    expect(e.code).toBe('TARGET_NOT_CHECKPOINT');
    expect(e.message).toMatch(/would delete "notes\.txt"/);
  });
});

describe('crash safety', () => {
  it('a crash at every file-system operation leaves the old or the new checkpoint, and the next save repairs it', async () => {
    const probe = new RecordingFs(root);
    const probeDir = join(root, 'probe', 'ck');
    await saveCheckpointFolder(probeDir, { model: config, tensors: headTensors(config, 1), extra: { step: 1 } });
    await saveCheckpointFolder(probeDir, {
      model: config,
      tensors: headTensors(config, 2),
      extra: { step: 2 },
      fs: probe,
    });
    const total = probe.log.length;
    const steps: number[] = [];
    for (let k = 1; k <= total; k++) {
      const dir = join(root, `crash-${k}`, 'ck');
      await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1), extra: { step: 1 } });
      const fs = new RecordingFs(root, k);
      await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 2), extra: { step: 2 }, fs }).catch(
        () => undefined,
      );
      await fs.reap();
      const loaded = await loadCheckpointFolder(dir, headOptions);
      const step = loaded.extra['step'] as number;
      steps.push(step);
      const b = Array.from(loaded.tensors.get('b')?.data ?? []);
      expect(b, `crash at ${k}`).toEqual(step === 1 ? [10, 11, 12] : [20, 21, 22]); // tensors match the extra JSON
      await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 3), extra: { step: 3 } });
      expect(await readdir(join(root, `crash-${k}`))).toEqual(['ck']);
    }
    expect(steps[0]).toBe(1);
    expect(steps[steps.length - 1]).toBe(2);
    expect(steps.slice(steps.indexOf(2)).every((s) => s === 2)).toBe(true);
  });

  it('loads the previous checkpoint from <dir>.old-* when a save died between its two renames', async () => {
    const parent = join(root, 'between');
    const dir = join(parent, 'ck');
    await saveCheckpointFolder(dir, { model: config, tensors: headTensors(config, 1), extra: { step: 1 } });
    await rename(dir, `${dir}.old-99-0123456789ab`);
    await mkdir(`${dir}.tmp-99-0123456789ab`);
    const loaded = await loadCheckpointFolder(dir, headOptions);
    expect(loaded.recovered).toBe(true);
    expect(loaded.dir).toBe(`${dir}.old-99-0123456789ab`);
    expect(loaded.extra).toEqual({ step: 1 });
  });
});

// Broken checkpoints and bad save arguments: each fails with a CheckpointError whose message says what and what to do.
import { mkdir, mkdtemp, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointError,
  createModel,
  loadCheckpoint,
  saveCheckpoint,
  type CheckpointErrorCode,
  type CheckpointJson,
  type LanguageModel,
} from '@grassflow/gpu-layers';
import { editConfig, rewriteWeights, tinyConfig, tinyModel, useCpu } from './checkpoint-helpers.js';

let root: string;
let model: LanguageModel;
let counter = 0;

beforeAll(async () => {
  await useCpu();
  root = await mkdtemp(join(tmpdir(), 'grassflow-ckpt-bad-'));
  model = tinyModel({}, 11);
});
afterAll(async () => {
  model.dispose();
  await rm(root, { recursive: true, force: true });
});

/** A fresh, valid checkpoint of the tiny grassmann model. */
async function fresh(): Promise<string> {
  const dir = join(root, `c${counter++}`);
  await saveCheckpoint(dir, model, { extra: { step: 5 } });
  return dir;
}

async function loadError(dir: string): Promise<CheckpointError> {
  const error = await loadCheckpoint(dir).then(
    (ok) => {
      ok.model.dispose();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CheckpointError);
  return error as CheckpointError;
}

async function expectLoadError(
  dir: string,
  code: CheckpointErrorCode,
  ...messages: (string | RegExp)[]
): Promise<void> {
  const error = await loadError(dir);
  expect(error.code).toBe(code);
  for (const m of messages) expect(error.message).toMatch(m);
}

describe('loading a broken checkpoint', () => {
  it('missing folder', async () => {
    await expectLoadError(
      join(root, 'nope'),
      'NOT_FOUND',
      /checkpoint folder .*nope does not exist/,
      /a run folder's checkpoints are in <run>\/checkpoints\/best and <run>\/checkpoints\/latest/,
    );
  });

  it('a file instead of a folder', async () => {
    const path = join(root, 'a-file');
    await writeFile(path, 'x');
    await expectLoadError(path, 'NOT_A_DIRECTORY', /is a file, not a checkpoint folder/);
  });

  it('missing config.json', async () => {
    const dir = await fresh();
    await unlink(join(dir, 'config.json'));
    await expectLoadError(dir, 'MISSING_FILE', /config\.json is missing/, /not a complete grassflow checkpoint/);
  });

  it('missing model.safetensors', async () => {
    const dir = await fresh();
    await unlink(join(dir, 'model.safetensors'));
    await expectLoadError(
      dir,
      'MISSING_FILE',
      /model\.safetensors is missing/,
      /copy the whole folder again or re-save/,
    );
  });

  it('truncated model.safetensors: the size recorded in config.json catches it', async () => {
    const dir = await fresh();
    const path = join(dir, 'model.safetensors');
    const size = (await readFile(path)).byteLength;
    await truncate(path, size - 100);
    await expectLoadError(
      dir,
      'CORRUPT_FILE',
      new RegExp(`has ${size - 100} bytes but config\\.json records ${size}`),
      /truncated/,
    );
  });

  it('truncated model.safetensors without size records: the safetensors reader catches it', async () => {
    const dir = await fresh();
    await editConfig(dir, (c) => delete c['files']);
    const path = join(dir, 'model.safetensors');
    await truncate(path, (await readFile(path)).byteLength - 100);
    const error = await loadError(dir);
    expect(error.code).toBe('CORRUPT_FILE');
    expect(error.message).toMatch(
      /model\.safetensors: the header describes \d+ bytes of tensor data but only \d+ follow/,
    );
    expect((error.cause as { code?: string }).code).toBe('TRUNCATED');
  });

  it('a flipped data byte: the SHA-256 recorded in config.json catches it', async () => {
    const dir = await fresh();
    const path = join(dir, 'model.safetensors');
    const bytes = await readFile(path);
    bytes[bytes.byteLength - 5] = (bytes[bytes.byteLength - 5] ?? 0) ^ 0x40;
    await writeFile(path, bytes);
    await expectLoadError(dir, 'CORRUPT_FILE', /does not match the SHA-256 recorded in config\.json/);
    // Opting out of the checksum loads the (altered) weights.
    const loaded = await loadCheckpoint(dir, { verifyChecksums: false });
    loaded.model.dispose();
  });

  it('config says dModel = 16 but the tensors have d = 8', async () => {
    const dir = join(root, 'd8');
    const small = createModel(tinyConfig({ dModel: 8 }), { seed: 1 });
    await saveCheckpoint(dir, small);
    small.dispose();
    await editConfig(dir, (c) => {
      (c['model'] as Record<string, unknown>)['dModel'] = 16;
    });
    await expectLoadError(
      dir,
      'TENSOR_SHAPE',
      /model\.safetensors holds \d+ values but its config\.json describes a model of \d+ parameters/,
      /do not belong to this config\.json \(kind=grassmann vocabSize=64 dModel=16/,
    );
  });

  it('a missing tensor (another of its size in its place)', async () => {
    const dir = await fresh();
    await rewriteWeights(dir, (t) => {
      t.set('blocks.1.ffn.fc2.other', t.get('blocks.1.ffn.fc2.bias')!);
      t.delete('blocks.1.ffn.fc2.bias');
    });
    await expectLoadError(
      dir,
      'TENSOR_MISSING',
      /has no tensor 'blocks\.1\.ffn\.fc2\.bias' \(expected float32 \[16\]\)/,
    );
  });

  it('an unexpected extra tensor', async () => {
    const dir = await fresh();
    await rewriteWeights(dir, (t) =>
      t.set('head.weight', { dtype: 'F32', shape: [64, 16], data: new Float32Array(64 * 16) }),
    );
    await expectLoadError(
      dir,
      'TENSOR_UNEXPECTED',
      /holds tensor 'head\.weight' F32 \[64, 16\] that the model does not have/,
    );
  });

  it('a wrong dtype', async () => {
    const dir = await fresh();
    await rewriteWeights(dir, (t) => {
      const w = t.get('pos_emb.weight')!;
      t.set('pos_emb.weight', {
        dtype: 'F64',
        shape: w.shape,
        data: Float64Array.from(new Float32Array(w.data.slice().buffer)),
      });
    });
    await expectLoadError(dir, 'TENSOR_DTYPE', /tensor 'pos_emb\.weight' is stored as F64, expected F32/);
  });

  it('several problems: the first in model order is reported', async () => {
    const dir = await fresh();
    await rewriteWeights(dir, (t) => {
      t.delete('blocks.1.ln2.bias');
      t.set('blocks.0.mixer.w_red.weight', { dtype: 'F32', shape: [4, 8], data: new Float32Array(32) });
      t.set('zzz', { dtype: 'F32', shape: [48], data: new Float32Array(48) }); // as many values as were taken
    });
    await expectLoadError(
      dir,
      'TENSOR_SHAPE',
      /'blocks\.0\.mixer\.w_red\.weight' has shape \[4, 8\] but the model expects \[4, 16\]/,
    );
  });

  const badConfigs: [string, string, CheckpointErrorCode, RegExp][] = [
    [
      'not JSON',
      '{"format": "grassflow-checkpoint", ',
      'INVALID_CONFIG',
      /config\.json is not valid JSON \(expected a string key at the end of the text \(character 35\)\): restore it/,
    ],
    ['a JSON array', '[1, 2]', 'INVALID_CONFIG', /must hold a JSON object, found an array/],
    [
      'a duplicate key',
      '{"format": "grassflow-checkpoint", "format": "x"}',
      'INVALID_CONFIG',
      /duplicate key "format"/,
    ],
    [
      'another format',
      '{"format": "keras", "formatVersion": 1}',
      'INVALID_CONFIG',
      /has format "keras", expected "grassflow-checkpoint": this folder is not a grassflow checkpoint/,
    ],
    ['no format field', '{"formatVersion": 1}', 'INVALID_CONFIG', /has format undefined/],
    [
      'a newer format version',
      '{"format": "grassflow-checkpoint", "formatVersion": 2}',
      'UNSUPPORTED_VERSION',
      /formatVersion 2, but this @grassflow\/gpu-layers reads version 1: upgrade/,
    ],
    [
      'format version 0',
      '{"format": "grassflow-checkpoint", "formatVersion": 0}',
      'INVALID_CONFIG',
      /formatVersion 0; it must be a positive integer/,
    ],
    [
      'format version as a string',
      '{"format": "grassflow-checkpoint", "formatVersion": "1"}',
      'INVALID_CONFIG',
      /formatVersion "1"/,
    ],
  ];
  it.each(badConfigs)('malformed config.json: %s', async (_label, text, code, message) => {
    const dir = await fresh();
    await writeFile(join(dir, 'config.json'), text);
    await expectLoadError(dir, code, message);
  });

  it('malformed config.json: an invalid model field', async () => {
    const dir = await fresh();
    await editConfig(dir, (c) => {
      (c['model'] as Record<string, unknown>)['norm'] = 'middle';
    });
    await expectLoadError(
      dir,
      'INVALID_CONFIG',
      /"model" is not a valid model config \(ModelConfig\.norm: must be one of 'post', 'pre', got "middle"\)/,
    );
  });

  it('malformed config.json: a file record without a checksum', async () => {
    const dir = await fresh();
    await editConfig(dir, (c) => {
      c['files'] = { 'model.safetensors': { bytes: 10 } };
    });
    await expectLoadError(
      dir,
      'INVALID_CONFIG',
      /"files" entry "model\.safetensors" must be \{"bytes": integer, "sha256": 64 hex digits\}/,
    );
  });

  it('extra.safetensors listed in config.json but missing', async () => {
    const dir = join(root, 'extra-missing');
    const m = tf.tensor1d([1, 2]);
    await saveCheckpoint(dir, model, { extraTensors: new Map([['m', m]]) });
    m.dispose();
    await unlink(join(dir, 'extra.safetensors'));
    await expectLoadError(dir, 'MISSING_FILE', /extra\.safetensors is missing/);
  });
});

describe('saving with bad arguments', () => {
  const saveError = async (dir: string, options: Parameters<typeof saveCheckpoint>[2]): Promise<CheckpointError> => {
    const error = await saveCheckpoint(dir, model, options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CheckpointError);
    return error as CheckpointError;
  };

  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic['self'] = cyclic;
  const badExtras: [string, unknown, RegExp][] = [
    ['NaN', { loss: NaN }, /extra\.loss is NaN; JSON has no NaN or Infinity/],
    ['undefined', { step: undefined }, /extra\.step is a undefined/],
    ['a function', { f: () => 1 }, /extra\.f is a function/],
    ['a Date', { when: new Date(0) }, /extra\.when is a Date/],
    [
      'a tensor',
      { t: tf.scalar(1) },
      /extra\.t is a Tensor; extra must be plain JSON \(store tensors in extraTensors\)/,
    ],
    ['a cycle', cyclic, /extra\.self refers back to itself/],
    ['an array at the top', [1, 2], /extra must be a plain JSON object/],
  ];
  it.each(badExtras)('extra holding %s', async (_label, extra, message) => {
    const dir = join(root, `bad-extra-${counter++}`);
    const error = await saveError(dir, { extra: extra as { [key: string]: CheckpointJson } });
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(message);
  });

  it('an extra tensor of an unsupported dtype', async () => {
    const c = tf.complex([1], [2]);
    const error = await saveError(join(root, 'bad-dtype'), { extraTensors: new Map([['c', c]]) });
    c.dispose();
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/extra tensor 'c' has dtype complex64; checkpoints store float32, int32, bool/);
  });

  it('refuses to replace a folder that is not a checkpoint', async () => {
    const dir = join(root, 'my-documents');
    await mkdir(dir);
    await writeFile(join(dir, 'thesis.tex'), 'precious');
    const error = await saveError(dir, {});
    expect(error.code).toBe('TARGET_NOT_CHECKPOINT');
    expect(error.message).toMatch(/refusing to replace .*my-documents: it is not empty and not a grassflow checkpoint/);
    expect(await readFile(join(dir, 'thesis.tex'), 'utf8')).toBe('precious');
  });

  it('refuses to delete foreign files inside a checkpoint folder', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'tokenizer.json'), '{}');
    const error = await saveError(dir, {});
    expect(error.code).toBe('TARGET_NOT_CHECKPOINT');
    expect(error.message).toMatch(/would delete "tokenizer\.json"; move those files elsewhere first/);
    expect(await loadCheckpoint(dir).then((l) => (l.model.dispose(), l.extra))).toEqual({ step: 5 });
  });

  it('saves into an existing empty folder', async () => {
    const dir = join(root, 'empty-folder');
    await mkdir(dir);
    await saveCheckpoint(dir, model);
    const loaded = await loadCheckpoint(dir);
    loaded.model.dispose();
  });
});

// `grassflow-lm inspect` end to end on tiny checkpoints the test saves itself, and its clear errors.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createModel, initBackend, preset, saveCheckpoint } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '@grassflow/training';
import { inspectCli, splitWindows } from '../src/inspect/command.js';
import type { InspectResult } from '../src/inspect/model.js';
import { cli, DATA_DIR, tmp } from './helpers.js';

/** A tiny checkpoint on the WordPiece vocabulary (V 30,522), as grassflow-lm train would record it. */
async function tinyCheckpoint(kind: 'grassmann' | 'transformer', attention: 'dpa' | 'ea' = 'dpa'): Promise<string> {
  const dir = join(tmp(), `${kind}-${attention}`);
  const model = createModel(
    preset('tiny', {
      kind,
      attention,
      vocabSize: 30522,
      dModel: 8,
      dFF: 16,
      r: 4,
      maxLen: 16,
      nLayers: 2,
      offsets: [[1], [2, 3]],
    }),
    { seed: 4 },
  );
  await saveCheckpoint(dir, model, { extra: { run: { tokenizer: 'wordpiece' } } });
  model.dispose();
  return dir;
}

const readJson = (out: string) =>
  JSON.parse(readFileSync(join(out, 'inspect.json'), 'utf8')) as InspectResult & { input: string };

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('splitWindows', () => {
  it('spreads the windows evenly from the first to the last full window', () => {
    const ids = Int32Array.from({ length: 100 }, (_, i) => i);
    expect(splitWindows(ids, 10, 4).map((w) => [w.start, w.ids[0], w.ids.length])).toEqual([
      [0, 0, 10],
      [30, 30, 10],
      [60, 60, 10],
      [90, 90, 10],
    ]);
    expect(splitWindows(ids, 10, 1).map((w) => w.start)).toEqual([0]);
    expect(splitWindows(ids.subarray(0, 8), 10, 3).map((w) => w.ids.length)).toEqual([8]); // shorter than L: one window
  });
});

describe.skipIf(DATA_DIR === undefined)('grassflow-lm inspect', () => {
  it('a Grassmann checkpoint: every layer and offset in inspect.json and report.md, with the charts', async () => {
    const ck = await tinyCheckpoint('grassmann');
    const out = join(tmp(), 'g');
    const r = cli(['inspect', '--checkpoint', ck, '--text', 'The game was released in Japan in 2011.', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^layer 0 Δ 1: α 0\.\d+ ± /m);
    expect(r.stdout).toMatch(/^layer 1 Δ 3: /m);
    expect(r.stdout).toContain(`report: ${join(out, 'report.md')}`);
    const json = readJson(out);
    expect(json.samples[0]?.tokens).toEqual(['the', 'game', 'was', 'released', 'in', 'japan', 'in', '2011', '.']);
    expect(json.grassmann?.map((l) => [l.layer, l.geometry.map((g) => g.delta)])).toEqual([
      [0, [1]],
      [1, [2, 3]],
    ]);
    expect(json.grassmann?.[1]?.geometry[1]?.angleDeg[0]?.slice(0, 4).map((v) => v === null)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(json.attention).toBeUndefined();
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    for (const row of ['| 0 | 1 | h |', '| 1 | 2 | h |', '| 1 | 3 | h |']) expect(md).toContain(row);
    for (const chart of ['gate', 'geometric-share', 'flow', 'trajectory', 'angles', 'areas']) {
      expect(md).toContain(`(${chart}.png)`);
      expect(existsSync(join(out, `${chart}.png`)) && existsSync(join(out, `${chart}.svg`))).toBe(true);
    }
    expect(readFileSync(join(out, 'gate.svg'), 'utf8')).toContain('>japan<');
  });

  it('a Transformer (EA) checkpoint on windows of wiki.valid: the attention report', async () => {
    const ck = await tinyCheckpoint('transformer', 'ea');
    const out = join(tmp(), 't');
    const r = cli(['inspect', '--checkpoint', ck, '--split', 'valid', '--samples', '3', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^layer 1: entropy \(nats\) by head [\d.]+ [\d.]+; weight on q·k<0 [\d.]+ [\d.]+$/m);
    const json = readJson(out);
    expect(json.grassmann).toBeUndefined();
    expect(json.samples.map((s) => s.ids.length)).toEqual([16, 16, 16]);
    expect(json.input).toMatch(/^3 windows of 16 tokens of wiki\.valid/);
    expect(json.attention?.map((l) => [l.layer, l.kind, l.heads.length])).toEqual([
      [0, 'ea', 2],
      [1, 'ea', 2],
    ]);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('## Attention entropy per head and layer');
    expect(md).toContain('weight on q·k < 0');
    expect(md.match(/^\| [01] \| [01] \| /gm)?.length).toBe(4); // 2 layers × 2 heads
    for (const chart of ['entropy', 'entropy-heads']) expect(existsSync(join(out, `${chart}.png`))).toBe(true);
  });

  it('a missing folder (exit 2) or one that is no checkpoint (exit 1) says so', () => {
    const missing = cli(['inspect', '--checkpoint', '/nonexistent/ck', '--text', 'the', '--out', join(tmp(), 'o')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--checkpoint /nonexistent/ck does not exist');
    const empty = join(tmp(), 'not-a-checkpoint');
    mkdirSync(empty);
    const notCk = cli(['inspect', '--checkpoint', empty, '--text', 'the', '--out', join(tmp(), 'o')]);
    expect(notCk.code).toBe(1);
    expect(notCk.stderr).toMatch(/CheckpointError: .*config\.json/);
  });

  it('bad flags are usage errors naming the flag, before anything is loaded', async () => {
    const o = join(tmp(), 'o');
    const usage = async (argv: string[], message: string, flag: string) => {
      const err: unknown = await inspectCli.run(argv).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).message).toContain(message);
      expect((err as UsageError).flag).toBe(flag);
    };
    await usage(['--checkpoint', 'ck', '--text', '  \n ', '--out', o], '--text is empty', 'text');
    await usage(['--checkpoint', 'ck', '--out', o], 'give exactly one of --text "…" or --split valid|test', 'text');
    await usage(['--checkpoint', 'ck', '--text', 'a', '--split', 'valid', '--out', o], 'give exactly one of', 'split');
    await usage(['--checkpoint', 'ck', '--text', 'a'], '--out DIR is required', 'out');
    await usage(['--text', 'a', '--out', o], '--checkpoint DIR is required', 'checkpoint');
    await usage(
      ['--checkpoint', 'ck', '--text', 'a', '--samples', '3', '--out', o],
      '--samples goes with --split',
      'samples',
    );
  });
});

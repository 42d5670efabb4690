// grassflow-lm export: a tiny run as a model folder, read back by fromPretrained, generate and eval.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend, loadCheckpoint } from '@grassflow/gpu-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromPretrained } from '../src/export/pretrained';
import { loadModelAndTokenizer } from '../src/shared/checkpoint-dir';
import { cli, DATA_DIR, TINY, tmp } from './helpers';

describe.skipIf(DATA_DIR === undefined)('export (tiny, WikiText-2; needs GRASSFLOW_DATA_DIR)', () => {
  const root = tmp();
  const run = join(root, 'run');
  const out = join(root, 'export');

  beforeAll(async () => {
    // generate's default in the CLI: one wasm thread, so the in-process sampler sees the same logits
    await initBackend({ backend: 'wasm', threads: 1 });
    const train = cli(['train', ...TINY, '--steps', '3', '--out', run]);
    expect(train.code, train.stderr).toBe(0);
    const exported = cli(['export', run, '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
  });

  it('writes the model, its tokenizer and a card, and no optimizer or RNG state', () => {
    expect(readdirSync(out).sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer_config.json',
      'vocab.txt',
    ]);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as {
      model: { kind: string; vocabSize: number };
      files: Record<string, unknown>;
      extra: Record<string, unknown>;
    };
    expect(config.model.kind).toBe('grassmann');
    expect(Object.keys(config.files)).toEqual(['model.safetensors']); // no extra.safetensors (moments)
    expect(Object.keys(config.extra).sort()).toEqual(['pretrained', 'run', 'source']); // no `trainer` (RNG, data)
    expect(readFileSync(join(out, 'vocab.txt'))).toEqual(
      readFileSync(join(DATA_DIR as string, 'bert-vocab/vocab.txt')),
    );
    const tokenizer = JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    expect(tokenizer).toMatchObject({ kind: 'wordpiece', files: { vocab: 'vocab.txt' }, lineEndToken: '[SEP]' });
  });

  it('the card shows the architecture, parameters, tokens seen, the PPL and the command', () => {
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    const runCfg = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as { command: string; params: number };
    expect(card).toContain(runCfg.command);
    expect(card).toContain(`Parameters: ${runCfg.params.toLocaleString('en-US')}.`);
    expect(card).toMatch(/tokens seen: 384\./); // 3 steps of 8×16
    expect(card).toMatch(/Validation perplexity: \d+\.\d\d \(best evaluation, step 3/);
    expect(card).toMatch(/Test perplexity: not recorded by the run/);
  });

  it('fromPretrained(dir).generate gives the text grassflow-lm generate prints for the same seed', async () => {
    const pretrained = await fromPretrained(out);
    try {
      const text = await pretrained.generate('the history of', { maxTokens: 5, seed: 1 });
      expect(text.startsWith('the history of ')).toBe(true);
      expect(text.length).toBeGreaterThan('the history of '.length);
      for (const checkpoint of [out, run]) {
        const printed = cli([
          'generate',
          '--checkpoint',
          checkpoint,
          '--prompt',
          'the history of',
          '--max-tokens',
          '5',
        ]);
        expect(printed.code, printed.stderr).toBe(0);
        expect(printed.stdout).toBe(`${text}\n`); // --seed defaults to 1, as generate's options
      }
      let streamed = '';
      for await (const piece of pretrained.stream('the history of', { maxTokens: 5, seed: 1 })) streamed += piece;
      expect(streamed).toBe(text);
    } finally {
      pretrained.dispose();
    }
  });

  it('eval and generate load an export as a run (same weights and tokenizer); loadCheckpoint reads a run', async () => {
    // eval scores all of a split (minutes here): its loader, loadModelAndTokenizer, is compared instead
    const a = await loadModelAndTokenizer(out, DATA_DIR as string, undefined);
    const b = await loadModelAndTokenizer(run, DATA_DIR as string, undefined);
    try {
      expect(a.tok.id).toBe(b.tok.id);
      expect(a.dir).toBe(out);
      const wa = a.model.stateDict();
      const wb = b.model.stateDict();
      expect([...wa.keys()]).toEqual([...wb.keys()]);
      for (const [name, t] of wa) expect(t.dataSync(), name).toEqual((wb.get(name) as typeof t).dataSync());
      for (const t of [...wa.values(), ...wb.values()]) t.dispose();
    } finally {
      a.model.dispose();
      b.model.dispose();
    }
    const ck = await loadCheckpoint(run);
    expect(ck.dir).toBe(join(run, 'checkpoints', 'best'));
    ck.model.dispose();
    for (const t of ck.extraTensors.values()) t.dispose();
  });

  it('replaces an earlier export, refuses any other non-empty --out, and names a bad RUN', () => {
    expect(cli(['export', run, '--out', out]).code).toBe(0);
    const other = join(root, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'keep me');
    const refused = cli(['export', run, '--out', other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to write to .*other: it is not empty and not a pretrained folder/);
    expect(readdirSync(other)).toEqual(['notes.txt']);
    const missing = cli(['export', join(root, 'nope'), '--out', join(root, 'x')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/run folder .*nope does not exist/);
    const notRun = cli(['export', out, '--out', join(root, 'x')]);
    expect(notRun.stderr).toMatch(/is not a grassflow-lm run folder/);
    expect(existsSync(join(root, 'x'))).toBe(false);
    expect(cli(['export', '--out', join(root, 'x')]).stderr).toMatch(/the run folder is required/);
  });
});

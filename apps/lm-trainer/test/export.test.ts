// grassflow-lm export: a tiny run as a model folder, read back by fromPretrained, generate and eval — from the folder
// and from its URL on 127.0.0.1.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fromPretrained, initBackend, loadCheckpoint } from '@grassflow/gpu-layers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunFolder } from '@grassflow/training';
import { heldOutMetric } from '../src/shared/held-out.js';
import { loadModelAndTokenizer } from '../src/shared/checkpoint-dir.js';
import { cli, cliWhileServing, DATA_DIR, TINY, tmp, type CliResult } from './helpers.js';

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
    // every other file's size and SHA-256, so that a copy or a download is checked file by file
    const records = (config.extra['pretrained'] as { files: Record<string, { bytes: number; sha256: string }> }).files;
    expect(Object.keys(records).sort()).toEqual(['README.md', 'tokenizer_config.json', 'vocab.txt']);
    for (const [name, r] of Object.entries(records)) {
      const bytes = readFileSync(join(out, name));
      expect(r, name).toEqual({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    }
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
    expect(card).toMatch(/Test perplexity: not measured \(measure it: `grassflow-lm eval/);
    expect(card).toMatch(/Code commit [0-9a-f]{7,}|Code commit unknown/);
  });

  it("the card shows the test PPL compare recorded in the run, and says when it is another checkpoint's", async () => {
    // the run of beforeAll (its card without a test PPL is checked above), with records as compare appends them
    const scored = run; // 3 steps: checkpoints/best is step 3
    const card = async (step: number): Promise<string> => {
      await new RunFolder(scored).appendMetric(
        heldOutMetric(step, { ppl: 812.5, tokens: 255 }, { ppl: 901.25, tokens: 255 }, 'grassflow-lm compare'),
      );
      const exported = cli(['export', scored, '--out', join(root, 'scored-export')]);
      expect(exported.code, exported.stderr).toBe(0);
      return readFileSync(join(root, 'scored-export', 'README.md'), 'utf8');
    };
    expect(await card(1)).toContain('Test perplexity: 901.25 (step 1, not the exported checkpoint, first 255 tokens');
    expect(await card(3)).toContain(
      'Test perplexity: 901.25 (step 3, first 255 tokens of wiki.test, scored by `grassflow-lm compare`).',
    );
    // the exported checkpoint's record, not merely the last one
    expect(await card(1)).toContain('Test perplexity: 901.25 (step 3, first 255 tokens of wiki.test');
  });

  it("export --from latest: the last step's checkpoint, and the card shows study run's scores on all of both splits", async () => {
    // a record as `study run` appends it for the run's latest checkpoint (step 3 of 3 here: best and latest agree)
    await new RunFolder(run).appendMetric(
      heldOutMetric(3, { ppl: 700.5, tokens: 222_442 }, { ppl: 650.25, tokens: 250_509 }, 'grassflow-lm study', true),
    );
    const target = join(root, 'latest-export');
    const exported = cli(['export', run, '--from', 'latest', '--out', target]);
    expect(exported.code, exported.stderr).toBe(0);
    const card = readFileSync(join(target, 'README.md'), 'utf8');
    expect(card).toContain('(checkpoints/latest)');
    expect(card).toContain('Validation perplexity, all 222,442 targets of wiki.valid: 700.50 (step 3).');
    expect(card).toContain(
      'Test perplexity: 650.25 (step 3, all 250,509 targets of wiki.test, scored by `grassflow-lm study`).',
    );
    const bad = cli(['export', join(root, 'nowhere'), '--from', 'latest', '--out', join(root, 'x')]);
    expect(bad.code).toBe(2);
    const wrong = cli(['export', run, '--from', 'first', '--out', join(root, 'x')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--from.*best.*latest/);
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

  describe('--checkpoint URL (the export folder served on 127.0.0.1)', () => {
    let server: Server;
    let url: string;
    let requests: string[] = [];
    /** Served in place of the export's file of that name (to tamper with one). */
    const replaced = new Map<string, Buffer>();

    beforeAll(async () => {
      server = createServer((req, res) => {
        requests.push(req.url ?? '');
        const name = (req.url ?? '').replace(/^\/[^/]+\//, '');
        const path = join(out, name);
        const body = replaced.get(name) ?? (/^[\w.-]+$/.test(name) && existsSync(path) ? readFileSync(path) : null);
        if (body === null) res.writeHead(404).end();
        else res.writeHead(200, { 'content-length': body.length }).end(body);
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      // a fresh path per run: the cache (GRASSFLOW_CACHE_DIR of the tests) is keyed by the URL
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/m${process.pid}${Date.now()}/`;
    });
    afterAll(() => new Promise((done) => server.close(done)));

    const generate = (checkpoint: string): Promise<CliResult> =>
      cliWhileServing(['generate', '--checkpoint', checkpoint, '--prompt', 'the history of', '--max-tokens', '5']);

    it('generate prints the text of the folder (fetching only what it needs); a second run downloads only config.json', async () => {
      const local = cli(['generate', '--checkpoint', out, '--prompt', 'the history of', '--max-tokens', '5']);
      expect(local.code, local.stderr).toBe(0);
      requests = [];
      const first = await generate(url);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe(local.stdout);
      expect(requests.map((r) => r.replace(/^\/[^/]+\//, '')).sort()).toEqual([
        'config.json',
        'model.safetensors',
        'tokenizer_config.json',
        'vocab.txt',
      ]);
      requests = [];
      const second = await generate(url);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe(local.stdout);
      expect(requests.map((r) => r.replace(/^\/[^/]+\//, ''))).toEqual(['config.json']);
    });

    it('refuses a served vocab.txt that is not the exported one, naming it and what to do', async () => {
      const vocab = readFileSync(join(out, 'vocab.txt'));
      replaced.set('vocab.txt', Buffer.from(vocab.toString('utf8').replace('[unused0]', '[unusedX]')));
      try {
        const r = await generate(url.replace(/\/$/, 'x/')); // another URL: nothing of it in the cache yet
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/vocab\.txt has another SHA-256 .*refused.*export the run again/);
        expect(r.stdout).toBe('');
      } finally {
        replaced.clear();
      }
    });
  });
});

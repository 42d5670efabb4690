// grassflow-lm export: a tiny run as a model folder, read back by fromPretrained, generate and eval — from the folder
// and from its URL on 127.0.0.1.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { countParams, fromPretrained, initBackend, lmLoss, loadCheckpoint } from '@grassflow/gpu-layers';
import { Tokenizer } from '@huggingface/tokenizers';
import { wikitextForWordPiece } from '@grassflow/tokenizers';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunFolder } from '@grassflow/training';
import { heldOutMetric } from '../src/shared/held-out.js';
import { loadModelAndTokenizer } from '../src/shared/checkpoint-dir.js';
import { findPytorchScript, findTorchPython } from '../src/bench/against-pytorch.js';
import { cli, cliWhileServing, DATA_DIR, TINY, tmp, type CliResult } from './helpers.js';

/** The first `n` non-empty lines of wiki.test.tokens that are not headings: WikiText sentences. */
function wikiTestLines(n: number): string[] {
  return readFileSync(join(DATA_DIR as string, 'wikitext-2/wiki.test.tokens'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('='))
    .slice(0, n);
}

// A Python that imports torch (the pyenv python3 first on PATH has none; /usr/bin/python3 has PyTorch 1.13).
const { python: torchPython, tried } = findTorchPython();
const torchMissing =
  torchPython === null || findPytorchScript() === null
    ? `no Python here imports torch (${tried.join('; ')}), or bench/pytorch/bench_lm.py is missing: ` +
      'apt-get install python3-torch'
    : undefined;
if (torchMissing !== undefined && process.env['CI'] !== 'true') {
  console.log(`skipping the PyTorch reading of an export: ${torchMissing}`);
}

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
      'tokenizer.json',
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
    expect(Object.keys(records).sort()).toEqual(['README.md', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt']);
    for (const [name, r] of Object.entries(records)) {
      const bytes = readFileSync(join(out, name));
      expect(r, name).toEqual({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    }
    expect(readFileSync(join(out, 'vocab.txt'))).toEqual(
      readFileSync(join(DATA_DIR as string, 'bert-vocab/vocab.txt')),
    );
    const tokenizer = JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    expect(tokenizer).toMatchObject({
      kind: 'wordpiece',
      files: { vocab: 'vocab.txt', huggingFace: 'tokenizer.json' },
      lineEndToken: '[SEP]',
      tokenizer_class: 'BertTokenizerFast',
      do_lower_case: true,
    });
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

  it("config.json has Hugging Face's model_type and architectures first, grassflow's fields after them", () => {
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(config).slice(0, 3)).toEqual(['model_type', 'architectures', 'format']);
    expect(config).toMatchObject({
      model_type: 'grassflow_grassmann',
      architectures: ['GrassflowGrassmannForCausalLM'],
    });
  });

  it('tokenizer.json loads in @huggingface/tokenizers and gives the ids of fromPretrained on WikiText sentences', async () => {
    const hf = new Tokenizer(
      JSON.parse(readFileSync(join(out, 'tokenizer.json'), 'utf8')) as object,
      JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8')) as object,
    );
    const lines = wikiTestLines(40);
    const pretrained = await fromPretrained(out);
    try {
      let tokens = 0;
      for (const line of lines) {
        // the export's preparation (tokenizer_config.json's `preparation`), then WordPiece without special tokens
        const ids = hf.encode(wikitextForWordPiece(line), { add_special_tokens: false }).ids;
        expect(ids, line).toEqual(Array.from(pretrained.tokenizer.encodePrompt(line)));
        tokens += ids.length;
      }
      expect(tokens).toBeGreaterThan(1000); // real sentences, with <unk>, @-@ and numbers among them
      expect(lines.some((l) => l.includes('<unk>'))).toBe(true);
    } finally {
      pretrained.dispose();
    }
  });

  it('export --name: the card is titled by the name, the Hub metadata and the fromPretrained line carry it', () => {
    const named = join(root, 'named');
    const done = cli(['export', run, '--out', named, '--name', '@someone/tiny-lm']);
    expect(done.code, done.stderr).toBe(0);
    const card = readFileSync(join(named, 'README.md'), 'utf8');
    expect(card).toMatch(/\n# @someone\/tiny-lm\n\nA Grassmann language model trained on WikiText-2\.\n/);
    expect(card).toContain('  - name: "@someone/tiny-lm"');
    expect(card).toContain('const lm = await fromPretrained("@someone/tiny-lm");');
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain('const lm = await fromPretrained("THIS_FOLDER");');
    const bad = cli(['export', run, '--out', join(root, 'bad-name'), '--name', 'two words']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--name "two words": give one word/);
  });

  it('the card has YAML front matter for the Hub: library, license, data set, metrics with the PPLs and baselines', () => {
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    const match = /^---\n([\s\S]*?)\n---\n/.exec(card);
    expect(match, 'no front matter').not.toBeNull();
    const meta = parseYaml((match as RegExpExecArray)[1] as string) as {
      library_name: string;
      license: string;
      datasets: string[];
      metrics: string[];
      'model-index': Array<{
        name: string;
        results: Array<{ dataset: { split: string }; metrics: Array<{ type: string; value: number; name: string }> }>;
      }>;
    };
    expect(meta).toMatchObject({ library_name: 'grassflow', license: 'mit', datasets: ['Salesforce/wikitext'] });
    expect(meta.metrics).toEqual(['perplexity']);
    const results = meta['model-index'][0]?.results ?? [];
    const test = results.find((r) => r.dataset.split === 'test')?.metrics ?? [];
    // the run recorded no test PPL (train alone): the baselines only, all three, each a perplexity of wiki.test
    expect(test.map((m) => m.name)).toEqual([
      'unigram baseline, all of wiki.test',
      'bigram (KN) baseline, all of wiki.test',
      'trigram (KN) baseline, all of wiki.test',
    ]);
    for (const m of test) expect(m.type === 'perplexity' && m.value > 1 && m.value < 30522, m.name).toBe(true);
    const valid = results.find((r) => r.dataset.split === 'validation')?.metrics ?? [];
    expect(valid).toHaveLength(1);
    expect(card).toContain(`Validation perplexity: ${(valid[0] as { value: number }).value.toFixed(2)} (best`);
    expect(card).toMatch(/- n-gram baselines on all of wiki\.test \(fitted on wiki\.train, same tokenizer\): unigram /);
  });

  it.skipIf(torchMissing !== undefined && process.env['CI'] !== 'true')(
    "PyTorch (the repository's reference model, bench/pytorch/bench_lm.py) loads the weights by name",
    async () => {
      if (torchMissing !== undefined) throw new Error(`CI=true, but ${torchMissing}`);
      const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { model: object };
      const pretrained = await fromPretrained(out);
      try {
        // WikiText ids through the export's tokenizer.json, as a Hugging Face user would make them
        const hf = new Tokenizer(JSON.parse(readFileSync(join(out, 'tokenizer.json'), 'utf8')) as object, {});
        const L = pretrained.config.maxLen;
        const stream = wikiTestLines(40).flatMap(
          (l) => hf.encode(wikitextForWordPiece(l), { add_special_tokens: false }).ids,
        );
        const B = 2;
        const rows = Array.from({ length: B }, (_, b) => stream.slice(b * (L + 1), (b + 1) * (L + 1)));
        const x = rows.map((r) => r.slice(0, L));
        const y = rows.map((r) => r.slice(1));
        const ours = tf.tidy(
          () =>
            lmLoss(
              pretrained.model.apply(tf.tensor2d(x, [B, L], 'int32')),
              tf.tensor2d(y, [B, L], 'int32'),
            ).dataSync()[0],
        ) as number;
        const dir = tmp();
        writeFileSync(join(dir, 'ids.json'), JSON.stringify({ x, y }));
        const r = spawnSync(
          torchPython as string,
          [
            findPytorchScript() as string,
            '--config',
            JSON.stringify(config.model),
            '--state-dict', // load_state_dict(strict=True): every tensor by its name, none missing or left over
            join(out, 'model.safetensors'),
            '--loss-of',
            join(dir, 'ids.json'),
          ],
          { encoding: 'utf8', timeout: 120_000 },
        );
        expect(r.status, r.stderr).toBe(0);
        const theirs = JSON.parse(r.stdout.trim()) as { loss: number; params: number };
        expect(theirs.params).toBe(countParams(pretrained.config));
        expect(Math.abs(theirs.loss - ours) / ours).toBeLessThan(1e-5);
      } finally {
        pretrained.dispose();
      }
    },
  );

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
        'tokenizer_config.json', // not Hugging Face's tokenizer.json: grassflow reads vocab.txt
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

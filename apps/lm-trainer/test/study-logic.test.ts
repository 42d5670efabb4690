// grassflow-lm's study files, its ledger records and the aggregation over seeds, against hand-computed values (no
// data). Run keys and the statistics are tested with @grassflow/studies.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR } from './helpers.js';
import { expandStudy, flagsToArgv, runKey } from '@grassflow/studies';
import type { ResolvedRunConfig } from '../src/study/key.js';
import { appendLedger, readLedger, type LedgerRecord } from '../src/study/ledger.js';
import { groupRuns, pairedComparisons, writeStudyReport } from '../src/study/report.js';
import { parseStudy } from '../src/study/spec.js';
import RUN_CONFIG from '../../../tooling/fixtures/resolved-run-config.json';

describe('study file', () => {
  it('expands each grid (first field slowest) and the explicit runs over base', () => {
    const spec = parseStudy(
      {
        name: 's',
        base: { preset: 'tiny', steps: 5 },
        grid: { model: ['grassmann', 'transformer-dpa'], seed: [1, 2] },
        runs: [{ model: 'transformer-ea', seed: 3, steps: 7 }],
      },
      's.json',
    );
    const runs = expandStudy(spec);
    expect(runs.map((r) => r.flags)).toEqual([
      { preset: 'tiny', steps: 5, model: 'grassmann', seed: 1 },
      { preset: 'tiny', steps: 5, model: 'grassmann', seed: 2 },
      { preset: 'tiny', steps: 5, model: 'transformer-dpa', seed: 1 },
      { preset: 'tiny', steps: 5, model: 'transformer-dpa', seed: 2 },
      { preset: 'tiny', steps: 7, model: 'transformer-ea', seed: 3 },
    ]);
    expect(runs.map((r) => r.where)).toEqual(['grid #1', 'grid #2', 'grid #3', 'grid #4', 'runs[0]']);
    const two = expandStudy(parseStudy({ name: 't', grid: [{ seed: [1] }, { norm: ['pre'], seed: [4, 5] }] }, 't'));
    expect(two.map((r) => [r.where, r.flags])).toEqual([
      ['grid[0] #1', { seed: 1 }],
      ['grid[1] #1', { norm: 'pre', seed: 4 }],
      ['grid[1] #2', { norm: 'pre', seed: 5 }],
    ]);
    expect(expandStudy(parseStudy({ name: 'b', base: { seed: 9 } }, 'b'))).toEqual([
      { flags: { seed: 9 }, where: 'base' },
    ]);
    expect(flagsToArgv({ model: 'grassmann', offsets: [1, 2, 4], lr: 0.001 })).toEqual([
      '--model',
      'grassmann',
      '--offsets',
      '1,2,4',
      '--lr',
      '0.001',
    ]);
  });

  it('errors name the field', () => {
    const bad = (json: unknown): string => {
      try {
        parseStudy(json, 'x.json');
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(bad({ base: {} })).toMatch(/^x\.json: name must be/);
    expect(bad({ name: 'a', grdi: {} })).toMatch(/unknown field "grdi"/);
    expect(bad({ name: 'a', base: { nrom: 'pre' } })).toMatch(/^x\.json: base\.nrom: not a train flag/);
    expect(bad({ name: 'a', grid: { seed: 3 } })).toMatch(/grid\.seed must be a non-empty list/);
    expect(bad({ name: 'a', grid: [{ seed: [1] }, { seed: [1, '2'] }] })).toMatch(
      /grid\[1\]\.seed\[1\]: must be a number/,
    );
    expect(bad({ name: 'a', runs: [{}, { out: 'x' }] })).toMatch(/runs\[1\]\.out: --out belongs to a sitting/);
    expect(bad({ name: 'a', runs: [{ offsets: 2 }] })).toMatch(/runs\[0\]\.offsets: must be a list of integers/);
  });
});

/** A tiny grassmann or transformer run's resolved config (the fixture the studies package's key tests share). */
const config = (over: Partial<ResolvedRunConfig['training']> = {}, kind = 'grassmann'): ResolvedRunConfig =>
  ({
    modelKind: kind,
    tokenizer: RUN_CONFIG.tokenizer,
    model: RUN_CONFIG.models[kind === 'grassmann' ? 'grassmann' : 'transformer'],
    training: { ...RUN_CONFIG.training, ...over },
  }) as ResolvedRunConfig;

const record = (c: ResolvedRunConfig, finalValPpl: number, bestValPpl = finalValPpl): LedgerRecord =>
  ({
    format: 'grassflow-lm-study-run',
    formatVersion: 1,
    study: 's',
    key: runKey(c),
    config: c,
    code: 'abc',
    backend: { name: 'wasm', tfjsCore: '4.22.0' },
    machine: { cpu: 'test CPU', cpus: 2, platform: 'linux-x64', memoryGiB: 8 },
    params: 1000,
    totalSteps: 6,
    tokens: 6 * c.training.batch * c.training.seqLen,
    finalValPpl,
    bestValPpl,
    bestStep: 6,
    curve: [
      [100, finalValPpl + 10],
      [200, finalValPpl],
    ],
    timing: { trainSeconds: 1, wallSeconds: 2, resumed: false, finished: '2026-12-06T00:00:00.000Z' },
  }) as LedgerRecord;

describe('aggregation of a ledger', () => {
  it('groups over seeds and pairs Grassmann − Transformer by seed', () => {
    const g = [100, 110, 90].map((p, i) => record(config({ seed: i + 1 }), p, p - 1));
    const t = [95, 100, 92, 80].map((p, i) => record(config({ seed: i + 1 }, 'transformer-dpa'), p, p - 3));
    const other = record(config({ seed: 1, lr: 1e-3 }), 50); // another cell: no Transformer to pair with
    const groups = groupRuns([...g, t[3]!, other, t[0]!, t[1]!, t[2]!]);
    expect(groups.map((x) => [x.config.modelKind, x.final.n])).toEqual([
      ['grassmann', 3],
      ['transformer-dpa', 4],
      ['grassmann', 1],
    ]);
    expect(groups[0]!.final.mean).toBe(100);
    expect(groups[0]!.final.sd).toBeCloseTo(10, 12);
    expect(groups[1]!.records.map((r) => r.config.training.seed)).toEqual([1, 2, 3, 4]);
    const pairs = pairedComparisons(groups);
    expect(pairs).toHaveLength(1);
    expect(pairs[0]!.seeds).toEqual([1, 2, 3]);
    expect(pairs[0]!.finalDiffs).toEqual([5, 10, -2]);
    expect(pairs[0]!.final?.hi).toBeCloseTo(19.308212969, 8);
    expect(pairs[0]!.best?.mean).toBeCloseTo(4.333333333 + 2, 8); // best: G − 1 against T − 3
  });

  it('pairAcross pairs each kind at its own lr; without it runs of different lr are not paired', () => {
    const g = [100, 110].map((p, i) => record(config({ seed: i + 1, lr: 4e-3 }), p));
    const t = [95, 100].map((p, i) => record(config({ seed: i + 1, lr: 2e-3 }, 'transformer-dpa'), p));
    const groups = groupRuns([...g, ...t]);
    expect(pairedComparisons(groups)).toHaveLength(0);
    const pairs = pairedComparisons(groups, ['lr']);
    expect(pairs.map((p) => p.finalDiffs)).toEqual([[5, 10]]);
    const spec = parseStudy({ name: 'l', base: {}, pairAcross: ['lr', 'minLr'] }, 'l.json');
    expect(spec.pairAcross).toEqual(['lr', 'minLr']);
    expect(() => parseStudy({ name: 'l', pairAcross: ['dModel'] }, 'l.json')).toThrow(
      /pairAcross must be a list of training fields among lr, minLr/,
    );
  });
});

describe('report.md', () => {
  it('tables of groups and pairs, baselines in words, one chart per cell', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-study-report-'));
    const g = [100, 110, 90].map((p, i) => record(config({ seed: i + 1 }), p));
    const t = [95, 100, 92].map((p, i) => record(config({ seed: i + 1 }, 'transformer-dpa'), p));
    const asked: Array<[string, number | null]> = [];
    const baselines = (tokenizer: string, evalTokens: number | null) => {
      asked.push([tokenizer, evalTokens]);
      const row = (name: string, ppl: number) => ({
        name,
        order: 1,
        smoothing: 'test',
        tokens: 255,
        nll: Math.log(ppl),
        ppl,
      });
      return Promise.resolve([row('unigram', 800), row('bigram (KN)', 96), row('trigram (KN)', 80)]);
    };
    const path = await writeStudyReport(dir, 's', [...g, ...t], 'ledger.jsonl', baselines);
    const md = readFileSync(path, 'utf8');
    expect(asked).toEqual([['wordpiece', 256]]); // once per tokenizer and validation slice
    expect(md).toContain('| grassmann | 3 | 1 2 3 | 100 | 10 | 75.16 … 124.8 |'); // 100 ± 4.303·10/√3
    expect(md).toContain('| grassmann | transformer-dpa | 3 | 4.333 | 6.028 | -10.64 … 19.31 |');
    // 100 / 96 − 1 = 4.2% and 95.7 / 96 − 1 = −0.3%: both within 5% of the bigram, so at its level
    expect(md).toContain(
      '- grassmann: mean final validation PPL 100.0, at the level of bigram (KN) (96.0), within 5%.',
    );
    expect(md).toContain(
      '- transformer-dpa: mean final validation PPL 95.7, at the level of bigram (KN) (96.0), within 5%.',
    );
    expect(md).toContain('![Validation PPL](curves-1.png)');
    expect(md).not.toContain('curves-2');
  });

  it('one chart per cell: the title names the cell, the legend only the model kind (no name to cut short)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-study-charts-'));
    const runs = [3e-3, 1e-3].flatMap((lr) => [
      record(config({ seed: 1, lr }), 100),
      record(config({ seed: 1, lr }, 'transformer-dpa'), 95),
    ]);
    const path = await writeStudyReport(dir, 's', runs, 'ledger.jsonl');
    const md = readFileSync(path, 'utf8');
    expect(md).toContain('![Validation PPL: lr 0.003](curves-1.png)');
    expect(md).toContain('![Validation PPL: lr 0.001](curves-2.png)');
    const labels = (file: string): string[] =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] as string);
    for (const file of ['curves-1.svg', 'curves-2.svg']) {
      expect(labels(file)).toEqual(expect.arrayContaining(['grassmann (n 1)', 'transformer-dpa (n 1)']));
      expect(labels(file).filter((t) => t.includes('…'))).toEqual([]);
    }
    // the report's text still names every field that tells the groups apart
    expect(md).toContain('| grassmann | 0.003 | 1 | 1 | 100 |');
  });

  it('an option one kind has only when it is set (dropoutAt) tells its groups apart, in legend and table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-study-option-'));
    const base = config({ seed: 1 });
    const branch = { ...base, model: { ...base.model, dropoutAt: 'branch' } } as ResolvedRunConfig;
    const runs = [record(base, 100), record(branch, 90), record(config({ seed: 1 }, 'transformer-dpa'), 95)];
    const md = readFileSync(await writeStudyReport(dir, 's', runs, 'ledger.jsonl'), 'utf8');
    const labels = [...readFileSync(join(dir, 'curves-1.svg'), 'utf8').matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map(
      (m) => m[1] as string,
    );
    expect(labels).toEqual(
      expect.arrayContaining(['grassmann (n 1)', 'grassmann, dropoutAt branch (n 1)', 'transformer-dpa (n 1)']),
    );
    expect(md).not.toContain('curves-2'); // one cell: both Grassmann groups pair with the same Transformer
    expect(md).toContain('| grassmann | branch | 1 | 1 | 90 |');
    expect(md).toContain('| grassmann | – | 1 | 1 | 100 |');
    expect(md).toContain('| grassmann, dropoutAt branch | transformer-dpa | 1 | -5 |');
  });
});

describe('ledger file', () => {
  it('skips a torn last line with a warning, refuses a bad line before it, keeps the first of a key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-ledger-'));
    const path = join(dir, 'ledger.jsonl');
    expect(await readLedger(path)).toEqual({ records: [], lines: [], warnings: [] });
    const a = record(config({ seed: 1 }), 10);
    const b = record(config({ seed: 2 }), 20);
    await appendLedger(path, a);
    await appendLedger(path, b);
    expect((await readLedger(path)).records).toEqual([a, b]);
    const whole = readFileSync(path, 'utf8');
    writeFileSync(path, `${whole}${JSON.stringify(a).slice(0, 40)}`); // a write cut short
    const torn = await readLedger(path);
    expect(torn.records).toEqual([a, b]);
    expect(torn.warnings).toEqual([`${path}:3: a torn last line (not JSON) skipped`]);
    const c = record(config({ seed: 3 }), 30);
    await appendLedger(path, c); // the torn line goes, the new record is whole
    expect(readFileSync(path, 'utf8')).toBe(`${whole}${JSON.stringify(c)}\n`);
    writeFileSync(path, `${whole}${JSON.stringify(a)}\n`);
    expect((await readLedger(path)).warnings[0]).toMatch(/key .* again \(the first record kept\)/);
    writeFileSync(path, `{oops\n${whole}`);
    await expect(readLedger(path)).rejects.toThrow(/ledger\.jsonl:1: not a JSON record/);
  });

  it('refuses, with its line number, a record whose PPL is null or not a number, or whose config is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-ledger-'));
    const path = join(dir, 'ledger.jsonl');
    const good = record(config({ seed: 1 }), 10);
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...good, finalValPpl: null }, /:2: "finalValPpl" is null, not a perplexity/],
      [{ ...good, bestValPpl: 'abc' }, /:2: "bestValPpl" is "abc", not a perplexity/],
      [{ ...good, config: undefined }, /:2: "config" lacks model.kind or training.seed/],
      [{ ...good, curve: [[1, null]] }, /:2: "curve" is not a list/],
    ];
    for (const [r, message] of bad) {
      writeFileSync(path, `${JSON.stringify(record(config({ seed: 2 }), 20))}\n${JSON.stringify(r)}\n`);
      await expect(readLedger(path)).rejects.toThrow(message);
    }
  });

  it('refuses finite absurd values, wrong types and a key not of its config, naming the file and line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-ledger-'));
    const path = join(dir, 'ledger.jsonl');
    const good = record(config({ seed: 1 }), 10);
    const held = { tokens: 1000, nll: Math.log(20), ppl: 20, nllByPosition: [3, 2.9] };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...good, finalValPpl: 1e308 }, '"finalValPpl" is 1e+308, not a perplexity (a number from 1 to 1000000000000)'],
      [{ ...good, bestValPpl: 1.7e308 }, '"bestValPpl" is 1.7e+308, not a perplexity'],
      [{ ...good, finalValPpl: 0.5 }, '"finalValPpl" is 0.5, not a perplexity'],
      [{ ...good, tokens: -1 }, '"tokens" is -1, not totalSteps × batch × seqLen = 768'],
      [{ ...good, tokens: 769 }, '"tokens" is 769, not totalSteps × batch × seqLen = 768'],
      [{ ...good, params: 'many' }, '"params" is "many", not a count of parameters'],
      [{ ...good, totalSteps: 2.5 }, '"totalSteps" is 2.5, not a count of steps'],
      [{ ...good, bestStep: 7 }, '"bestStep" is 7, not a step from 0 to totalSteps 6'],
      [{ ...good, curve: [[100, 1e300]] }, '"curve" is not a list of [tokens, ppl] pairs'],
      [{ ...good, key: '0123456789abcdef' }, `"key" 0123456789abcdef is not the key of its "config" (${good.key})`],
      [{ ...good, study: '' }, `"study" is not a study's name`],
      [{ ...good, timing: { wallSeconds: 'long' } }, '"timing" lacks finite trainSeconds'],
      [{ ...good, heldOut: { valid: held, test: { ...held, ppl: 1e300 } } }, '"heldOut.test.ppl" is 1e+300'],
      [{ ...good, heldOut: { valid: held, test: { ...held, nll: 1 } } }, '"heldOut.test.nll" is 1, not ln of its ppl'],
      [{ ...good, config: { model: { kind: 'grassmann' }, training: { seed: 1 } } }, '"key" '],
      [{ ...good, config: { model: { kind: 'grassmann' }, training: 7 } }, '"config" lacks model.kind'],
    ];
    for (const [r, message] of bad) {
      writeFileSync(path, `${JSON.stringify(record(config({ seed: 2 }), 20))}\n${JSON.stringify(r)}\n`);
      const err = await readLedger(path).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(err?.name, message).toBe('LedgerError'); // not "an unexpected error"
      expect(err?.message).toContain(`${path}:2: ${message}`);
      expect(err?.message).toContain('fix or remove that line');
    }
    const fine = { ...good, heldOut: { valid: held, test: held } };
    writeFileSync(path, `${JSON.stringify(fine)}\n`);
    expect((await readLedger(path)).records).toEqual([fine]);
  });
});

describe.skipIf(DATA_DIR === undefined)(
  'ledger lines through the CLI (real processes; needs GRASSFLOW_DATA_DIR)',
  () => {
    it('status and report both refuse another study’s line and an absurd one, naming file and line, no "unexpected"', () => {
      const dir = mkdtempSync(join(tmpdir(), 'grassflow-ledger-cli-'));
      const study = join(dir, 's.json');
      writeFileSync(study, JSON.stringify({ name: 's', base: { preset: 'tiny', steps: 6 }, grid: { seed: [1, 2] } }));
      const path = join(dir, 'ledger.jsonl');
      const mine = record(config({ seed: 1 }), 10);
      const other = { ...record(config({ seed: 2 }), 20), study: 'other' };
      writeFileSync(path, `${JSON.stringify(mine)}\n${JSON.stringify(other)}\n`);
      for (const command of ['status', 'report']) {
        for (const source of command === 'report' ? [study, path] : [study]) {
          const r = cli(['study', command, source, '--out', dir]);
          expect(r.code, r.stderr).toBe(1);
          expect(r.stderr.trim()).toBe(
            `grassflow-lm study: LedgerError: ${path}:2: a run of study 'other', not 's': give each study its own ` +
              "--out (move that line to its study's ledger)",
          );
        }
      }
      writeFileSync(path, `${JSON.stringify(mine)}\n${JSON.stringify({ ...other, study: 's', finalValPpl: 1e308 })}\n`);
      for (const command of ['status', 'report']) {
        const r = cli(['study', command, study, '--out', dir]);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toContain(`LedgerError: ${path}:2: "finalValPpl" is 1e+308, not a perplexity`);
        expect(r.stderr).not.toContain('unexpected error');
      }
    }, 120_000);
  },
);

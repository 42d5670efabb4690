import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AddKUnigram,
  InterpolatedBigram,
  KneserNeyModel,
  modifiedKneserNeyDiscounts,
  ngramBaselines,
  scoreNgram,
  type BaselineResult,
  type NgramModel,
} from '../src/baselines/ngram.js';
import { cachedNgramBaselines, splitBaselines } from '../src/baselines/cache.js';
import { standingAgainst } from '../src/baselines/standing.js';
import { baselineSeries, standingLines, xRange } from '../src/baselines/report.js';
import { loadTokenizer } from '../src/shared/corpus.js';
import { cli, DATA_DIR, TINY as TINY_FLAGS, tmp } from './helpers.js';

// The tiny corpus: counts c(0) = 3, c(1) = 4, c(2) = 1 (N = 8);
// bigrams (0,1)×3, (1,2), (2,0), (1,1), (1,0) (7 in all);
// trigrams (0,1,2), (1,2,0), (2,0,1), (0,1,1), (1,1,0), (1,0,1), once each.
const TINY = Int32Array.from([0, 1, 2, 0, 1, 1, 0, 1]);
const V = 3;
const FIXED: [number, number, number] = [0.5, 1, 1.5];

/** −mean log of the probabilities of targets t = 1..7 of TINY, as PPL. */
const pplOf = (ps: number[]): number => Math.exp(-ps.reduce((s, p) => s + Math.log(p), 0) / ps.length);

/** Σ_w p(w | history) over the vocabulary. */
const mass = (m: NgramModel, history: number[], vocab: number): number => {
  let s = 0;
  for (let w = 0; w < vocab; w++) s += m.prob(history, w);
  return s;
};

describe('n-gram baselines on a hand-checked corpus', () => {
  it('add-0.1 unigram: p(w) = (c(w) + 0.1) / (8 + 0.1·3)', () => {
    const uni = new AddKUnigram(TINY, V, 0.1);
    expect(uni.prob([], 0)).toBeCloseTo(3.1 / 8.3, 12); // 0.373494
    expect(uni.prob([2], 1)).toBeCloseTo(4.1 / 8.3, 12); // 0.493976, history ignored
    expect(uni.prob([], 2)).toBeCloseTo(1.1 / 8.3, 12); // 0.132530
    // targets 1,2,0,1,1,0,1: four 1s, one 2, two 0s → PPL = exp(−(4 ln 4.1 + ln 1.1 + 2 ln 3.1 − 7 ln 8.3)/7)
    const r = scoreNgram(uni, TINY, 0);
    expect(r.tokens).toBe(7);
    expect(r.ppl).toBeCloseTo(2.646145, 5);
    expect(r.ppl).toBeCloseTo(pplOf([4.1, 1.1, 3.1, 4.1, 4.1, 3.1, 4.1].map((c) => c / 8.3)), 12);
  });

  it('linear interpolation λ = 0.7: p(w|v) = 0.7·c(v w)/c(v ·) + 0.3·p_add-0.1(w)', () => {
    const lin = new InterpolatedBigram(TINY, V, 0.7, new AddKUnigram(TINY, V, 0.1));
    expect(lin.prob([0], 1)).toBeCloseTo(0.7 * (3 / 3) + 0.3 * (4.1 / 8.3), 12); // 0.848193
    expect(lin.prob([1], 2)).toBeCloseTo(0.7 * (1 / 3) + 0.3 * (1.1 / 8.3), 12); // 0.273092
    expect(lin.prob([0], 2)).toBeCloseTo(0.3 * (1.1 / 8.3), 12); // unseen pair: the unigram's share only
    expect(lin.prob([], 2)).toBeCloseTo(1.1 / 8.3, 12); // no history: the unigram
  });

  it('modified KN discounts from count-of-counts (Chen & Goodman eq. 26), with the k/2 fallback', () => {
    // n = 10, 4, 2, 1: Y = 10/18 = 0.5556; D1 = 1 − 2·Y·4/10 = 0.5556; D2 = 2 − 3·Y·2/4 = 1.1667;
    // D3+ = 3 − 4·Y·1/2 = 1.8889
    const d = modifiedKneserNeyDiscounts([10, 4, 2, 1]);
    expect(d[0]).toBeCloseTo(1 - (2 * (10 / 18) * 4) / 10, 12);
    expect(d[1]).toBeCloseTo(2 - (3 * (10 / 18) * 2) / 4, 12);
    expect(d[2]).toBeCloseTo(3 - (4 * (10 / 18) * 1) / 2, 12);
    // the tiny corpus's bigrams: n = 4, 0, 1, 0 → Y = 1, D1 = 1, D2 = 2 − 3·1/0 = −∞ → 2/2 = 1, D3+ = 3 − 0 = 3
    expect(modifiedKneserNeyDiscounts([4, 0, 1, 0])).toEqual([1, 1, 3]);
  });

  it('KN bigram with D = 0.5, 1, 1.5: hand-computed probabilities and PPL', () => {
    const kn = new KneserNeyModel(TINY, 2, V, { discounts: FIXED });
    // unigram level: continuation counts N1+(· w): 0 ← {2,1} = 2, 1 ← {0,1} = 2, 2 ← {1} = 1 (Σ 5);
    // γ = (0.5·1 + 1·2)/5 = 0.5; p1(0) = (2 − 1)/5 + 0.5/3 = 0.366667, p1(1) = 0.366667, p1(2) = 0.5/5 + 0.5/3 = 0.266667
    expect(kn.prob([], 0)).toBeCloseTo(0.2 + 0.5 / 3, 12);
    expect(kn.prob([], 2)).toBeCloseTo(0.1 + 0.5 / 3, 12);
    const p1 = [0.2 + 0.5 / 3, 0.2 + 0.5 / 3, 0.1 + 0.5 / 3];
    // context 0: (0,1)×3, D3+ = 1.5, γ = 1.5/3 = 0.5: p(1|0) = 1.5/3 + 0.5·0.366667 = 0.683333
    expect(kn.prob([0], 1)).toBeCloseTo(0.5 + 0.5 * p1[1]!, 12);
    expect(kn.prob([0], 2)).toBeCloseTo(0.5 * p1[2]!, 12); // 0.133333
    // context 1: (1,0), (1,1), (1,2) once each, γ = 0.5·3/3 = 0.5: p(w|1) = 0.5/3 + 0.5·p1(w) = 0.35, 0.35, 0.3
    expect(kn.prob([1], 0)).toBeCloseTo(0.5 / 3 + 0.5 * p1[0]!, 12);
    expect(kn.prob([1], 2)).toBeCloseTo(0.3, 12);
    // context 2: (2,0) once, γ = 0.5·1/1: p(0|2) = 0.5/1 + 0.5·0.366667 = 0.683333
    expect(kn.prob([2], 0)).toBeCloseTo(0.5 + 0.5 * p1[0]!, 12);
    // targets t = 1..7: p(1|0), p(2|1), p(0|2), p(1|0), p(1|1), p(0|1), p(1|0)
    const a = 0.5 + 0.5 * p1[1]!; // 0.683333
    const ps = [a, 0.3, a, a, 0.35, 0.35, a];
    const r = scoreNgram(kn, TINY, 1);
    expect(r.ppl).toBeCloseTo(pplOf(ps), 12); // exp(−(4 ln 0.683333 + ln 0.3 + 2 ln 0.35)/7) = 1.992778
    expect(r.ppl).toBeCloseTo(1.992778, 5);
  });

  it('KN trigram with D = 0.5, 1, 1.5: continuation counts at the middle order', () => {
    const kn = new KneserNeyModel(TINY, 3, V, { discounts: FIXED });
    // middle order counts N1+(· v w): (0,1) ← {2,1} = 2 (its raw count is 3), the others 1;
    // context 0: (0,1) = 2, D2 = 1, γ = 1/2: p2(1|0) = (2 − 1)/2 + 0.5·0.366667 = 0.683333
    expect(kn.prob([0], 1)).toBeCloseTo(0.5 + 0.5 * (0.2 + 0.5 / 3), 12);
    // context (0,1): (0,1,1), (0,1,2) once each, γ = 0.5·2/2 = 0.5; p2(·|1) = 0.35, 0.35, 0.3
    // p(2|0,1) = 0.5/2 + 0.5·0.3 = 0.4; p(1|0,1) = 0.25 + 0.175 = 0.425; p(0|0,1) = 0.175
    expect(kn.prob([0, 1], 2)).toBeCloseTo(0.4, 12);
    expect(kn.prob([0, 1], 1)).toBeCloseTo(0.425, 12);
    expect(kn.prob([0, 1], 0)).toBeCloseTo(0.175, 12);
    // an unseen context (2,2) is the middle order's p2(0|2) = 0.5 + 0.5·0.366667
    expect(kn.prob([2, 2], 0)).toBeCloseTo(0.5 + 0.5 * (0.2 + 0.5 / 3), 12);
    // only the last two ids of a longer history count
    expect(kn.prob([2, 2, 0, 1], 2)).toBeCloseTo(0.4, 12);
  });

  it('every context of the tiny corpus sums to 1 over V (estimated discounts)', () => {
    const uni = new AddKUnigram(TINY, V, 0.1);
    const models: NgramModel[] = [
      uni,
      new InterpolatedBigram(TINY, V, 0.7, uni),
      new KneserNeyModel(TINY, 2, V),
      new KneserNeyModel(TINY, 3, V),
    ];
    const histories: number[][] = [[]];
    for (let a = 0; a < V; a++) {
      histories.push([a]);
      for (let b = 0; b < V; b++) histories.push([a, b]);
    }
    for (const m of models) for (const h of histories) expect(mass(m, h, V)).toBeCloseTo(1, 12);
  });

  it('random contexts of a random corpus sum to 1 over V, and every probability is positive', () => {
    let s = 12345;
    const rand = (n: number): number => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 8) % n;
    };
    const vocab = 23;
    // a skewed stream: small ids far more often, so counts 1, 2, 3, 4+ all occur
    const ids = Int32Array.from({ length: 3000 }, () => Math.min(rand(vocab), rand(vocab), rand(vocab)));
    const uni = new AddKUnigram(ids, vocab, 0.1);
    const kn3 = new KneserNeyModel(ids, 3, vocab);
    const models: NgramModel[] = [
      uni,
      new InterpolatedBigram(ids, vocab, 0.7, uni),
      new KneserNeyModel(ids, 2, vocab),
      kn3,
    ];
    for (let i = 0; i < 20; i++) {
      const h = [rand(vocab), rand(vocab)];
      for (const m of models) {
        expect(mass(m, h, vocab)).toBeCloseTo(1, 12);
        expect(m.prob(h, vocab - 1)).toBeGreaterThan(0);
      }
    }
    // estimated discounts lie in (0, k] at every order
    for (const level of kn3.levels) {
      level.discounts.forEach((d, k) => {
        expect(d).toBeGreaterThan(0);
        expect(d).toBeLessThanOrEqual(k + 1);
      });
    }
  });

  it('keys stay exact at the largest vocabulary: relabelling ids to the top of V = 200,000 changes nothing', () => {
    const big = 200_000;
    const ids = Int32Array.from({ length: 500 }, (_, i) => (i * i + 3 * i) % 5);
    const top = ids.map((id) => big - 5 + id);
    const low = new KneserNeyModel(ids, 3, big);
    const high = new KneserNeyModel(top, 3, big);
    for (let a = 0; a < 5; a++) {
      for (let b = 0; b < 5; b++) {
        for (let w = 0; w < 5; w++) {
          expect(high.prob([big - 5 + a, big - 5 + b], big - 5 + w)).toBeCloseTo(low.prob([a, b], w), 14);
        }
      }
    }
    expect(() => new KneserNeyModel(ids, 3, big + 1)).toThrow(RangeError);
  });

  it('says where a PPL stands against the reference baselines', () => {
    const row = (name: string, ppl: number): BaselineResult => ({
      name,
      order: 1,
      smoothing: '',
      tokens: 1,
      nll: 0,
      ppl,
    });
    const rows = [row('unigram', 827), row('bigram (linear interpolation, λ = 0.7)', 274), row('bigram (KN)', 245)];
    rows.push(row('trigram (KN)', 202));
    expect(standingAgainst(1007, rows)).toBe('above unigram (827.0)');
    expect(standingAgainst(500, rows)).toBe('between unigram (827.0) and bigram (KN) (245.0)');
    expect(standingAgainst(230, rows)).toBe('between bigram (KN) (245.0) and trigram (KN) (202.0)');
    expect(standingAgainst(150, rows)).toBe('below trigram (KN) (202.0)');
    // within 5% of a baseline (either side) a model stands at its level: 827 · 0.95 = 785.65, 245 · 1.05 = 257.25
    expect(standingAgainst(786, rows)).toBe(
      'at the level of unigram (827.0), within 5%: it has learnt little beyond what that baseline knows',
    );
    expect(standingAgainst(868, rows)).toMatch(/^at the level of unigram \(827\.0\)/);
    expect(standingAgainst(869, rows)).toBe('above unigram (827.0)');
    expect(standingAgainst(785, rows)).toBe('between unigram (827.0) and bigram (KN) (245.0)');
    expect(standingAgainst(257, rows)).toBe('at the level of bigram (KN) (245.0), within 5%');
    expect(standingAgainst(193, rows)).toBe('at the level of trigram (KN) (202.0), within 5%');
    expect(standingLines([{ name: 'grassmann', ppl: 1007.24 }], rows)).toBe(
      '- grassmann: validation PPL 1007.2, above unigram (827.0).',
    );
    // reference lines for a chart: flat at each reference PPL over the curves' x range (the λ = 0.7 row is left out)
    const curve = [{ name: 'grassmann', points: [[20, 1200] as const, [40, 1007] as const] }];
    expect(xRange(curve)).toEqual([20, 40]);
    expect(baselineSeries(rows, 20, 40)).toEqual([
      {
        name: 'unigram',
        points: [
          [20, 827],
          [40, 827],
        ],
      },
      {
        name: 'bigram (KN)',
        points: [
          [20, 245],
          [40, 245],
        ],
      },
      {
        name: 'trigram (KN)',
        points: [
          [20, 202],
          [40, 202],
        ],
      },
    ]);
  });
});

describe('baselines cache', () => {
  it('writes JSON on the first call and reads it back the second time; other ids miss', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gf-baselines-'));
    const train = Int32Array.from({ length: 400 }, (_, i) => (i * 7) % 11);
    const evalIds = Int32Array.from({ length: 100 }, (_, i) => (i * 5) % 11);
    const opts = { trainIds: train, evalIds, vocabSize: 11, tokenizerId: 'test-tok', cacheDir: dir };
    const first = await cachedNgramBaselines(opts);
    expect(first.cache).toBe('miss');
    const onDisk = JSON.parse(readFileSync(first.path, 'utf8')) as { key: string; results: BaselineResult[] };
    expect(onDisk.key).toBe(first.baselines.key);
    const second = await cachedNgramBaselines(opts);
    expect(second.cache).toBe('hit');
    expect(second.baselines.results).toEqual(first.baselines.results);
    // the cached numbers are the ones computed
    expect(second.baselines.results).toEqual(ngramBaselines(train, evalIds, 11));
    expect((await cachedNgramBaselines({ ...opts, tokenizerId: 'other-tok' })).cache).toBe('miss');
    expect((await cachedNgramBaselines({ ...opts, evalIds: evalIds.subarray(1) })).cache).toBe('miss');
    writeFileSync(first.path, '{ not json');
    expect((await cachedNgramBaselines(opts)).cache).toBe('miss');
  });
});

const realData = DATA_DIR !== undefined;
if (!realData) console.warn('baselines.test: real-data tests skipped: GRASSFLOW_DATA_DIR is not set');

describe.skipIf(!realData)('baselines on WikiText-2 (WordPiece)', () => {
  it('add-0.1 unigram and λ = 0.7 bigram on valid are within 2% of paper-notes §2 (827, 274)', async () => {
    const tok = await loadTokenizer('wordpiece', DATA_DIR!);
    const cacheDir = mkdtempSync(join(tmpdir(), 'gf-baselines-real-'));
    const { baselines } = await splitBaselines(tok, DATA_DIR!, 'valid', { cacheDir });
    const byName = new Map(baselines.results.map((r) => [r.name, r]));
    const uni = byName.get('unigram')!;
    const lin = byName.get('bigram (linear interpolation, λ = 0.7)')!;
    expect(Math.abs(uni.ppl / 827 - 1)).toBeLessThan(0.02);
    expect(Math.abs(lin.ppl / 274 - 1)).toBeLessThan(0.02);
    // Kneser–Ney orders improve on each other and on the linear interpolation
    const kn2 = byName.get('bigram (KN)')!;
    const kn3 = byName.get('trigram (KN)')!;
    expect(kn2.ppl).toBeLessThan(lin.ppl);
    expect(kn3.ppl).toBeLessThan(kn2.ppl);
    expect(uni.tokens).toBe(baselines.evalTokens - 1);
  });

  it('`grassflow-lm baselines --json` prints every baseline with its smoothing; the second run hits the cache', () => {
    const args = ['baselines', '--split', 'test', '--json'];
    cli(args); // fills the cache if empty
    const r = cli(args);
    expect(r.code, r.stderr).toBe(0);
    const line = JSON.parse(r.stdout) as { split: string; cache: string; baselines: BaselineResult[] };
    expect(line.split).toBe('test');
    expect(line.cache).toBe('hit');
    expect(line.baselines.map((b) => b.name)).toEqual([
      'unigram',
      'bigram (linear interpolation, λ = 0.7)',
      'bigram (KN)',
      'trigram (KN)',
    ]);
    expect(line.baselines.every((b) => b.smoothing.length > 0 && b.ppl > 1)).toBe(true);
    expect(Math.abs(line.baselines[0]!.ppl / 800 - 1)).toBeLessThan(0.02);
  });

  it("a training run's report shows the baselines and where the run stands against them", () => {
    const run = join(tmp(), 'run');
    const r = cli(['train', '--model', 'grassmann', ...TINY_FLAGS, '--steps', '4', '--eval-every', '2', '--out', run]);
    expect(r.code, r.stderr).toBe(0);
    const report = readFileSync(join(run, 'report.md'), 'utf8');
    // four steps of a tiny model: still far above the unigram
    expect(report).toMatch(/- grassmann: best validation PPL [0-9.]+, above unigram \([0-9.]+\)\./);
    expect(report).toContain('- trigram (KN): interpolated modified Kneser–Ney');
    const svg = readFileSync(join(run, 'val-ppl.svg'), 'utf8');
    for (const name of ['unigram', 'bigram (KN)', 'trigram (KN)']) expect(svg).toContain(name);
  });
});

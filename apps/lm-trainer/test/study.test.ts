// `study run` end to end on a tiny study: a killed sitting resumes and leaves the ledger a straight run leaves.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliAsync, DATA_DIR, metrics, tmp } from './helpers.js';

if (DATA_DIR === undefined) console.log('study.test.ts skipped: set GRASSFLOW_DATA_DIR to the WikiText-2 data folder');

type Rec = Record<string, unknown> & { key: string; timing: Record<string, unknown> };
const ledger = (dir: string): Rec[] =>
  readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
// timing, and the commit (other work may be committed while a test runs), may differ between sittings
const untimed = (rs: Rec[]): Array<Record<string, unknown>> => rs.map(({ timing: _t, code: _c, ...r }) => r);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// A sitting of the three tiny runs spends most of its time scoring each on all of wiki.valid and wiki.test (≈ 190 s on
// the 2-core build machine alone, more beside other suites): its own limit, above the default CLI one.
const SITTING_MS = 540_000;

describe.skipIf(DATA_DIR === undefined)(
  'study run, status, report (tiny, WikiText-2; needs GRASSFLOW_DATA_DIR)',
  () => {
    const root = tmp();
    const study = join(root, 'tiny-study.json');
    writeFileSync(
      study,
      JSON.stringify({
        name: 'tiny',
        base: { preset: 'tiny', batch: 8, 'eval-tokens': 256, 'log-every': 1, warmup: 2, lr: 3e-3, 'eval-every': 3 },
        runs: [
          { model: 'grassmann', seed: 1, steps: 4 },
          { model: 'transformer-dpa', seed: 1, steps: 30, 'checkpoint-every': 1 },
          { model: 'grassmann', seed: 2, steps: 4 },
        ],
      }),
    );
    const sitting = (out: string): string[] => ['--out', out, '--runs', join(out, 'runs'), '--quiet'];
    const straight = join(root, 'straight');
    const killed = join(root, 'killed');

    it(
      'runs every run of the study into the ledger, one record each',
      () => {
        const r = cli(['study', 'run', study, ...sitting(straight)], SITTING_MS);
        expect(r.code, r.stderr).toBe(0);
        const recs = ledger(straight);
        expect(recs.map((x) => (x['flags'] as Record<string, unknown>)['model'])).toEqual([
          'grassmann',
          'transformer-dpa',
          'grassmann',
        ]);
        expect(new Set(recs.map((x) => x.key)).size).toBe(3);
        const second = recs[1]!;
        expect(second).toMatchObject({ study: 'tiny', totalSteps: 30, tokens: 30 * 8 * 16, backend: { name: 'wasm' } });
        const evals = metrics(join(straight, 'runs', second.key)).filter((m) => m['type'] === 'eval');
        expect(second['curve']).toEqual(evals.map((m) => [(m['step'] as number) * 128, m['val_ppl']]));
        expect(second['finalValPpl']).toBe(evals[evals.length - 1]!['val_ppl']);
        expect(second['bestValPpl']).toBe(Math.min(...evals.map((m) => m['val_ppl'] as number)));
        expect(second.timing['resumed']).toBe(false);
        expect(second['code']).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
        // the final checkpoint on every target of wiki.valid and wiki.test, with the NLL at each window position
        for (const rec of recs) {
          const held = rec['heldOut'] as Record<
            'valid' | 'test',
            { tokens: number; ppl: number; nll: number; nllByPosition: number[] }
          >;
          for (const split of ['valid', 'test'] as const) {
            expect(held[split].tokens).toBeGreaterThan(200_000); // all of the split, not the 256 validation tokens
            expect(held[split].ppl).toBeCloseTo(Math.exp(held[split].nll), 6);
            expect(held[split].nllByPosition).toHaveLength(16);
            expect(held[split].nllByPosition.every((v) => Number.isFinite(v) && v > 0)).toBe(true);
          }
          // the run folder's own record of it, which `export --from latest` puts on the model card
          const own = metrics(join(straight, 'runs', rec.key)).filter((m) => m['type'] === 'heldout');
          expect(own).toEqual([
            {
              type: 'heldout',
              step: rec.totalSteps,
              by: 'grassflow-lm study',
              val_ppl: held.valid.ppl,
              val_tokens: held.valid.tokens,
              test_ppl: held.test.ppl,
              test_tokens: held.test.tokens,
              whole_split: 1,
            },
          ]);
        }
        const tv = recs.map((x) => (x['heldOut'] as { test: { tokens: number } }).test.tokens);
        expect(new Set(tv).size).toBe(1); // every run scores the same targets
      },
      SITTING_MS + 60_000,
    );

    it(
      'a sitting killed mid-run continues from the checkpoint and ends with the same ledger',
      async () => {
        const child = cliAsync(['study', 'run', study, ...sitting(killed)]);
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise<void>((r) => child.on('exit', () => r()));
        // kill once run 2 (the one not in the ledger yet) has checkpoints and a few steps
        const deadline = Date.now() + 150_000;
        let victim: string | undefined;
        while (victim === undefined && Date.now() < deadline && child.exitCode === null) {
          await sleep(100);
          if (!existsSync(join(killed, 'ledger.jsonl')) || !existsSync(join(killed, 'runs'))) continue;
          const done = ledger(killed).map((x) => x.key);
          victim = readdirSync(join(killed, 'runs')).find((k) => {
            const dir = join(killed, 'runs', k);
            if (done.includes(k) || !existsSync(join(dir, 'checkpoints', 'latest', 'config.json'))) return false;
            return metrics(dir).some((m) => m['type'] === 'train' && (m['step'] as number) >= 5);
          });
        }
        child.kill('SIGKILL');
        await exited;
        expect(victim, stderr).toBeDefined();
        expect(ledger(killed).map((x) => x.key)).toEqual([ledger(straight)[0]!.key]);
        expect(victim).toBe(ledger(straight)[1]!.key);

        const r = cli(['study', 'run', study, ...sitting(killed)], SITTING_MS);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain('3 runs, 1 in');
        expect(r.stderr).toMatch(new RegExp(`run 1/2 ${victim}.*: resuming from its checkpoint`));
        expect(r.stderr).toMatch(/resuming .* at step \d+/);
        const recs = ledger(killed);
        expect(untimed(recs)).toEqual(untimed(ledger(straight)));
        expect(recs.map((x) => x.timing['resumed'])).toEqual([false, true, false]);

        const again = cli(['study', 'run', study, ...sitting(killed)], SITTING_MS);
        expect(again.code, again.stderr).toBe(0);
        expect(again.stderr).toContain('3 runs, 3 in');
        expect(again.stderr).not.toContain('backend:'); // nothing trained
        expect(ledger(killed)).toEqual(recs);

        const status = cli(['study', 'status', study, ...sitting(killed)]);
        expect(status.code, status.stderr).toBe(0);
        expect(status.stdout).toContain('3/3 runs in');
      },
      3 * SITTING_MS,
    );

    it('a second sitting on the same ledger is refused while the first runs (no run folder is touched)', async () => {
      const out = join(root, 'two-sittings');
      const first = cliAsync(['study', 'run', study, ...sitting(out)]);
      const exited = new Promise<void>((r) => first.on('exit', () => r()));
      const deadline = Date.now() + 60_000;
      while (!existsSync(join(out, '.grassflow-run.lock')) && Date.now() < deadline) await sleep(100);
      const second = cli(['study', 'run', study, ...sitting(out)]);
      first.kill('SIGKILL');
      await exited;
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toMatch(/is being written by pid \d+/);
      expect(second.stderr).not.toContain('starting it again');
    });

    it(
      'report: groups over seeds, a table and the curves as SVG and PNG',
      () => {
        const r = cli(['study', 'report', join(straight, 'ledger.jsonl')]);
        expect(r.code, r.stderr).toBe(0);
        // --runs, as the usage lists it for every subcommand (a report reads the ledger only)
        const withRuns = cli(['study', 'report', join(straight, 'ledger.jsonl'), '--runs', join(straight, 'runs')]);
        expect(withRuns.code, withRuns.stderr).toBe(0);
        const md = readFileSync(join(straight, 'report.md'), 'utf8');
        expect(md).toContain('# Study tiny');
        expect(md).toMatch(/\| grassmann \| 4 \| 2 \| 1 2 \|/); // steps 4, n 2, seeds 1 2
        expect(md).toMatch(/\| transformer-dpa \| 30 \| 1 \| 1 \|/);
        expect(md).toMatch(/\| unigram \| 255 \| [\d,.]+ \|/); // baselines on the runs' 255 validation targets
        expect(md).toMatch(/- grassmann, length.steps 4: mean final validation PPL [\d.]+, above unigram/);
        for (const f of ['curves-1.svg', 'curves-1.png', 'curves-2.svg', 'curves-2.png', 'by-position-3.svg']) {
          expect(existsSync(join(straight, f)), f).toBe(true);
        }
        expect(md).toContain('| valid PPL (all) | test PPL |');
        expect(md).toContain('Test PPL by position in the window');

        // rescore: a ledger from before held-out scoring gets the same scores from the runs' checkpoints
        const old = ledger(straight).map(({ heldOut: _h, ...rest }) => rest);
        const rescored = join(root, 'rescored');
        mkdirSync(rescored);
        writeFileSync(join(rescored, 'ledger.jsonl'), old.map((x) => `${JSON.stringify(x)}\n`).join(''));
        const rs = cli(['study', 'rescore', study, '--out', rescored, '--runs', join(straight, 'runs')], SITTING_MS);
        expect(rs.code, rs.stderr).toBe(0);
        expect(rs.stderr).toContain('3 rescored, 0 without a checkpoint');
        expect(ledger(rescored).map((x) => x['heldOut'])).toEqual(ledger(straight).map((x) => x['heldOut']));
        const bad = cli(['study', 'run', join(root, 'missing.json')]);
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('missing.json does not exist');
      },
      SITTING_MS + 60_000,
    );
  },
);

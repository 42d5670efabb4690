// A trainer checkpoint whose counters were edited together (step and the optimizer's step, 6 → 2): its tokensSeen and
// data position still say step 6, so `train --resume` refuses it before metrics.jsonl is cut back or a step is trained.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, TINY, tmp } from './helpers.js';

type Trainer = { step: number; tokensSeen: number; optimizer: { step: number } };

describe.skipIf(DATA_DIR === undefined)(
  'resume of a checkpoint whose counters disagree (needs GRASSFLOW_DATA_DIR)',
  () => {
    it('refuses step and optimizer step edited to 2 while tokensSeen and the data say 6, and keeps the metrics', () => {
      const run = join(tmp(), 'run');
      const args = ['train', '--model', 'grassmann', ...TINY, '--steps', '10', '--eval-every', '0', '--out', run];
      const first = cli([...args, '--stop-at-step', '6']);
      expect(first.code, first.stderr).toBe(0);
      const path = join(run, 'checkpoints/latest/config.json');
      const json = JSON.parse(readFileSync(path, 'utf8')) as { extra: { trainer: Trainer } };
      expect(json.extra.trainer).toMatchObject({ step: 6, tokensSeen: 6 * 8 * 16, optimizer: { step: 6 } });
      json.extra.trainer.step = 2;
      json.extra.trainer.optimizer.step = 2; // both counters, as the adversary edited them
      writeFileSync(path, JSON.stringify(json));
      const metricsBefore = readFileSync(join(run, 'metrics.jsonl'), 'utf8');

      const resumed = cli(['train', '--resume', run, '--quiet']);
      expect(resumed.code, resumed.stderr).toBe(1);
      const lines = resumed.stderr.trim().split('\n');
      expect(lines[lines.length - 1]).toMatch(
        /TrainerCheckpointError: \S+checkpoints\/latest: its trainer state says step 2 and 768 tokens seen, but it holds the data position of step 6 \(768 tokens\)/,
      );
      expect(resumed.stderr).toContain('restore the checkpoint, or resume from checkpoints/best');
      expect(resumed.stderr).not.toContain('unexpected error');
      expect(readFileSync(join(run, 'metrics.jsonl'), 'utf8')).toBe(metricsBefore); // steps 3-6 not cut away

      // tokensSeen edited alone (the step counters intact) is refused the same way
      json.extra.trainer.step = 6;
      json.extra.trainer.optimizer.step = 6;
      json.extra.trainer.tokensSeen = 5;
      writeFileSync(path, JSON.stringify(json));
      const tokens = cli(['train', '--resume', run, '--quiet']);
      expect(tokens.code, tokens.stderr).toBe(1);
      expect(tokens.stderr).toContain('says step 6 and 5 tokens seen, but it holds the data position of step 6');
    }, 240_000);
  },
);

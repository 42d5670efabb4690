// The root README's examples run as a user's project would run them: against the built packages, installed by name
// (this package's dependencies), one after another in one folder, since the training example writes the model folder
// that the loading example reads. If one fails, the README is wrong.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeExamples, runReadmeExample } from '../../../tooling/readme-examples.mjs';

const root = join(import.meta.dirname, '..', '..', '..');
const here = join(import.meta.dirname, '..');
const examples = readmeExamples(root);
const cwd = mkdtempSync(join(tmpdir(), 'grassflow-root-readme-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('the root README examples', () => {
  it('has the train, then the load and generate example', () => expect(examples.length).toBeGreaterThanOrEqual(2));
  const outputs: string[] = [];
  for (const ex of examples) {
    it.skipIf(ex.skip !== undefined)(`block ${ex.index} (README.md line ${ex.line})`, () => {
      const r = runReadmeExample(here, ex, { cwd });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      outputs.push(r.stdout);
    });
  }
  it('the trained model continues its training text', () => {
    // greedy generation from the model trained on "the cat sat on the mat and the dog sat on the log"
    expect(outputs.join('\n')).toMatch(/^the cat sat on the /m);
  });
});

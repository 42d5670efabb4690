// Every TypeScript/JavaScript example of this package's README runs, as a user would run it
// (tooling/readme-examples.mjs): if one fails, the README is wrong.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeExamples, runReadmeExample } from '../../../tooling/readme-examples.mjs';

const dir = join(import.meta.dirname, '..');
const examples = readmeExamples(dir);

describe('README examples', () => {
  it('the README has examples', () => expect(examples.length).toBeGreaterThan(0));
  for (const ex of examples) {
    const name = `block ${ex.index} (README.md line ${ex.line})${ex.skip === undefined ? '' : `, not run: ${ex.skip}`}`;
    it.skipIf(ex.skip !== undefined)(name, () => {
      const r = runReadmeExample(dir, ex);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    });
  }
});

// The one README-example suite every package runs (its test/readme.test.ts calls describeReadmeExamples): each
// TypeScript/JavaScript block of the package's README runs as a user would run it (readme-examples.mjs); if one
// fails, the README is wrong.
import { describe, expect, it } from 'vitest';
import { readmeExamples, runReadmeExample } from './readme-examples.mjs';

export function describeReadmeExamples(packageDir, { needsData = false, markdown = 'README.md' } = {}) {
  const examples = readmeExamples(packageDir, markdown);
  // examples that read WikiText-2 or the BERT vocabulary need GRASSFLOW_DATA_DIR
  const skip = needsData && process.env['GRASSFLOW_DATA_DIR'] === undefined;
  describe.skipIf(skip)(`${markdown} examples${needsData ? ' (needs GRASSFLOW_DATA_DIR)' : ''}`, () => {
    it(`${markdown} has examples`, () => expect(examples.length).toBeGreaterThan(0));
    for (const ex of examples) {
      const name = `block ${ex.index} (${markdown} line ${ex.line})${ex.skip === undefined ? '' : `, not run: ${ex.skip}`}`;
      it.skipIf(ex.skip !== undefined)(name, () => {
        const r = runReadmeExample(packageDir, ex);
        expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      });
    }
  });
}

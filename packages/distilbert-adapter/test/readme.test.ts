// Every TypeScript/JavaScript example of this package's README and of its guide (docs/distilbert-adapter.md) runs,
// as a user would run it: if one fails, the page is wrong (tooling/readme-tests.mjs).
import { join } from 'node:path';
import { describeReadmeExamples } from '../../../tooling/readme-tests.mjs';

const packageDir = join(import.meta.dirname, '..');
describeReadmeExamples(packageDir);
describeReadmeExamples(packageDir, { markdown: '../../docs/distilbert-adapter.md' });

// Every TypeScript/JavaScript example of this package's README runs, as a user would run it: if one fails, the
// README is wrong (tooling/readme-tests.mjs).
import { join } from 'node:path';
import { describeReadmeExamples } from '../../../tooling/readme-tests.mjs';

describeReadmeExamples(join(import.meta.dirname, '..'));

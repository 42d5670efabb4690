// The names each entry of this package exports are pinned in test/public-api.json: a new export, or a removed one, is
// a deliberate change made there too (tooling/public-api.mjs).
import { join } from 'node:path';
import { describePublicApi } from '../../../tooling/public-api.mjs';

describePublicApi(join(import.meta.dirname, '..'));

// examples/bundler: checked by tsc with moduleResolution bundler, bundled by esbuild (its build.mjs), run with node.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleDir, lastJson, pnpmRun } from './run.js';

describe('examples/bundler', () => {
  it('type-checks (strict, bundler), bundles, and generates the sentence it memorized', async () => {
    await pnpmRun('bundler', 'typecheck');
    await pnpmRun('bundler', 'build');
    const bundle = await readFile(join(exampleDir('bundler'), 'dist', 'main.js'), 'utf8');
    expect(bundle).not.toMatch(/from "@grassflow\//); // the @grassflow packages are inside the bundle
    expect(bundle).toMatch(/from "@tensorflow\/tfjs-core"/); // tfjs is not (build.mjs says why)
    const result = lastJson(await pnpmRun('bundler', 'start'));
    expect(result['loss']).toBeLessThan(0.5);
    expect(result['text']).toBe('the cat sat on the mat and the dog');
  });
});

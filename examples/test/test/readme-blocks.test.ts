// Every TypeScript/JavaScript block of the root and package READMEs and of their guides (docs/<package>.md)
// compiles under strict, as a user's file would against the built packages (module nodenext, skipLibCheck for
// tfjs's own .d.ts).
// The packages' README tests run the README blocks (tooling/readme-tests.mjs, with tsx, which does not type-check);
// blocks marked "not run", and the guide's, which no test runs, are compiled here too.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeExamples } from '../../../tooling/readme-examples.mjs';

const root = join(import.meta.dirname, '..', '..', '..');
// inside this package, so that the blocks' imports resolve to its dependencies as a user's project would
const dir = join(import.meta.dirname, '..', '.readme-blocks'); // not readme-examples.mjs's folder: both run at once
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('README code blocks', () => {
  it('every TS/JS block of the root and package READMEs and their guides compiles under strict', async () => {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    /** file name → where the block is */
    const where = new Map<string, string>();
    const sources = (await readdir(join(root, 'packages'))).map((pkg) => ({ name: pkg, dir: `packages/${pkg}` }));
    // a block imports its own package, which resolves only from this package's dependencies
    const own = JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const { dir: from } of sources) {
      const { name } = JSON.parse(await readFile(join(root, from, 'package.json'), 'utf8')) as { name: string };
      expect(own.devDependencies, `add "${name}": "workspace:*" to examples/test's devDependencies`).toHaveProperty([
        name,
      ]);
    }
    // the guides the package READMEs link to (docs/<package>.md), then the repository's front page
    const guides = sources.filter(({ name }) => existsSync(join(root, 'docs', `${name}.md`)));
    const pages = [
      ...sources.map((s) => ({ ...s, markdown: 'README.md' })),
      ...guides.map(({ name }) => ({ name: `docs-${name}`, dir: 'docs', markdown: `${name}.md` })),
      { name: 'root', dir: '.', markdown: 'README.md' },
    ];
    for (const { name, dir: from, markdown } of pages) {
      for (const ex of readmeExamples(join(root, from), markdown)) {
        // as readme-examples.mjs runs them: blocks that call require are CommonJS, the rest ES modules
        const cjs = ex.lang === 'cjs' || /\brequire\(/.test(ex.code);
        const file = `${name}-${ex.index}.${cjs ? 'cts' : 'mts'}`;
        await writeFile(join(dir, file), `${ex.code}\n${cjs ? '' : 'export {};\n'}`);
        where.set(file, `${from}/${markdown} line ${ex.line}`);
      }
    }
    expect(where.size).toBeGreaterThan(10);
    const config = {
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: true, // tfjs's own .d.ts (docs/gpu-layers.md, TypeScript settings)
        noEmit: true,
        types: ['node'],
      },
      files: [...where.keys()],
    };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const out = await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
      encoding: 'utf8',
    }).then(
      () => '',
      (err: { stdout?: string; message: string }) => err.stdout ?? err.message,
    );
    // name each error's README and line
    const errors = out
      .split('\n')
      .filter((l) => /error TS\d+/.test(l))
      .map((l) => `${where.get(l.split('(')[0]?.split('/').pop() ?? '') ?? '?'}: ${l}`);
    expect(errors).toEqual([]);
  });
});
